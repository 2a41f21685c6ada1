// The dataflow side of the emulator's glue: the address generators the API levels
// declare (exported by the generated headers as ttlemu::types::<name>) and the adapters
// the generated dataflow headers call. NoC transfers complete synchronously (the barriers
// are then trivially satisfied); L1 and DRAM addresses are real host addresses below 4 GiB,
// so kernels may dereference get_write_ptr() results as tt-metal kernels do.
#pragma once
#include "ttlemu/api.hpp"

namespace ttlemu::types {
// One DRAM bank on the host: page `id` lives at bank_base_address + id * page_size.
template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
    uint32_t bank_base_address;
    uint32_t page_size;
    DataFormat data_format;
    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0) const {
        return static_cast<uint64_t>(bank_base_address) + static_cast<uint64_t>(id) * page_size +
               offset;
    }
};

// A DRAM tensor's compile-time accessor arguments at CTA_OFFSET. On the emulator every
// tensor is one interleaved bank and its arguments are one word (program.json's
// {"accessor_args": buffer}), which must be among the kernel's compile-time arguments.
template <uint32_t CTA_OFFSET>
struct TensorAccessorArgs {
    static_assert(CTA_OFFSET < sizeof(kernel_compile_time_args) / sizeof(uint32_t),
                  "TensorAccessorArgs: the kernel's compile-time arguments end before this offset");
    constexpr TensorAccessorArgs() {}
    constexpr uint32_t next_compile_time_args_offset() const { return CTA_OFFSET + 1; }
};

struct TensorAccessor {
    uint32_t bank_base_address;
    uint32_t page_size;
    template <typename Args>
    TensorAccessor(const Args&, uint32_t bank_base_address, uint32_t page_size = 0)
        : bank_base_address(bank_base_address), page_size(page_size) {}
    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0) const {
        return static_cast<uint64_t>(bank_base_address) + static_cast<uint64_t>(id) * page_size +
               offset;
    }
};
} // namespace ttlemu::types

namespace ttlemu::api {
template <typename T>
inline T arg(int index) {
    static_assert(sizeof(T) == 4, "runtime args are 32-bit words");
    const uint32_t word = runtime_arg(static_cast<uint32_t>(index));
    T value;
    std::memcpy(&value, &word, sizeof(T));
    return value;
}
template <typename AddrGen>
inline void read_page(uint32_t id, const AddrGen& gen, uint32_t l1, uint32_t offset,
                      const char* call) {
    if (gen.page_size == 0)
        unsupported(call, "an accessor without a page size");
    noc_read(gen.get_noc_addr(id, offset), l1, gen.page_size, call);
}
template <typename AddrGen>
inline void write_page(uint32_t id, const AddrGen& gen, uint32_t l1, uint32_t size,
                       uint32_t offset, const char* call) {
    if (gen.page_size == 0 && size == 0)
        unsupported(call, "an accessor without a page size");
    noc_write(l1, gen.get_noc_addr(id, offset), size != 0 ? size : gen.page_size, call);
}
} // namespace ttlemu::api
