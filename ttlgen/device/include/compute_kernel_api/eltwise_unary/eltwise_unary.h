#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
ALWI void unary_op_init_common(uint32_t icb, uint32_t ocb) {
    ttlemu::compute::configure("unary_op_init_common", icb, icb, ocb);
}
ALWI void init_sfpu(uint32_t icb, uint32_t ocb) {
    ttlemu::compute::configure("init_sfpu", icb, icb, ocb);
}
} // namespace ckernel
