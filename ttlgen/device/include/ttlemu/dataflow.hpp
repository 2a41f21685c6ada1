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

// A DRAM tensor's compile-time accessor arguments at CTA_OFFSET (CRTA_OFFSET: where its
// common runtime arguments start, unused here). On the emulator every tensor is one
// interleaved bank and its arguments are one word (program.json's {"accessor_args": buffer}),
// which must be among the kernel's compile-time arguments. The shape is upstream's
// (api/tensor/tensor_accessor_args.h), so a kernel naming what the real class has compiles.
template <size_t CTA_OFFSET, size_t CRTA_OFFSET = static_cast<size_t>(-1)>
struct TensorAccessorArgs {
    static_assert(CTA_OFFSET < sizeof(kernel_compile_time_args) / sizeof(uint32_t),
                  "TensorAccessorArgs: the kernel's compile-time arguments end before this offset");
    // The page size the host aligned for the tensor: not among the emulator's arguments, so
    // 0, and an accessor built without a page size fails its first transfer.
    static constexpr uint32_t AlignedPageSize = 0;
    constexpr TensorAccessorArgs() {}
    static constexpr uint32_t next_compile_time_args_offset() { return CTA_OFFSET + 1; }
};

// Upstream's accessor is a class template over its distribution spec, deduced from the
// TensorAccessorArgs it is built from; here the spec is the arguments' type.
template <typename DSpecT>
struct TensorAccessor {
    uint32_t bank_base_address;
    uint32_t page_size;
    template <size_t CTA_OFFSET, size_t CRTA_OFFSET>
    TensorAccessor(const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>&, size_t bank_base_address,
                   uint32_t page_size = TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>::AlignedPageSize)
        : bank_base_address(static_cast<uint32_t>(bank_base_address)), page_size(page_size) {}
    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t /*noc*/ = 0) const {
        return static_cast<uint64_t>(bank_base_address) + static_cast<uint64_t>(id) * page_size +
               offset;
    }
};
template <size_t CTA_OFFSET, size_t CRTA_OFFSET>
TensorAccessor(const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>&, size_t)
    -> TensorAccessor<TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>>;
template <size_t CTA_OFFSET, size_t CRTA_OFFSET>
TensorAccessor(const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>&, size_t, uint32_t)
    -> TensorAccessor<TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>>;
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
