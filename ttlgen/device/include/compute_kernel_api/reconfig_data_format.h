#pragma once
#include "ttlemu/compute.hpp"
#include "compute_kernel_api/pack.h"

namespace ckernel {
ALWI void reconfig_data_format(uint32_t srca_new, uint32_t srcb_new) {
    ttlemu::compute::reconfig_srca(srca_new);
    ttlemu::compute::reconfig_srcb(srcb_new);
}
ALWI void reconfig_data_format(uint32_t, uint32_t srca_new, uint32_t, uint32_t srcb_new) {
    reconfig_data_format(srca_new, srcb_new);
}
ALWI void reconfig_data_format_srca(uint32_t srca_new) {
    ttlemu::compute::reconfig_srca(srca_new);
}
ALWI void reconfig_data_format_srca(uint32_t, uint32_t srca_new) {
    ttlemu::compute::reconfig_srca(srca_new);
}
ALWI void reconfig_data_format_srcb(uint32_t srcb_new) {
    ttlemu::compute::reconfig_srcb(srcb_new);
}
ALWI void reconfig_data_format_srcb(uint32_t, uint32_t srcb_new) {
    ttlemu::compute::reconfig_srcb(srcb_new);
}
} // namespace ckernel
