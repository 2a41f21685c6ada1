// Unpacker: CB tiles to values. FPU operands pass through the 19-bit SrcA/SrcB
// registers; math fidelity then limits which operand bits the multiplier sees.
#pragma once
#include <cmath>

#include "fpu.hpp"
#include "state.hpp"

namespace ttlemu {

// A tile of `cb` the consumer has waited for; checks the CB, the waited count,
// that the CB is not UnpackToDestFp32 when `fpu` and the configured unpack format.
const uint8_t* read_tile(uint32_t cb, uint32_t tile, const char* call, bool fpu, bool srca);
void decode_tile(DataFormat format, const uint8_t* data, float* out);
// decode_tile plus the SrcA/SrcB narrowing to TF32.
void unpack_src(uint32_t cb, const uint8_t* data, float* out);

// Multiplier operand split: per pass it sees the hidden bit plus this many
// high mantissa bits of SrcA and SrcB (the 5x7-bit multiplier).
constexpr int kSrcAHiBits = 4;
constexpr int kSrcBHiBits = 6;
inline float hi_bits(float x, int bits) {
    return round_mantissa(x, bits, Rounding::Truncate);
}

// MathFidelity as the compute config encodes it (0 LoFi, 2 HiFi2, 3 HiFi3, 4 HiFi4) and
// the number of multiplier passes (phases) each runs.
constexpr int kLoFi = 0;
inline int fidelity_phases(int fidelity) {
    return fidelity < 1 ? 1 : fidelity;
}

// SrcA * SrcB as the fidelity passes compute it: LoFi = hiA*hiB, HiFi2 adds
// loA*hiB, HiFi3 adds hiA*loB, HiFi4 adds loA*loB (all bits).
inline float fidelity_mul(float a, float b, int fidelity) {
    switch (fidelity) {
    case 0:
        return hi_bits(a, kSrcAHiBits) * hi_bits(b, kSrcBHiBits);
    case 2:
        return a * hi_bits(b, kSrcBHiBits);
    case 3: {
        const float bh = hi_bits(b, kSrcBHiBits);
        return a * bh + hi_bits(a, kSrcAHiBits) * (b - bh);
    }
    default:
        return a * b;
    }
}

// One FPU accumulation step (fpu_mac) of SrcA a times SrcB b as the fidelity passes
// form the product; HiFi3's second-pass product is added before the step's
// rounding, as in matmul_tile.
inline float fpu_mac_fidelity(float s, float a, float b, int fidelity, const FpuAccum& f) {
    switch (fidelity) {
    case 0:
        return fpu_mac(s, hi_bits(a, kSrcAHiBits), hi_bits(b, kSrcBHiBits), f);
    case 2:
        return fpu_mac(s, a, hi_bits(b, kSrcBHiBits), f);
    case 3: {
        const float bh = hi_bits(b, kSrcBHiBits);
        return fpu_mac(std::fma(a, bh, s), hi_bits(a, kSrcAHiBits), b - bh, f);
    }
    default:
        return fpu_mac(s, a, b, f);
    }
}

} // namespace ttlemu
