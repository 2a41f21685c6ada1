// Declarations shared by the compute and dataflow headers of the host emulator.
// Kernels include only the tt-metal-named headers; this file is the seam to the
// runtime in ttlgen/device/runtime, which owns all state.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

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

#ifndef tt_l1_ptr
#define tt_l1_ptr
#endif
#ifndef ALWI
#define ALWI inline __attribute__((always_inline))
#endif
#ifndef FORCE_INLINE
#define FORCE_INLINE inline __attribute__((always_inline))
#endif

// Compile-time args: the harness passes -DKERNEL_COMPILE_TIME_ARGS=a,b,c per kernel.
#ifdef KERNEL_COMPILE_TIME_ARGS
constexpr uint32_t kernel_compile_time_args[] = {KERNEL_COMPILE_TIME_ARGS};
#else
constexpr uint32_t kernel_compile_time_args[] = {0};
#endif
#define get_compile_time_arg_val(arg_idx) (kernel_compile_time_args[(arg_idx)])

namespace ttlemu {
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
} // namespace ttlemu

template <typename T>
inline T get_arg_val(int arg_idx) {
    static_assert(sizeof(T) == 4, "runtime args are 32-bit words");
    const uint32_t word = ttlemu::runtime_arg(static_cast<uint32_t>(arg_idx));
    T value;
    std::memcpy(&value, &word, sizeof(T));
    return value;
}

inline void cb_wait_front(uint32_t cb, uint32_t pages) {
    ttlemu::cb_wait_front(cb, pages);
}
inline void cb_pop_front(uint32_t cb, uint32_t pages) {
    ttlemu::cb_pop_front(cb, pages);
}
inline void cb_reserve_back(uint32_t cb, uint32_t pages) {
    ttlemu::cb_reserve_back(cb, pages);
}
inline void cb_push_back(uint32_t cb, uint32_t pages) {
    ttlemu::cb_push_back(cb, pages);
}
