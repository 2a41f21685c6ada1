// Declarations shared by the emulator's compute and dataflow glue. Kernels include only
// the kernel-API headers generated from the API specs (generated/emulator/<level>/), whose
// bodies call the glue in ttlemu/compute.hpp and ttlemu/dataflow.hpp; this file is the seam
// to the runtime in ttlgen/device/runtime, which owns all state.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ttlemu::types {
// Values as in tt-metal's tt::DataFormat so kernels comparing against them agree.
enum class DataFormat : uint8_t {
    Float32 = 0,
    Float16 = 1,
    Bfp8 = 2,
    Bfp4 = 3,
    Tf32 = 4,
    Float16_b = 5,
    Bfp8_b = 6,
    Bfp4_b = 7,
    Int32 = 8,
    UInt16 = 9,
    Int8 = 14,
    UInt32 = 24,
    UInt8 = 30,
    Invalid = 0xff,
};
} // namespace ttlemu::types

#ifndef tt_l1_ptr
#define tt_l1_ptr
#endif
#ifndef ALWI
#define ALWI inline __attribute__((always_inline))
#endif
#ifndef FORCE_INLINE
#define FORCE_INLINE inline __attribute__((always_inline))
#endif

// Compile-time args: the harness passes -DKERNEL_COMPILE_TIME_ARGS=a,b,c per kernel, as
// tt-metal's kernel build does.
#ifdef KERNEL_COMPILE_TIME_ARGS
constexpr uint32_t kernel_compile_time_args[] = {KERNEL_COMPILE_TIME_ARGS};
#else
constexpr uint32_t kernel_compile_time_args[] = {0};
#endif
#define get_compile_time_arg_val(arg_idx) (kernel_compile_time_args[(arg_idx)])

// Each CB's tile size and data format as compile-time constants, as tt-metal's JIT gives
// them to a kernel (chlkc_descriptors.h's unpack_tile_size / unpack_src_format, which
// upstream's constexpr get_tile_size and get_dataformat read): the harness passes
// -DTTLEMU_CB_PAGE_SIZES=... -DTTLEMU_CB_FORMATS=... per kernel, entry i for CB i (0 and
// Invalid where no CB is bound). Without them (a syntax check) every CB reads as unbound.
#ifdef TTLEMU_CB_PAGE_SIZES
constexpr uint32_t kernel_cb_page_sizes[] = {TTLEMU_CB_PAGE_SIZES};
#else
constexpr uint32_t kernel_cb_page_sizes[] = {0};
#endif
#ifdef TTLEMU_CB_FORMATS
constexpr uint8_t kernel_cb_formats[] = {TTLEMU_CB_FORMATS};
#else
constexpr uint8_t kernel_cb_formats[] = {0xff};
#endif

namespace ttlemu {
using types::DataFormat;

void cb_wait_front(uint32_t cb, uint32_t pages);
void cb_pop_front(uint32_t cb, uint32_t pages);
void cb_reserve_back(uint32_t cb, uint32_t pages);
void cb_push_back(uint32_t cb, uint32_t pages);
uint32_t runtime_arg(uint32_t index);
uint32_t cb_write_addr(uint32_t cb);
uint32_t cb_read_addr(uint32_t cb);
uint32_t cb_page_size(uint32_t cb);
DataFormat cb_format(uint32_t cb);
// Copies between emulated DRAM and L1; both ranges are bounds-checked.
void noc_read(uint64_t src_addr, uint32_t l1_addr, uint32_t size, const char* call);
void noc_write(uint32_t l1_addr, uint64_t dst_addr, uint32_t size, const char* call);
// A kernel used an API feature the emulator does not model: ends the run with a config error.
[[noreturn]] void unsupported(const char* call, const char* what);

namespace api {
inline void no_op() {}
// The compile-time tables above, as upstream's constexpr lookups read theirs.
constexpr int32_t tile_size(int32_t cb) {
    return cb >= 0 && static_cast<size_t>(cb) < sizeof(kernel_cb_page_sizes) / sizeof(uint32_t)
               ? static_cast<int32_t>(kernel_cb_page_sizes[cb])
               : 0;
}
constexpr DataFormat data_format(int32_t cb) {
    return cb >= 0 && static_cast<size_t>(cb) < sizeof(kernel_cb_formats)
               ? static_cast<DataFormat>(kernel_cb_formats[cb])
               : DataFormat::Invalid;
}
} // namespace api
} // namespace ttlemu
