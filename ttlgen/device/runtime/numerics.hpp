// Bit-level number formats of the Tensix data path. See ../NUMERICS.md for the
// model and the reasons for each default.
#pragma once
#include <cstdint>
#include <cstring>

namespace ttlemu {

enum class Rounding : int { TiesAway = 0, NearestEven = 1, Truncate = 2 };

inline uint32_t f2u(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float u2f(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Keep `keep` of the 23 fp32 mantissa bits. Works on the sign-magnitude bits, so
// "away" is away from zero, and a carry out of the mantissa correctly bumps the
// exponent (up to infinity).
inline float round_mantissa(float x, int keep, Rounding mode) {
    uint32_t u = f2u(x);
    const int drop = 23 - keep;
    const uint32_t mask = (1u << drop) - 1u;
    if ((u & 0x7f800000u) == 0x7f800000u) {
        // Inf stays Inf; a NaN must stay NaN after its low payload bits go.
        return (u & 0x007fffffu) ? u2f((u & ~mask) | 0x00400000u) : x;
    }
    const uint32_t rem = u & mask;
    u &= ~mask;
    const uint32_t half = 1u << (drop - 1);
    switch (mode) {
    case Rounding::Truncate:
        break;
    case Rounding::TiesAway:
        if (rem >= half)
            u += 1u << drop;
        break;
    case Rounding::NearestEven:
        if (rem > half || (rem == half && ((u >> drop) & 1u)))
            u += 1u << drop;
        break;
    }
    return u2f(u);
}

constexpr int kTf32Mantissa = 10; // SrcA/SrcB: 1 sign, 8 exponent, 10 mantissa
constexpr int kBf16Mantissa = 7;

// Narrow a double to float with round-to-odd, so that a later rounding to fewer
// bits rounds as if straight from the double (no double-rounding error).
inline float to_float_odd(double x) {
    float f = static_cast<float>(x);
    if (static_cast<double>(f) == x || x != x)
        return f;
    if ((f > 0.0f ? static_cast<double>(f) > x : static_cast<double>(f) < x))
        f = u2f(f2u(f) - 1u);
    return u2f(f2u(f) | 1u);
}

inline float to_bf16(float x, Rounding mode) {
    return round_mantissa(x, kBf16Mantissa, mode);
}
inline float to_tf32(float x, Rounding mode) {
    return round_mantissa(x, kTf32Mantissa, mode);
}

inline uint16_t bf16_bits(float already_rounded) {
    return static_cast<uint16_t>(f2u(already_rounded) >> 16);
}
inline float bf16_value(uint16_t bits) {
    return u2f(static_cast<uint32_t>(bits) << 16);
}

// Element (r, c) of a 32x32 tile stored as four 16x16 faces (f0 f1 / f2 f3),
// each face row-major: the order in L1 and in DST.
inline int tile_index(int r, int c) {
    return ((r >> 4) << 9) | ((c >> 4) << 8) | ((r & 15) << 4) | (c & 15);
}

constexpr int kTileElems = 1024;

// Bfp8_b tile: 64 shared exponents (one per 16 consecutive elements in face
// order), then 1024 bytes of sign (bit 7) | 7-bit magnitude m:
// value = m / 64 * 2^(exp - 127).
constexpr uint32_t kBfp8TileBytes = 1024 + 64;

typedef uint32_t u4 __attribute__((vector_size(16)));

// round_mantissa on four lanes (GCC vector extensions, SSE2): same results as
// the scalar version, including NaN and Inf handling.
inline u4 round_lanes(u4 u, int keep, Rounding mode) {
    const int drop = 23 - keep;
    const uint32_t mask = (1u << drop) - 1u;
    const uint32_t half = 1u << (drop - 1);
    u4 add;
    if (mode == Rounding::Truncate) {
        add = u4{0, 0, 0, 0};
    } else if (mode == Rounding::TiesAway) {
        add = u4{half, half, half, half};
    } else {
        add = (half - 1u) + ((u >> drop) & 1u);
    }
    const u4 rounded = (u + add) & ~mask;
    // Only a NaN can change class (its payload may round away to Inf); Inf has
    // an all-zero mantissa, so every mode leaves it alone.
    typedef int32_t s4 __attribute__((vector_size(16)));
    const u4 nan = (u4)((s4)(u & 0x7fffffffu) > 0x7f800000);
    return (nan & ((u | 0x00400000u) & ~mask)) | (~nan & rounded);
}

// round_mantissa over a block; with keep2 > 0 a second rounding follows in the
// same pass (TF32 then bf16 for a 16-bit DST).
inline void round_block(float* x, int n, int keep, Rounding mode, int keep2 = 0) {
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        u4 u;
        std::memcpy(&u, x + i, sizeof u);
        u = round_lanes(u, keep, mode);
        if (keep2 > 0)
            u = round_lanes(u, keep2, mode);
        std::memcpy(x + i, &u, sizeof u);
    }
    for (; i < n; ++i) {
        x[i] = round_mantissa(x[i], keep, mode);
        if (keep2 > 0)
            x[i] = round_mantissa(x[i], keep2, mode);
    }
}

} // namespace ttlemu
