// SFPU unary: computed in fp32 on DST, stored at DST precision (runtime/compute_ops.cpp).
#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
ALWI void abs_tile_init() {}
ALWI void abs_tile(uint32_t idst) {
    ttlemu::compute::sfpu_unary(ttlemu::compute::Sfpu1::Abs, idst);
}
} // namespace ckernel
