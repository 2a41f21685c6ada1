// matmul_tile: the FPU's TF32 accumulation chain over one 32x32 tile, in a scalar
// reference and two vector paths (AVX2+FMA, AVX-512) chosen at run time. The vector
// paths keep the running sums of eight output rows in registers across the whole K
// loop (AVX-512: 16 vectors, both column halves; AVX2: 8 vectors, an 8-column strip)
// and round them with integer adds and masks. Those give the same bits as
// round_mantissa for every value a finite input can produce (finite values, Inf, and
// the default NaN of x86 arithmetic); operands with NaN or Inf take the scalar path,
// and so do the rows of a DST tile that hold one.
#include <immintrin.h>

#include <cstring>

#include "fpu.hpp"

namespace ttlemu {

namespace {

// Rows [i0, i1) of the scalar reference.
__attribute__((noinline)) void rows_scalar(const MatmulOperands& op, float* d, const FpuAccum& f,
                                           int i0, int i1) {
    for (int i = i0; i < i1; ++i) {
        for (int j = 0; j < 32; ++j) {
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

constexpr int kTf32Drop = 23 - kTf32Mantissa;
constexpr int kBf16Drop = 23 - kBf16Mantissa;

// No NaN or Inf in rows [i0, i1) of DST tile d.
bool rows_finite(const float* d, int i0, int i1) {
    for (int i = i0; i < i1; ++i) {
        if (!all_finite(d + tile_index(i, 0), 16) || !all_finite(d + tile_index(i, 16), 16))
            return false;
    }
    return true;
}

// ---------------------------------------------------------------- AVX-512

// The rounding as GCC vector arithmetic: the same integer add and mask as
// round_lanes, emitted as AVX-512 / AVX2 instructions in these functions.
typedef uint32_t u16v __attribute__((vector_size(64)));
typedef uint32_t u8v __attribute__((vector_size(32)));
constexpr uint32_t kExpMask = 0x7f800000u;

template <Rounding kMode, int kDrop>
__attribute__((target("avx512f"))) inline __m512 round512(__m512 x) {
    constexpr uint32_t mask = ~((1u << kDrop) - 1u);
    constexpr uint32_t half = 1u << (kDrop - 1);
    u16v u = (u16v)x;
    if (kMode == Rounding::TiesAway)
        u += half;
    else if (kMode == Rounding::NearestEven)
        u += (half - 1u) + ((u >> kDrop) & 1u);
    return (__m512)(u & mask);
}

// Eight output rows at a time: 16 accumulators (two 16-wide halves per row).
template <Rounding kMode, bool kDst16, bool kHiFi3>
__attribute__((target("avx512f"))) void tile_avx512(const MatmulOperands& op, float* d,
                                                    const FpuAccum& f) {
    for (int i0 = 0; i0 < 32; i0 += 8) {
        __m512 lo[8], hi[8];
        u16v special = {};
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) {
            lo[r] = _mm512_loadu_ps(d + tile_index(i0 + r, 0));
            hi[r] = _mm512_loadu_ps(d + tile_index(i0 + r, 16));
            special |= (u16v)(((u16v)lo[r] & kExpMask) == kExpMask);
            special |= (u16v)(((u16v)hi[r] & kExpMask) == kExpMask);
        }
        if (_mm512_test_epi32_mask((__m512i)special, (__m512i)special) != 0) {
            rows_scalar(op, d, f, i0, i0 + 8);
            continue;
        }
        const float* a = op.a + i0 * 32;
        const float* ax = kHiFi3 ? op.ax + i0 * 32 : nullptr;
        for (int k = 0; k < 32; ++k) {
            const __m512 b0 = _mm512_loadu_ps(op.b + k * 32);
            const __m512 b1 = _mm512_loadu_ps(op.b + k * 32 + 16);
            __m512 bx0 = b0, bx1 = b1;
            if (kHiFi3) {
                bx0 = _mm512_loadu_ps(op.bx + k * 32);
                bx1 = _mm512_loadu_ps(op.bx + k * 32 + 16);
            }
#pragma GCC unroll 8
            for (int r = 0; r < 8; ++r) {
                const __m512 av = _mm512_set1_ps(a[r * 32 + k]);
                lo[r] = _mm512_fmadd_ps(av, b0, lo[r]);
                hi[r] = _mm512_fmadd_ps(av, b1, hi[r]);
                if (kHiFi3) {
                    const __m512 axv = _mm512_set1_ps(ax[r * 32 + k]);
                    lo[r] = _mm512_fmadd_ps(axv, bx0, lo[r]);
                    hi[r] = _mm512_fmadd_ps(axv, bx1, hi[r]);
                }
                if (kDst16) {
                    lo[r] = round512<kMode, kTf32Drop>(lo[r]);
                    hi[r] = round512<kMode, kTf32Drop>(hi[r]);
                }
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) {
            if (kDst16) {
                lo[r] = round512<kMode, kBf16Drop>(lo[r]);
                hi[r] = round512<kMode, kBf16Drop>(hi[r]);
            }
            _mm512_storeu_ps(d + tile_index(i0 + r, 0), lo[r]);
            _mm512_storeu_ps(d + tile_index(i0 + r, 16), hi[r]);
        }
    }
}

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
    return (__m256)(u & mask);
}

// One 8-wide column strip of eight output rows at a time: 8 accumulators, few
// enough for the 16 AVX2 registers.
template <Rounding kMode, bool kDst16, bool kHiFi3>
__attribute__((target("avx2,fma"))) void tile_avx2(const MatmulOperands& op, float* d,
                                                   const FpuAccum& f) {
    bool scalar[4];
    for (int g = 0; g < 4; ++g)
        scalar[g] = !rows_finite(d, 8 * g, 8 * g + 8);
    for (int j0 = 0; j0 < 32; j0 += 8) {
        for (int i0 = 0; i0 < 32; i0 += 8) {
            if (scalar[i0 / 8])
                continue;
            __m256 c[8];
#pragma GCC unroll 8
            for (int r = 0; r < 8; ++r)
                c[r] = _mm256_loadu_ps(d + tile_index(i0 + r, j0));
            const float* a = op.a + i0 * 32;
            const float* ax = kHiFi3 ? op.ax + i0 * 32 : nullptr;
            for (int k = 0; k < 32; ++k) {
                const __m256 b0 = _mm256_loadu_ps(op.b + k * 32 + j0);
                __m256 bx0 = b0;
                if (kHiFi3)
                    bx0 = _mm256_loadu_ps(op.bx + k * 32 + j0);
#pragma GCC unroll 8
                for (int r = 0; r < 8; ++r) {
                    c[r] = _mm256_fmadd_ps(_mm256_set1_ps(a[r * 32 + k]), b0, c[r]);
                    if (kHiFi3)
                        c[r] = _mm256_fmadd_ps(_mm256_set1_ps(ax[r * 32 + k]), bx0, c[r]);
                    if (kDst16)
                        c[r] = round256<kMode, kTf32Drop>(c[r]);
                }
            }
#pragma GCC unroll 8
            for (int r = 0; r < 8; ++r) {
                if (kDst16)
                    c[r] = round256<kMode, kBf16Drop>(c[r]);
                _mm256_storeu_ps(d + tile_index(i0 + r, j0), c[r]);
            }
        }
    }
    // Row groups holding NaN or Inf in DST go through the scalar reference.
    for (int g = 0; g < 4; ++g) {
        if (scalar[g])
            rows_scalar(op, d, f, 8 * g, 8 * g + 8);
    }
}

// ---------------------------------------------------------------- dispatch

using TileFn = void (*)(const MatmulOperands&, float*, const FpuAccum&);

template <template <Rounding, bool, bool> class K>
TileFn pick(const FpuAccum& f, bool hifi3) {
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
struct Avx512 {
    static void fn(const MatmulOperands& op, float* d, const FpuAccum& f) {
        tile_avx512<kMode, kDst16, kHiFi3>(op, d, f);
    }
};
template <Rounding kMode, bool kDst16, bool kHiFi3>
struct Avx2 {
    static void fn(const MatmulOperands& op, float* d, const FpuAccum& f) {
        tile_avx2<kMode, kDst16, kHiFi3>(op, d, f);
    }
};

} // namespace

void matmul_tile_scalar(const MatmulOperands& op, float* d, const FpuAccum& f) {
    rows_scalar(op, d, f, 0, 32);
}

Isa best_isa() {
    static const Isa isa = __builtin_cpu_supports("avx512f") ? Isa::Avx512
                           : (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
                               ? Isa::Avx2
                               : Isa::Scalar;
    return isa;
}

void matmul_tile_isa(Isa isa, const MatmulOperands& op, float* d, const FpuAccum& f) {
    const bool hifi3 = op.ax != nullptr;
    if (isa == Isa::Avx512) {
        pick<Avx512>(f, hifi3)(op, d, f);
    } else if (isa == Isa::Avx2) {
        pick<Avx2>(f, hifi3)(op, d, f);
    } else {
        matmul_tile_scalar(op, d, f);
    }
}

void matmul_tile(const MatmulOperands& op, float* d, const FpuAccum& f) {
    matmul_tile_isa(op.finite ? best_isa() : Isa::Scalar, op, d, f);
}

} // namespace ttlemu
