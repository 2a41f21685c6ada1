#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
ALWI void binary_max_tile_init() {}
ALWI void binary_min_tile_init() {}
ALWI void binary_max_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttlemu::compute::sfpu_binary(ttlemu::compute::Sfpu2::Max, idst0, idst1, odst);
}
ALWI void binary_min_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttlemu::compute::sfpu_binary(ttlemu::compute::Sfpu2::Min, idst0, idst1, odst);
}
ALWI void binary_max_tile(uint32_t idst0, uint32_t idst1) {
    binary_max_tile(idst0, idst1, idst0);
}
ALWI void binary_min_tile(uint32_t idst0, uint32_t idst1) {
    binary_min_tile(idst0, idst1, idst0);
}
} // namespace ckernel
