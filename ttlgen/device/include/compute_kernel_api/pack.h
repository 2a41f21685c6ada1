#pragma once
#include "ttlemu/compute.hpp"

namespace ckernel {
template <bool out_of_order_output = false>
ALWI void pack_tile(uint32_t ifrom_dst, uint32_t icb, uint32_t output_tile_index = 0) {
    ttlemu::compute::pack(ifrom_dst, icb, out_of_order_output, output_tile_index);
}
ALWI void pack_reconfig_data_format(uint32_t new_cb) {
    ttlemu::compute::reconfig_pack(new_cb);
}
ALWI void pack_reconfig_data_format(uint32_t, uint32_t new_cb) {
    ttlemu::compute::reconfig_pack(new_cb);
}
// The flag is packer-global and survives until cleared: the runtime reports it
// if still set when the compute kernel returns.
ALWI void pack_reconfig_l1_acc(uint32_t l1_acc_en) {
    ttlemu::compute::set_l1_acc(l1_acc_en);
}
} // namespace ckernel
