#pragma once
#include "compute_kernel_api/common.h"

namespace ckernel {
// Matmul unpacks in0 to SrcB and in1 to SrcA, as in tt-metal's LLK.
ALWI void mm_init(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t out_cb_id,
                  uint32_t transpose = 0) {
    (void)transpose;
    ttlemu::compute::configure("mm_init", in1_cb_id, in0_cb_id, out_cb_id);
}
ALWI void mm_init_short(uint32_t, uint32_t, uint32_t transpose = 0) {
    (void)transpose;
}
ALWI void mm_block_init(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t out_cb_id,
                        uint32_t transpose = 0, uint32_t ct_dim = 1, uint32_t rt_dim = 1,
                        uint32_t kt_dim = 1) {
    (void)transpose;
    (void)ct_dim;
    (void)rt_dim;
    (void)kt_dim;
    ttlemu::compute::configure("mm_block_init", in1_cb_id, in0_cb_id, out_cb_id);
}
ALWI void mm_block_init_short(uint32_t, uint32_t, uint32_t transpose = 0, uint32_t ct_dim = 1,
                              uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
    (void)transpose;
    (void)ct_dim;
    (void)rt_dim;
    (void)kt_dim;
}
ALWI void matmul_tiles(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index,
                       uint32_t in1_tile_index, uint32_t idst, uint32_t transpose = 0) {
    ttlemu::compute::matmul(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst,
                            transpose != 0, 1, 1, 1);
}
// One K step of an rt_dim x ct_dim output block: in0 tiles at stride kt_dim, in1
// tiles contiguous, DST tiles row-major from idst.
ALWI void matmul_block(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index,
                       uint32_t in1_tile_index, uint32_t idst, uint32_t transpose, uint32_t ct_dim,
                       uint32_t rt_dim, uint32_t kt_dim) {
    ttlemu::compute::matmul(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst,
                            transpose != 0, ct_dim, rt_dim, kt_dim);
}
} // namespace ckernel
