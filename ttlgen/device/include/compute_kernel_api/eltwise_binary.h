#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
ALWI void binary_op_init_common(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    ttlemu::compute::configure("binary_op_init_common", icb0, icb1, ocb);
}
ALWI void binary_tiles_init(uint32_t, uint32_t, bool acc_to_dest = false) {
    ttlemu::compute::set_binary_acc(acc_to_dest);
}
ALWI void add_tiles_init(uint32_t, uint32_t, bool acc_to_dest = false) {
    ttlemu::compute::set_binary_acc(acc_to_dest);
}
ALWI void sub_tiles_init(uint32_t, uint32_t, bool acc_to_dest = false) {
    ttlemu::compute::set_binary_acc(acc_to_dest);
}
ALWI void mul_tiles_init(uint32_t, uint32_t) {
    ttlemu::compute::set_binary_acc(false);
}
ALWI void add_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttlemu::compute::fpu_binary(ttlemu::compute::Fpu2::Add, icb0, icb1, itile0, itile1, idst);
}
ALWI void sub_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttlemu::compute::fpu_binary(ttlemu::compute::Fpu2::Sub, icb0, icb1, itile0, itile1, idst);
}
ALWI void mul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttlemu::compute::fpu_binary(ttlemu::compute::Fpu2::Mul, icb0, icb1, itile0, itile1, idst);
}
} // namespace ckernel
