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
} // namespace api
} // namespace ttlemu
