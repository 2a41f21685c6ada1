// The compute side of the emulator's glue. The generated kernel-API headers call:
// - ttlemu::compute::*, implemented by the runtime (runtime/compute_ops.cpp,
//   runtime/matmul.cpp, the packer); thin entry points so per-kernel compiles stay fast;
// - ttlemu::api::*, inline adapters from an API call's arguments (its enums, overload
//   shapes, kernel-held state) to those entry points;
// - ttlemu::math::<routine>::<name>, the math a routine computes: for the SFPU routines the
//   functions of the math spec (specs/ops/math.yaml), which the generated ttlemu_math.h beside
//   each level's headers defines and the kernel passes by pointer; for the FPU, the fixed
//   operations of its datapath below.
#pragma once
#include "ttlemu/api.hpp"

// One host thread runs the statements of all three TRISCs; the runtime's DST state
// machine enforces the hand-over order they would.
#define UNPACK(x) x
#define MATH(x)   x
#define PACK(x)   x

namespace ttlemu::math {
// How an SFPU routine stores a result into a 16-bit DST (the math spec's `rounding:`): the
// SFPU's native store (Numerics.sfpu_dst16_rounding), or rounded to nearest even first.
enum class Rounding { Native, NearestEven };
// A function of the math spec as an SFPU routine takes it: a function of the generated math
// header (which converts implicitly, with its native store) and its rounding.
struct Unary {
    float (*evaluate)(float);
    Rounding rounding;
    constexpr Unary(float (*f)(float), Rounding r = Rounding::Native) : evaluate(f), rounding(r) {}
};
struct Binary {
    float (*evaluate)(float, float);
    Rounding rounding;
    constexpr Binary(float (*f)(float, float), Rounding r = Rounding::Native)
        : evaluate(f), rounding(r) {}
};
constexpr Unary nearest_even(float (*f)(float)) {
    return Unary(f, Rounding::NearestEven);
}
constexpr Binary nearest_even(float (*f)(float, float)) {
    return Binary(f, Rounding::NearestEven);
}
} // namespace ttlemu::math

namespace ttlemu::compute {
enum class Fpu2 { Add, Sub, Mul };

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
// `bcast`: B's broadcast (0 none, 1 row 0, 2 column 0, 3 element (0, 0)).
void fpu_binary(Fpu2 op, uint32_t cb_a, uint32_t cb_b, uint32_t tile_a, uint32_t tile_b,
                uint32_t dst, int bcast = 0);
// The SFPU evaluates `f` on each DST element in fp32 and stores the result with its rounding.
void sfpu_unary(math::Unary f, uint32_t dst);
void sfpu_binary(math::Binary f, uint32_t dst0, uint32_t dst1, uint32_t dst_out);
// The SFPU writes `value` into every element of DST tile `dst`, with its native store.
void sfpu_constant(uint32_t dst, float value);
// A nullary function of the math spec (what a fill computes: no DST operand, only the call's
// arguments after the DST slot, which carry the op's attributes) stored into DST tile `dst`.
template <typename... Params, typename... Args>
inline void sfpu_nullary(float (*f)(Params...), uint32_t dst, Args... args) {
    sfpu_constant(dst, f(static_cast<Params>(args)...));
}
void matmul(uint32_t in0, uint32_t in1, uint32_t tile0, uint32_t tile1, uint32_t dst,
            bool transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim);
// `data_in_srcb`: the LLK reads the data through SrcB and the scaler through SrcA (ttnn
// 0.81.1's REDUCE_ROW SUM/AVG); otherwise the data through SrcA and the scaler through SrcB.
void reduce(int pool, int dim, uint32_t in, uint32_t scaler, uint32_t tile, uint32_t scaler_tile,
            uint32_t dst, bool data_in_srcb);
void bcast(int type, uint32_t in, uint32_t tile, uint32_t dst);
void transpose(uint32_t in, uint32_t tile, uint32_t dst);
// An FPU binary reusing DST: DST tile `dst` is moved into SrcA (`dest_to_srca`) or SrcB,
// the CB's tile unpacked into the other, and the result written back to `dst`.
void fpu_binary_dest_reuse(Fpu2 op, bool dest_to_srca, uint32_t cb, uint32_t tile, uint32_t dst);
// typecast_tile: DST tile `dst` converted from data format `in_format` to `out_format`
// (tt-metal DataFormat values); Float32 and Float16_b are emulated.
void typecast(uint32_t in_format, uint32_t out_format, uint32_t dst);
void pack(uint32_t dst, uint32_t cb, bool out_of_order, uint32_t out_tile);
void set_l1_acc(uint32_t enable);
} // namespace ttlemu::compute

namespace ttlemu::math::fpu_binary {
constexpr compute::Fpu2 add = compute::Fpu2::Add;
constexpr compute::Fpu2 sub = compute::Fpu2::Sub;
constexpr compute::Fpu2 mul = compute::Fpu2::Mul;
} // namespace ttlemu::math::fpu_binary

namespace ttlemu::math::dest_reuse {
constexpr compute::Fpu2 add = compute::Fpu2::Add;
constexpr compute::Fpu2 sub = compute::Fpu2::Sub;
constexpr compute::Fpu2 mul = compute::Fpu2::Mul;
} // namespace ttlemu::math::dest_reuse

namespace ttlemu::api {
// SrcOrder::Regular: icb0 -> SrcA, icb1 -> SrcB; Reverse swaps them (matmul's in0 -> SrcB).
inline void hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    compute::configure("hw_startup", icb0, icb1, ocb);
}
template <typename SrcOrder>
inline void hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb, SrcOrder order) {
    const bool reverse = order == SrcOrder::Reverse;
    compute::configure("hw_startup", reverse ? icb1 : icb0, reverse ? icb0 : icb1, ocb);
}
inline void reconfig_sources(uint32_t srca, uint32_t srcb) {
    compute::reconfig_srca(srca);
    compute::reconfig_srcb(srcb);
}
template <typename SrcOrder>
inline void reconfig_sources(uint32_t icb0, uint32_t icb1, SrcOrder order) {
    const bool reverse = order == SrcOrder::Reverse;
    reconfig_sources(reverse ? icb1 : icb0, reverse ? icb0 : icb1);
}
// The SFPU binaries that take a DstRoundingMode (eltwise_binary_sfpu.h@1387d4d6): Default
// stores as the function's math states, NearestEven rounds in software first; neither
// matters with a 32-bit DST.
template <typename DstRoundingMode>
inline void sfpu_binary(math::Binary f, uint32_t dst0, uint32_t dst1, uint32_t dst_out,
                        DstRoundingMode mode) {
    compute::sfpu_binary(mode == DstRoundingMode::NearestEven ? math::nearest_even(f.evaluate) : f,
                         dst0, dst1, dst_out);
}
inline void release_dst() {
    compute::regs_commit();
    compute::regs_wait();
    compute::regs_release();
}
inline void pack_block(uint32_t dst, uint32_t cb, uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i)
        compute::pack(dst + i, cb, false, 0);
}
inline void copy_init(uint32_t transpose, uint32_t transpose_within_16x16_face) {
    if (transpose != 0 || transpose_within_16x16_face != 0)
        unsupported("copy init", "a transposing copy is not emulated");
}
inline void copy_init_with_dt(uint32_t new_cb, uint32_t transpose) {
    copy_init(transpose, 0);
    compute::reconfig_srca(new_cb);
}
inline void copy_block(uint32_t cb, uint32_t first_tile, uint32_t first_dst, uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i)
        compute::copy_tile(cb, first_tile + i, first_dst + i);
}
template <typename BroadcastType>
inline int bcast_code(BroadcastType type) {
    return type == BroadcastType::ROW      ? 1
           : type == BroadcastType::COL    ? 2
           : type == BroadcastType::SCALAR ? 3
                                           : 0;
}
template <typename BroadcastType>
inline void bcast(BroadcastType type, uint32_t icb, uint32_t tile, uint32_t dst) {
    compute::bcast(bcast_code(type), icb, tile, dst);
}
// An FPU binary whose B operand is broadcast (bcast.h@00b0fa3f).
template <typename BroadcastType>
inline void fpu_binary(compute::Fpu2 op, BroadcastType dim, uint32_t icb0, uint32_t icb1,
                       uint32_t itile0, uint32_t itile1, uint32_t idst, uint32_t bcast_row_idx) {
    if (bcast_row_idx != 0)
        unsupported("tiles_bcast_rows", "broadcasting a row other than row 0 is not emulated");
    compute::fpu_binary(op, icb0, icb1, itile0, itile1, idst, bcast_code(dim));
}
template <typename EltwiseBinaryType, typename BroadcastType>
inline void any_tiles_bcast(EltwiseBinaryType op, BroadcastType dim, uint32_t icb0, uint32_t icb1,
                            uint32_t itile0, uint32_t itile1, uint32_t idst,
                            uint32_t bcast_row_idx) {
    const compute::Fpu2 fpu = op == EltwiseBinaryType::ELWMUL   ? compute::Fpu2::Mul
                              : op == EltwiseBinaryType::ELWSUB ? compute::Fpu2::Sub
                                                                : compute::Fpu2::Add;
    fpu_binary(fpu, dim, icb0, icb1, itile0, itile1, idst, bcast_row_idx);
}
// The FPU binaries that reuse DST as one source (add_reuse_dest_tiles and binary_dest_reuse_tiles).
template <typename EltwiseBinaryReuseDestType>
inline void dest_reuse(compute::Fpu2 op, EltwiseBinaryReuseDestType reuse, uint32_t icb,
                       uint32_t tile, uint32_t dst) {
    if (reuse == EltwiseBinaryReuseDestType::NONE)
        unsupported("dest reuse", "a dest-reuse binary with EltwiseBinaryReuseDestType::NONE reads no DST");
    compute::fpu_binary_dest_reuse(op, reuse == EltwiseBinaryReuseDestType::DEST_TO_SRCA, icb, tile, dst);
}
template <typename EltwiseBinaryType, typename EltwiseBinaryReuseDestType>
inline void any_dest_reuse(EltwiseBinaryType op, EltwiseBinaryReuseDestType reuse, uint32_t icb,
                           uint32_t tile, uint32_t dst) {
    const compute::Fpu2 fpu = op == EltwiseBinaryType::ELWMUL   ? compute::Fpu2::Mul
                              : op == EltwiseBinaryType::ELWSUB ? compute::Fpu2::Sub
                                                                : compute::Fpu2::Add;
    dest_reuse(fpu, reuse, icb, tile, dst);
}
template <typename PoolType>
inline void reduce_init(PoolType pool) {
    if (pool == PoolType::MAX)
        unsupported("reduce init", "reduce MAX is not emulated");
}
// A reduce as the LLK of the API level runs it. The emulation spec binds ttnn 0.81.1's form
// (the one whose third template parameter is is_fp32_dest_acc_en) with `swaps_row_sums`
// true: its REDUCE_ROW SUM/AVG is an MVMUL with the scaler in SrcA and the data in SrcB
// (reduce.h), so the kernel must have loaded their formats so; 0.69.0's reads the data
// through SrcA always.
template <typename PoolType, typename ReduceDim>
inline void reduce(PoolType pool, ReduceDim dim, uint32_t icb, uint32_t icb_scaler, uint32_t tile,
                   uint32_t scaler_tile, uint32_t dst, bool swaps_row_sums) {
    reduce_init(pool);
    const int pool_code = pool == PoolType::AVG ? 1 : 0;
    const int dim_code = dim == ReduceDim::REDUCE_COL ? 1 : dim == ReduceDim::REDUCE_SCALAR ? 2 : 0;
    const bool data_in_srcb = swaps_row_sums && dim == ReduceDim::REDUCE_ROW && pool != PoolType::MAX;
    compute::reduce(pool_code, dim_code, icb, icb_scaler, tile, scaler_tile, dst, data_in_srcb);
}
// The binding of 0.81.1's form passes its is_fp32_dest_acc_en, which tells that form from
// 0.69.0's in the emulation spec; the emulator's DST width is the compute config's.
template <bool is_fp32_dest_acc_en, typename PoolType, typename ReduceDim>
inline void reduce(PoolType pool, ReduceDim dim, uint32_t icb, uint32_t icb_scaler, uint32_t tile,
                   uint32_t scaler_tile, uint32_t dst, bool swaps_row_sums) {
    reduce(pool, dim, icb, icb_scaler, tile, scaler_tile, dst, swaps_row_sums);
}
// The current matmul inits carry the transpose flag the later matmul_tiles calls use.
inline bool matmul_transpose = false;
inline void matmul_init(uint32_t transpose) {
    matmul_transpose = transpose != 0;
}
inline void mm_init(uint32_t in0, uint32_t in1, uint32_t out, uint32_t transpose) {
    compute::configure("mm_init", in1, in0, out); // in0 unpacks to SrcB, in1 to SrcA
    matmul_init(transpose);
}
inline void matmul_init_with_dt(uint32_t in1, uint32_t transpose) {
    compute::reconfig_srca(in1);
    matmul_init(transpose);
}
inline void matmul_tiles(uint32_t in0, uint32_t in1, uint32_t tile0, uint32_t tile1, uint32_t dst,
                         uint32_t transpose) {
    compute::matmul(in0, in1, tile0, tile1, dst, transpose != 0, 1, 1, 1);
}
inline void matmul_tiles(uint32_t in0, uint32_t in1, uint32_t tile0, uint32_t tile1, uint32_t dst) {
    compute::matmul(in0, in1, tile0, tile1, dst, matmul_transpose, 1, 1, 1);
}
} // namespace ttlemu::api
