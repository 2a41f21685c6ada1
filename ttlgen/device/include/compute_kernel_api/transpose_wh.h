#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
ALWI void transpose_wh_init(uint32_t icb, uint32_t ocb) {
    ttlemu::compute::configure("transpose_wh_init", icb, icb, ocb);
}
ALWI void transpose_wh_init_short(uint32_t) {}
ALWI void transpose_wh_tile(uint32_t icb, uint32_t itile, uint32_t idst) {
    ttlemu::compute::transpose(icb, itile, idst);
}
} // namespace ckernel
