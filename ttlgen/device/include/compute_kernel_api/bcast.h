#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
template <BroadcastType bcast_type = BroadcastType::NONE>
ALWI void unary_bcast_init(uint32_t icb, uint32_t ocb) {
    ttlemu::compute::configure("unary_bcast_init", icb, icb, ocb);
}
template <BroadcastType bcast_type = BroadcastType::NONE>
ALWI void unary_bcast(uint32_t icb, uint32_t in_tile_index, uint32_t dst_tile_index) {
    ttlemu::compute::bcast(static_cast<int>(bcast_type), icb, in_tile_index, dst_tile_index);
}
} // namespace ckernel
