#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
ALWI void fill_tile_init() {}
ALWI void fill_tile(uint32_t idst, float param0) {
    ttlemu::compute::fill(idst, param0);
}
} // namespace ckernel
