// DST register file: the acquire/commit/wait/release hand-over between the math
// and pack threads, capacity per width and sync mode, and how values are stored.
#pragma once
#include <string>

#include "fpu.hpp"
#include "state.hpp"

namespace ttlemu {

std::string dst_state();
// DST tile `index` of the half math holds, with every recorded matmul landed in it
// (matmul_flush); checks acquire and capacity.
float* dst_math(uint32_t index, const char* call);
// The checks of dst_math alone (a matmul records work rather than reading DST).
void dst_math_check(uint32_t index, const char* call);
void check_dst_range(uint32_t first, uint32_t count, const char* call);
// Lands the matmul calls recorded since the last flush in DST (matmul.cpp). Anything
// that reads or writes DST other than a matmul calls this first.
void matmul_flush();

// FPU results reach a 16-bit DST through TF32 and then bf16 rounding.
inline float store_fpu(float v) {
    if (g.cfg.fp32_dest_acc_en)
        return v;
    return to_bf16(to_tf32(v, g.cfg.dst16_rounding), g.cfg.dst16_rounding);
}
// How FPU accumulations (matmul, reduce) round under the current config.
inline FpuAccum fpu_accum() {
    return FpuAccum{!g.cfg.fp32_dest_acc_en, g.cfg.dst16_rounding};
}
// SFPU results are computed in fp32 and stored at DST precision.
// Native SFPU stores (SFPSTORE) narrow with sfpu_dst16_rounding (truncate).
inline float store_sfpu(float v) {
    if (g.cfg.fp32_dest_acc_en)
        return v;
    return to_bf16(v, g.cfg.sfpu_dst16_rounding);
}
// SFPU ops that round to nearest even in software before the store (mul/div).
inline float store_sfpu_rne(float v) {
    if (g.cfg.fp32_dest_acc_en)
        return v;
    return to_bf16(v, Rounding::NearestEven);
}

} // namespace ttlemu
