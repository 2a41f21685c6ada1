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

// Packer L1 accumulation into a bf16 page: l1 = bf16(l1 + v), the exact sum rounded
// once with `mode`. The float sum s and its exact error (TwoSum: s + err == l1 + v)
// give the round-to-odd float of the exact sum, which the bf16 rounding then rounds
// as if it were the exact sum. An overflowing sum of finite values rounds to Inf
// (or, truncating, to the largest finite bf16); Inf and NaN operands add as floats.
inline uint16_t l1_add_bf16(uint16_t l1, float v, Rounding mode) {
    const float a = bf16_value(l1);
    const float s = a + v;
    const uint32_t su = f2u(s);
    if ((su & 0x7f800000u) == 0x7f800000u) {
        const bool finite_operands =
            (f2u(a) & 0x7f800000u) != 0x7f800000u && (f2u(v) & 0x7f800000u) != 0x7f800000u;
        if (finite_operands) {
            const uint32_t sign = (su >> 16) & 0x8000u;
            return static_cast<uint16_t>(sign | (mode == Rounding::Truncate ? 0x7f7fu : 0x7f80u));
        }
        return bf16_bits(to_bf16(s, mode));
    }
    const float bb = s - a;
    const float err = (a - (s - bb)) + (v - bb);
    uint32_t u = su;
    if (err != 0.0f) // truncation of the exact sum (s, or s less one unit), last bit set
        u = (u - (((u ^ f2u(err)) >> 31) & 1u)) | 1u;
    return bf16_bits(to_bf16(u2f(u), mode));
}

// l1_add_bf16 over n elements (n a multiple of 4), four lanes at a time; a group of
// lanes with a non-finite operand or sum takes the scalar function.
inline void l1_add_bf16_block(uint16_t* l1, const float* v, int n, Rounding mode) {
    typedef float f4 __attribute__((vector_size(16)));
    typedef int32_t s4 __attribute__((vector_size(16)));
    for (int i = 0; i < n; i += 4) {
        u4 lu = {static_cast<uint32_t>(l1[i]) << 16, static_cast<uint32_t>(l1[i + 1]) << 16,
                 static_cast<uint32_t>(l1[i + 2]) << 16, static_cast<uint32_t>(l1[i + 3]) << 16};
        f4 a, b;
        std::memcpy(&a, &lu, sizeof a);
        std::memcpy(&b, v + i, sizeof b);
        const f4 s = a + b;
        const f4 bb = s - a;
        const f4 err = (a - (s - bb)) + (b - bb);
        u4 su, au, bu;
        std::memcpy(&su, &s, sizeof su);
        std::memcpy(&au, &a, sizeof au);
        std::memcpy(&bu, &b, sizeof bu);
        const u4 special = (u4)((su & 0x7f800000u) == 0x7f800000u) |
                           (u4)((au & 0x7f800000u) == 0x7f800000u) |
                           (u4)((bu & 0x7f800000u) == 0x7f800000u);
        if (special[0] | special[1] | special[2] | special[3]) {
            for (int j = i; j < i + 4; ++j)
                l1[j] = l1_add_bf16(l1[j], v[j], mode);
            continue;
        }
        u4 eu;
        std::memcpy(&eu, &err, sizeof eu);
        // Inexact: the exact sum lies beyond s (same sign as s: s is its truncation)
        // or short of it (then its truncation is s less one unit); either way odd.
        const u4 inexact = (u4)(err != f4{0.0f, 0.0f, 0.0f, 0.0f});
        const u4 shorter = (u4)((s4)((su ^ eu) & 0x80000000u) != s4{0, 0, 0, 0});
        const u4 odd = ((su - (shorter & 1u)) | 1u);
        const u4 r = round_lanes((inexact & odd) | (~inexact & su), kBf16Mantissa, mode);
        for (int j = 0; j < 4; ++j)
            l1[i + j] = static_cast<uint16_t>(r[j] >> 16);
    }
}

} // namespace ttlemu
