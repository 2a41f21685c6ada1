#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
ALWI void add_binary_tile_init() {}
ALWI void sub_binary_tile_init() {}
ALWI void mul_binary_tile_init() {}
ALWI void add_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttlemu::compute::sfpu_binary(ttlemu::compute::Sfpu2::Add, idst0, idst1, odst);
}
ALWI void sub_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttlemu::compute::sfpu_binary(ttlemu::compute::Sfpu2::Sub, idst0, idst1, odst);
}
ALWI void mul_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttlemu::compute::sfpu_binary(ttlemu::compute::Sfpu2::Mul, idst0, idst1, odst);
}
// Older two-operand form writes the result over the first operand.
ALWI void add_binary_tile(uint32_t idst0, uint32_t idst1) {
    add_binary_tile(idst0, idst1, idst0);
}
ALWI void sub_binary_tile(uint32_t idst0, uint32_t idst1) {
    sub_binary_tile(idst0, idst1, idst0);
}
ALWI void mul_binary_tile(uint32_t idst0, uint32_t idst1) {
    mul_binary_tile(idst0, idst1, idst0);
}
} // namespace ckernel
