#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
ALWI void copy_tile_to_dst_init_short(uint32_t, uint32_t transpose = 0) {
    (void)transpose;
}
ALWI void copy_tile_to_dst_init_short_with_dt(uint32_t old_cb, uint32_t new_cb,
                                              uint32_t transpose = 0) {
    (void)old_cb;
    (void)transpose;
    ttlemu::compute::reconfig_srca(new_cb);
}
ALWI void copy_tile_init(uint32_t cb) {
    copy_tile_to_dst_init_short(cb);
}
ALWI void copy_tile(uint32_t in_cb, uint32_t in_tile_index, uint32_t dst_tile_index) {
    ttlemu::compute::copy_tile(in_cb, in_tile_index, dst_tile_index);
}
} // namespace ckernel
