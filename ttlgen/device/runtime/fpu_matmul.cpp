// matmul_tile: the FPU's TF32 accumulation chain over one 32x32 tile, in a scalar
// reference and an AVX2+FMA path chosen at run time. The vector path keeps the running
// sums of several output rows in registers across the whole K loop, and across the
// calls of a chain on one tile (12 vectors, three whole rows, or 8 vectors, an 8-column
// strip of eight rows, for HiFi3) and rounds them with integer adds and masks. Those
// give the same bits as round_mantissa for every value a finite input can produce
// (finite values, Inf, and the default NaN of x86 arithmetic); operands with NaN or
// Inf take the scalar path, and so do the register blocks of a DST tile that hold
// one when a call starts. Also the bf16 operand unpack into row-major order, scalar
// and AVX2.
#include <immintrin.h>

#include <cstring>

#include "fpu.hpp"

namespace ttlemu {

namespace {

// Rows [i0, i1), columns [j0, j1) of the scalar reference.
__attribute__((noinline)) void rows_scalar(const MatmulOperands& op, float* d, const FpuAccum& f,
                                           int i0, int i1, int j0 = 0, int j1 = 32) {
    for (int i = i0; i < i1; ++i) {
        for (int j = j0; j < j1; ++j) {
            float& out = d[tile_index(i, j)];
            float s = out;
            for (int k = 0; k < 32; ++k) {
                if (op.ax == nullptr) {
                    s = fpu_mac(s, op.a[i * 32 + k], op.b[k * 32 + j], f);
                } else {
                    // HiFi3: both passes' products are added before the step's rounding.
                    const float t = std::fma(op.a[i * 32 + k], op.b[k * 32 + j], s);
                    s = fpu_mac(t, op.ax[i * 32 + k], op.bx[k * 32 + j], f);
                }
            }
            out = fpu_land(s, f);
        }
    }
}

// The row groups (fpu.hpp) of each path: eight rows for the scalar reference and
// HiFi3's AVX2 strips; 11, 11 and 10 for AVX2's single-pass blocks.
constexpr RowGroups kEights{4, {0, 8, 16, 24, 32}};
constexpr RowGroups kElevens{3, {0, 11, 22, 32, 32}};

// The scalar reference over group g of `rows`, for each of the n calls in turn.
void chain_scalar(const RowGroups& rows, const MatmulOperands* ops, int n, float* d,
                  const FpuAccum& f, int g) {
    for (int c = 0; c < n; ++c)
        rows_scalar(ops[c], d, f, rows.begin[g], rows.begin[g + 1]);
}

constexpr int kTf32Drop = 23 - kTf32Mantissa;
constexpr int kBf16Drop = 23 - kBf16Mantissa;

// The rounding as GCC vector arithmetic: the same integer add and mask as
// round_lanes, emitted as AVX2 instructions in these functions.
typedef uint32_t u8v __attribute__((vector_size(32)));
constexpr uint32_t kExpMask = 0x7f800000u;

// ---------------------------------------------------------------- AVX2 + FMA

template <Rounding kMode, int kDrop>
__attribute__((target("avx2,fma"))) inline __m256 round256(__m256 x) {
    constexpr uint32_t mask = ~((1u << kDrop) - 1u);
    constexpr uint32_t half = 1u << (kDrop - 1);
    u8v u = (u8v)x;
    if (kMode == Rounding::TiesAway)
        u += half;
    else if (kMode == Rounding::NearestEven)
        u += (half - 1u) + ((u >> kDrop) & 1u);
    // The mask as a floating-point AND (the same bits): its result feeds the next
    // FMA, and with the integer-domain AND the whole tile ran 1.5x slower on the
    // Zen 3 host (measured; data crossing between the two domains costs a cycle).
    return _mm256_and_ps((__m256)u, (__m256)(u8v{} + mask));
}

// HiFi3's two passes: one 8-wide column strip of kRows output rows, kRows
// accumulators. The TF32 rounding's integer add and mask double each accumulator's
// dependency chain (8 cycles a step against the FMA's 4, measured), more than 8
// chains hide; with B's and Bx's rows, A's and Ax's broadcast values and the two
// rounding constants, 8 is what the 16 AVX2 registers leave.
template <Rounding kMode, bool kDst16, int kRows>
__attribute__((target("avx2,fma"), always_inline)) inline void steps_hifi3_avx2(
    const MatmulOperands& op, int i0, int j0, __m256* c) {
    const float* a = op.a + i0 * 32;
    const float* ax = op.ax + i0 * 32;
    for (int k = 0; k < 32; ++k) {
        const __m256 b0 = _mm256_loadu_ps(op.b + k * 32 + j0);
        const __m256 bx0 = _mm256_loadu_ps(op.bx + k * 32 + j0);
#pragma GCC unroll 16
        for (int r = 0; r < kRows; ++r) {
            c[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + r * 32 + k), b0, c[r]);
            c[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(ax + r * 32 + k), bx0, c[r]);
            if (kDst16)
                c[r] = round256<kMode, kTf32Drop>(c[r]);
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r)
        if (kDst16)
            c[r] = round256<kMode, kBf16Drop>(c[r]);
}

// One pass: kRows whole output rows (all four 8-wide strips), 4 * kRows accumulators,
// so that each broadcast of an A value feeds four FMAs. With three rows, twelve
// accumulators, B's row segments (GCC folds three of them into the FMAs' memory
// operands), A's broadcast value and the two rounding constants fill the 16
// registers. Measured on the Zen 3 host against one strip of 11 rows (a broadcast
// per FMA, eleven chains): 1.05-1.12x faster; four rows need spills.
template <Rounding kMode, bool kDst16, int kRows>
__attribute__((target("avx2,fma"), always_inline)) inline void steps_avx2(const MatmulOperands& op,
                                                                          int i0, __m256* c) {
    const float* a = op.a + i0 * 32;
    for (int k = 0; k < 32; ++k) {
        __m256 b[4];
#pragma GCC unroll 4
        for (int s = 0; s < 4; ++s)
            b[s] = _mm256_loadu_ps(op.b + k * 32 + 8 * s);
#pragma GCC unroll 4
        for (int r = 0; r < kRows; ++r) {
            const __m256 av = _mm256_broadcast_ss(a + r * 32 + k);
#pragma GCC unroll 4
            for (int s = 0; s < 4; ++s) {
                c[4 * r + s] = _mm256_fmadd_ps(av, b[s], c[4 * r + s]);
                if (kDst16)
                    c[4 * r + s] = round256<kMode, kTf32Drop>(c[4 * r + s]);
            }
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < 4 * kRows; ++i)
        if (kDst16)
            c[i] = round256<kMode, kBf16Drop>(c[i]);
}

// The calls in turn on a register block of DST tile d: kRows rows from i0, the 8-wide
// strip from j0 (kHiFi3) or all four strips. The accumulators stay
// in registers while the calls' operands are finite; the scalar reference takes a call
// over the block's elements when its operands are not, or when the block held a NaN
// or Inf at the call's start that a vector step did not make.
template <Rounding kMode, bool kDst16, bool kHiFi3, int kRows>
__attribute__((target("avx2,fma"))) void block_chain_avx2(const MatmulOperands* ops, int n,
                                                          float* d, const FpuAccum& f, int i0,
                                                          int j0) {
    constexpr int kStrips = kHiFi3 ? 1 : 4;
    constexpr int kAcc = kRows * kStrips;
    const int j1 = kHiFi3 ? j0 + 8 : 32;
    for (int c = 0; c < n;) {
        if (!ops[c].finite) {
            rows_scalar(ops[c++], d, f, i0, i0 + kRows, j0, j1);
            continue;
        }
        // The loads and the check stay inline: a function taking the arrays' address
        // would keep the accumulators in memory.
        __m256 acc[kAcc];
        u8v special = {};
#pragma GCC unroll 16
        for (int i = 0; i < kAcc; ++i) {
            acc[i] = _mm256_loadu_ps(d + tile_index(i0 + i / kStrips, j0 + 8 * (i % kStrips)));
            special |= (u8v)(((u8v)acc[i] & kExpMask) == kExpMask);
        }
        if (_mm256_testz_si256((__m256i)special, (__m256i)special) == 0) {
            rows_scalar(ops[c++], d, f, i0, i0 + kRows, j0, j1);
            continue;
        }
        do {
            if (kHiFi3)
                steps_hifi3_avx2<kMode, kDst16, kRows>(ops[c++], i0, j0, acc);
            else
                steps_avx2<kMode, kDst16, kRows>(ops[c++], i0, acc);
        } while (c < n && ops[c].finite);
#pragma GCC unroll 16
        for (int i = 0; i < kAcc; ++i)
            _mm256_storeu_ps(d + tile_index(i0 + i / kStrips, j0 + 8 * (i % kStrips)), acc[i]);
    }
}

// Row group g of row_groups(Isa::Avx2, kHiFi3) for each call in turn.
template <Rounding kMode, bool kDst16, bool kHiFi3>
__attribute__((target("avx2,fma"))) void chain_avx2(const MatmulOperands* ops, int n, float* d,
                                                    const FpuAccum& f, int g) {
    const RowGroups& rows = kHiFi3 ? kEights : kElevens;
    const int i0 = rows.begin[g], i1 = rows.begin[g + 1];
    if (kHiFi3) {
        for (int j0 = 0; j0 < 32; j0 += 8)
            block_chain_avx2<kMode, kDst16, true, 8>(ops, n, d, f, i0, j0);
        return;
    }
    // Blocks of three rows, and of two where three would leave a single row (11 rows:
    // 3 + 3 + 3 + 2, 10 rows: 3 + 3 + 2 + 2).
    int i = i0;
    for (; i1 - i == 3 || i1 - i >= 5; i += 3)
        block_chain_avx2<kMode, kDst16, false, 3>(ops, n, d, f, i, 0);
    for (; i < i1; i += 2)
        block_chain_avx2<kMode, kDst16, false, 2>(ops, n, d, f, i, 0);
}

// ---------------------------------------------------------------- dispatch

using ChainFn = void (*)(const MatmulOperands*, int, float*, const FpuAccum&, int);

template <template <Rounding, bool, bool> class K>
ChainFn pick(const FpuAccum& f, bool hifi3) {
    if (!f.dst16)
        return hifi3 ? K<Rounding::TiesAway, false, true>::fn
                     : K<Rounding::TiesAway, false, false>::fn;
    switch (f.mode) {
    case Rounding::NearestEven:
        return hifi3 ? K<Rounding::NearestEven, true, true>::fn
                     : K<Rounding::NearestEven, true, false>::fn;
    case Rounding::Truncate:
        return hifi3 ? K<Rounding::Truncate, true, true>::fn
                     : K<Rounding::Truncate, true, false>::fn;
    default:
        return hifi3 ? K<Rounding::TiesAway, true, true>::fn
                     : K<Rounding::TiesAway, true, false>::fn;
    }
}

template <Rounding kMode, bool kDst16, bool kHiFi3>
struct Avx2 {
    static void fn(const MatmulOperands* ops, int n, float* d, const FpuAccum& f, int g) {
        chain_avx2<kMode, kDst16, kHiFi3>(ops, n, d, f, g);
    }
};

// ---------------------------------------------------------------- bf16 unpack

// One face row (16 values) per 256-bit load: widened to 32 bits and shifted into
// the high half, and its exponent fields compared with all ones.
__attribute__((target("avx2"))) bool bf16_row_major_avx2(const uint16_t* tile, float* rm) {
    const __m256i exp = _mm256_set1_epi16(0x7f80);
    __m256i special = _mm256_setzero_si256();
    for (int r = 0; r < 32; ++r) {
#pragma GCC unroll 2
        for (int c0 = 0; c0 < 32; c0 += 16) {
            const __m256i x =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + tile_index(r, c0)));
            special = _mm256_or_si256(special, _mm256_cmpeq_epi16(_mm256_and_si256(x, exp), exp));
            const __m256i lo =
                _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(x)), 16);
            const __m256i hi =
                _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(x, 1)), 16);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(rm + r * 32 + c0), lo);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(rm + r * 32 + c0 + 8), hi);
        }
    }
    return _mm256_testz_si256(special, special) != 0;
}

} // namespace

void matmul_tile_scalar(const MatmulOperands& op, float* d, const FpuAccum& f) {
    rows_scalar(op, d, f, 0, 32);
}

Isa best_isa() {
    // An AVX-512 path bought under 20 % at every K of bench/emulator.py (interleaved A/B,
    // issue 24) and was removed: AVX2 is the widest path.
    static const Isa isa = (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
                               ? Isa::Avx2
                               : Isa::Scalar;
    return isa;
}

RowGroups row_groups(Isa isa, bool hifi3) {
    return isa == Isa::Avx2 && !hifi3 ? kElevens : kEights;
}

void matmul_chain_isa(Isa isa, const MatmulOperands* ops, int n, float* d, const FpuAccum& f,
                      int g) {
    if (n == 0)
        return;
    // One call's HiFi3 operands decide the path: a batch never mixes fidelities.
    const bool hifi3 = ops[0].ax != nullptr;
    if (isa == Isa::Avx2) {
        pick<Avx2>(f, hifi3)(ops, n, d, f, g);
    } else {
        chain_scalar(row_groups(Isa::Scalar, hifi3), ops, n, d, f, g);
    }
}

void matmul_chain(const MatmulOperands* ops, int n, float* d, const FpuAccum& f, int g) {
    matmul_chain_isa(best_isa(), ops, n, d, f, g);
}

void matmul_group_isa(Isa isa, const MatmulOperands& op, float* d, const FpuAccum& f, int g) {
    matmul_chain_isa(isa, &op, 1, d, f, g);
}

void matmul_tile_isa(Isa isa, const MatmulOperands& op, float* d, const FpuAccum& f) {
    const int n = row_groups(isa, op.ax != nullptr).n;
    for (int g = 0; g < n; ++g)
        matmul_group_isa(isa, op, d, f, g);
}

void matmul_group(const MatmulOperands& op, float* d, const FpuAccum& f, int g) {
    matmul_chain(&op, 1, d, f, g);
}

void matmul_tile(const MatmulOperands& op, float* d, const FpuAccum& f) {
    const int n = row_groups(best_isa(), op.ax != nullptr).n;
    for (int g = 0; g < n; ++g)
        matmul_group(op, d, f, g);
}

bool bf16_row_major_scalar(const uint16_t* tile, float* rm) {
    uint16_t special = 0;
    for (int r = 0; r < 32; ++r) {
        for (int c = 0; c < 32; ++c) {
            const uint16_t h = tile[tile_index(r, c)];
            rm[r * 32 + c] = bf16_value(h);
            special |= static_cast<uint16_t>((h & 0x7f80u) == 0x7f80u);
        }
    }
    return special == 0;
}

bool bf16_row_major_isa(Isa isa, const uint16_t* tile, float* rm) {
    return isa == Isa::Scalar ? bf16_row_major_scalar(tile, rm) : bf16_row_major_avx2(tile, rm);
}

bool bf16_row_major(const uint16_t* tile, float* rm) {
    return bf16_row_major_isa(best_isa(), tile, rm);
}

} // namespace ttlemu
