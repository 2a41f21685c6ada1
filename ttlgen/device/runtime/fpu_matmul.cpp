// matmul_tile: the FPU's TF32 accumulation chain over one 32x32 tile, in a scalar
// reference and two vector paths (AVX2+FMA, AVX-512) chosen at run time. The vector
// paths keep 8 (AVX-512) or 4 (AVX2) output rows of running sums in registers across
// the whole K loop and round them with integer adds and masks, which give the same
// bits as round_mantissa for every value a finite input can produce (finite values,
// Inf, and the default NaN of x86 arithmetic). Inputs with NaN or Inf take the scalar
// path (see matmul_tile).
#include <immintrin.h>

#include <cstring>

#include "fpu.hpp"

namespace ttlemu {

namespace {

bool all_finite(const float* x, int n) {
    uint32_t bad = 0;
    for (int i = 0; i < n; ++i) {
        uint32_t u;
        std::memcpy(&u, x + i, 4);
        bad |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u);
    }
    return bad == 0;
}

bool inputs_finite(const MatmulOperands& op, const float* d) {
    return all_finite(op.a, kTileElems) && all_finite(op.b, kTileElems) &&
           (op.ax == nullptr || all_finite(op.ax, kTileElems)) &&
           (op.bx == nullptr || all_finite(op.bx, kTileElems)) && all_finite(d, kTileElems);
}

constexpr int kTf32Drop = 23 - kTf32Mantissa;
constexpr int kBf16Drop = 23 - kBf16Mantissa;

// ---------------------------------------------------------------- AVX-512

// The rounding as GCC vector arithmetic: the same integer add and mask as
// round_lanes, emitted as AVX-512 / AVX2 instructions in these functions.
typedef uint32_t u16v __attribute__((vector_size(64)));
typedef uint32_t u8v __attribute__((vector_size(32)));

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
__attribute__((target("avx512f"))) void tile_avx512(const MatmulOperands& op, float* d) {
    for (int i0 = 0; i0 < 32; i0 += 8) {
        __m512 lo[8], hi[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) {
            lo[r] = _mm512_loadu_ps(d + tile_index(i0 + r, 0));
            hi[r] = _mm512_loadu_ps(d + tile_index(i0 + r, 16));
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

// One 16-wide half of four output rows at a time: 8 accumulators.
template <Rounding kMode, bool kDst16, bool kHiFi3>
__attribute__((target("avx2,fma"))) void tile_avx2(const MatmulOperands& op, float* d) {
    for (int half = 0; half < 32; half += 16) {
        for (int i0 = 0; i0 < 32; i0 += 4) {
            __m256 c[4][2];
#pragma GCC unroll 4
            for (int r = 0; r < 4; ++r) {
                c[r][0] = _mm256_loadu_ps(d + tile_index(i0 + r, half));
                c[r][1] = _mm256_loadu_ps(d + tile_index(i0 + r, half) + 8);
            }
            const float* a = op.a + i0 * 32;
            const float* ax = kHiFi3 ? op.ax + i0 * 32 : nullptr;
            for (int k = 0; k < 32; ++k) {
                const __m256 b0 = _mm256_loadu_ps(op.b + k * 32 + half);
                const __m256 b1 = _mm256_loadu_ps(op.b + k * 32 + half + 8);
                __m256 bx0 = b0, bx1 = b1;
                if (kHiFi3) {
                    bx0 = _mm256_loadu_ps(op.bx + k * 32 + half);
                    bx1 = _mm256_loadu_ps(op.bx + k * 32 + half + 8);
                }
#pragma GCC unroll 4
                for (int r = 0; r < 4; ++r) {
                    const __m256 av = _mm256_set1_ps(a[r * 32 + k]);
                    c[r][0] = _mm256_fmadd_ps(av, b0, c[r][0]);
                    c[r][1] = _mm256_fmadd_ps(av, b1, c[r][1]);
                    if (kHiFi3) {
                        const __m256 axv = _mm256_set1_ps(ax[r * 32 + k]);
                        c[r][0] = _mm256_fmadd_ps(axv, bx0, c[r][0]);
                        c[r][1] = _mm256_fmadd_ps(axv, bx1, c[r][1]);
                    }
                    if (kDst16) {
                        c[r][0] = round256<kMode, kTf32Drop>(c[r][0]);
                        c[r][1] = round256<kMode, kTf32Drop>(c[r][1]);
                    }
                }
            }
#pragma GCC unroll 4
            for (int r = 0; r < 4; ++r) {
                if (kDst16) {
                    c[r][0] = round256<kMode, kBf16Drop>(c[r][0]);
                    c[r][1] = round256<kMode, kBf16Drop>(c[r][1]);
                }
                _mm256_storeu_ps(d + tile_index(i0 + r, half), c[r][0]);
                _mm256_storeu_ps(d + tile_index(i0 + r, half) + 8, c[r][1]);
            }
        }
    }
}

// ---------------------------------------------------------------- dispatch

using TileFn = void (*)(const MatmulOperands&, float*);

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
    static void fn(const MatmulOperands& op, float* d) {
        tile_avx512<kMode, kDst16, kHiFi3>(op, d);
    }
};
template <Rounding kMode, bool kDst16, bool kHiFi3>
struct Avx2 {
    static void fn(const MatmulOperands& op, float* d) { tile_avx2<kMode, kDst16, kHiFi3>(op, d); }
};

} // namespace

void matmul_tile_scalar(const MatmulOperands& op, float* d, const FpuAccum& f) {
    for (int i = 0; i < 32; ++i) {
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
        pick<Avx512>(f, hifi3)(op, d);
    } else if (isa == Isa::Avx2) {
        pick<Avx2>(f, hifi3)(op, d);
    } else {
        matmul_tile_scalar(op, d, f);
    }
}

void matmul_tile(const MatmulOperands& op, float* d, const FpuAccum& f) {
    matmul_tile_isa(inputs_finite(op, d) ? best_isa() : Isa::Scalar, op, d, f);
}

} // namespace ttlemu
