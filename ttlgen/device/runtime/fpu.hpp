// The FPU's accumulation into DST (matmul, reduce): the calibrated mechanism of
// ../NUMERICS.md "FPU accumulation". Pure functions of their arguments, free of
// emulator state, so that tests can hold every vector path to the scalar one.
#pragma once
#include <cmath>

#include "numerics.hpp"

namespace ttlemu {

// How an FPU accumulation rounds, from the compute config and Numerics.
struct FpuAccum {
    // 16-bit DST: every sum is rounded to TF32 and the result lands in DST as bf16,
    // both with `mode`. 32-bit DST: fp32 sums, no narrowing.
    bool dst16 = true;
    Rounding mode = Rounding::TiesAway;
};

// One accumulation step: the exact product a*b is added to the running sum s with
// one fp32 rounding (a fused multiply-add; products of SrcA/SrcB values are exact
// in fp32), then, for a 16-bit DST, the sum is rounded to TF32.
inline float fpu_mac(float s, float a, float b, const FpuAccum& f) {
    const float t = std::fma(a, b, s);
    return f.dst16 ? round_mantissa(t, kTf32Mantissa, f.mode) : t;
}
// The accumulated value lands in DST: bf16 for a 16-bit DST.
inline float fpu_land(float s, const FpuAccum& f) {
    return f.dst16 ? round_mantissa(s, kBf16Mantissa, f.mode) : s;
}

// Operands of one 32x32 matmul tile, as the multiplier sees them for the configured
// fidelity (row-major): P = A @ B, with HiFi3's second pass Ax @ Bx added after the
// first pass's product in the same step (Ax, Bx null otherwise).
struct MatmulOperands {
    const float* a;  // in0 (SrcB): A[i][k] at a[i * 32 + k]
    const float* b;  // in1 (SrcA): B[k][j] at b[k * 32 + j]
    const float* ax; // HiFi3 only
    const float* bx;
    bool finite; // all of a, b, ax, bx are finite (all_finite)
};

// No NaN or Inf among x[0..n); n a multiple of 4.
inline bool all_finite(const float* x, int n) {
    typedef uint32_t u4a __attribute__((vector_size(16), aligned(4), may_alias));
    u4 any = {0, 0, 0, 0};
    for (int i = 0; i < n; i += 4) {
        const u4 u = *reinterpret_cast<const u4a*>(x + i);
        any |= (u4)((u & 0x7f800000u) == 0x7f800000u);
    }
    return (any[0] | any[1] | any[2] | any[3]) == 0;
}

// DST tile d (face layout) += A @ B: for every element, the running sum starts at
// DST's value, each of the 32 products is added in turn with fpu_mac (k = 0..31),
// and the result lands with fpu_land. Uses the widest vector unit of the host
// (the scalar path for non-finite operands, op.finite false, and for the rows of d
// that hold NaN or Inf); every path gives the same bits as matmul_tile_scalar.
void matmul_tile(const MatmulOperands& op, float* d, const FpuAccum& f);
void matmul_tile_scalar(const MatmulOperands& op, float* d, const FpuAccum& f);

// The vector paths this host can run (AVX2 + FMA, scalar), for tests.
enum class Isa { Scalar, Avx2 };
Isa best_isa();
void matmul_tile_isa(Isa isa, const MatmulOperands& op, float* d, const FpuAccum& f);

// A tile's output rows are independent accumulations, taken in n groups, group g being
// rows [begin[g], begin[g+1]), each in register blocks that never cross a group: the
// vector path checks a block's DST values for NaN and Inf when it loads them (the
// scalar reference takes the call over the block if it finds one). Work can be split
// by group as finely as by tile, with the same bits.
constexpr int kMaxRowGroups = 4;
struct RowGroups {
    int n;
    int begin[kMaxRowGroups + 1];
};
RowGroups row_groups(Isa isa, bool hifi3);
// Group g of matmul_tile_isa(isa, ...) / of matmul_tile (the groups of best_isa(); the
// scalar reference over the same rows when op.finite is false). matmul_tile is its
// groups in turn.
void matmul_group_isa(Isa isa, const MatmulOperands& op, float* d, const FpuAccum& f, int g);
void matmul_group(const MatmulOperands& op, float* d, const FpuAccum& f, int g);
// matmul_group of ops[0], then ops[1], ... ops[n - 1] on the same tile and group: the
// same bits, with each register block's sums kept in registers from one call to the
// next (a chain of K calls on one DST tile loads and stores them once, not K times).
// All n calls have the same fidelity.
void matmul_chain_isa(Isa isa, const MatmulOperands* ops, int n, float* d, const FpuAccum& f,
                      int g);
void matmul_chain(const MatmulOperands* ops, int n, float* d, const FpuAccum& f, int g);

// A bf16 tile (face layout, as in L1) decoded into row-major fp32 values (exact), as
// matmul's operands are kept; returns whether every value is finite. The vector path
// (AVX2, used from Isa::Avx2 up) gives the scalar one's values and answer.
bool bf16_row_major(const uint16_t* tile, float* rm);
bool bf16_row_major_scalar(const uint16_t* tile, float* rm);
bool bf16_row_major_isa(Isa isa, const uint16_t* tile, float* rm);

} // namespace ttlemu
