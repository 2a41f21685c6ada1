#pragma once
#include "compute_kernel_api/common.h"

#ifndef REDUCE_OP
#define REDUCE_OP PoolType::SUM
#endif
#ifndef REDUCE_DIM
#define REDUCE_DIM ReduceDim::REDUCE_ROW
#endif

namespace ckernel {
// Reduce reads the input through SrcA and the scaler through SrcB.
template <PoolType reduce_type = REDUCE_OP, ReduceDim reduce_dim = REDUCE_DIM,
          bool enforce_fp32_accumulation = false>
ALWI void reduce_init(uint32_t icb, uint32_t icb_scaler, uint32_t ocb) {
    static_assert(reduce_type != PoolType::MAX, "ttlemu: reduce MAX is not emulated");
    ttlemu::compute::configure("reduce_init", icb, icb_scaler, ocb);
}
ALWI void reduce_uninit() {}
template <PoolType reduce_type = REDUCE_OP, ReduceDim reduce_dim = REDUCE_DIM,
          bool enforce_fp32_accumulation = false>
ALWI void reduce_tile(uint32_t icb, uint32_t icb_scaler, uint32_t itile, uint32_t itile_scaler,
                      uint32_t idst) {
    static_assert(reduce_type != PoolType::MAX, "ttlemu: reduce MAX is not emulated");
    ttlemu::compute::reduce(static_cast<int>(reduce_type), static_cast<int>(reduce_dim), icb,
                            icb_scaler, itile, itile_scaler, idst);
}
} // namespace ckernel
