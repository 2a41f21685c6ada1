// Compute-kernel entry points implemented by the runtime (runtime/compute_ops.cpp,
// runtime/matmul.cpp, runtime/packer.cpp). The tt-metal-named headers are thin
// inline wrappers over these so that per-kernel compiles stay fast.
#pragma once
#include "ttlemu/api.hpp"

namespace ttlemu::compute {
enum class Fpu2 { Add, Sub, Mul };
enum class Sfpu2 { Add, Sub, Mul, Max, Min };
enum class Sfpu1 { Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Neg, Abs, Relu };

void regs_acquire();
void regs_commit();
void regs_wait();
void regs_release();
// Records which CB feeds SrcA / SrcB / the packer (hardware "configure" calls).
void configure(const char* call, uint32_t srca_cb, uint32_t srcb_cb, uint32_t pack_cb);
void reconfig_srca(uint32_t cb);
void reconfig_srcb(uint32_t cb);
void reconfig_pack(uint32_t cb);
void set_binary_acc(bool acc_to_dest);
void copy_tile(uint32_t cb, uint32_t tile, uint32_t dst);
void fpu_binary(Fpu2 op, uint32_t cb_a, uint32_t cb_b, uint32_t tile_a, uint32_t tile_b,
                uint32_t dst);
void sfpu_unary(Sfpu1 op, uint32_t dst);
void sfpu_binary(Sfpu2 op, uint32_t dst0, uint32_t dst1, uint32_t dst_out);
void fill(uint32_t dst, float value);
void matmul(uint32_t in0, uint32_t in1, uint32_t tile0, uint32_t tile1, uint32_t dst,
            bool transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim);
void reduce(int pool, int dim, uint32_t in, uint32_t scaler, uint32_t tile, uint32_t scaler_tile,
            uint32_t dst);
void bcast(int type, uint32_t in, uint32_t tile, uint32_t dst);
void transpose(uint32_t in, uint32_t tile, uint32_t dst);
void pack(uint32_t dst, uint32_t cb, bool out_of_order, uint32_t out_tile);
void set_l1_acc(uint32_t enable);
} // namespace ttlemu::compute
