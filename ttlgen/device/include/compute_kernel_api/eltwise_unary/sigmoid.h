// SFPU unary: computed in fp32 on DST, stored at DST precision (runtime/compute_ops.cpp).
#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
template <bool approx = false, bool fast_and_approx = true>
ALWI void sigmoid_tile_init() {}
template <bool approx = false, bool fast_and_approx = true>
ALWI void sigmoid_tile(uint32_t idst, int vector_mode = 0) {
    (void)vector_mode;
    ttlemu::compute::sfpu_unary(ttlemu::compute::Sfpu1::Sigmoid, idst);
}
} // namespace ckernel
