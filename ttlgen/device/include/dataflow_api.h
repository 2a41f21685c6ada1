// tt-metal dataflow_api.h for the host emulator. NoC transfers complete
// synchronously (the barriers are then trivially satisfied); L1 and DRAM
// addresses are real host addresses below 4 GiB so kernels may dereference
// get_write_ptr() results as tt-metal kernels do.
#pragma once
#include "ttlemu/api.hpp"

inline uint32_t get_write_ptr(uint32_t cb) {
    return ttlemu::cb_write_addr(cb);
}
inline uint32_t get_read_ptr(uint32_t cb) {
    return ttlemu::cb_read_addr(cb);
}
inline uint32_t get_tile_size(uint32_t cb) {
    return ttlemu::cb_page_size(cb);
}
inline DataFormat get_dataformat(uint32_t cb) {
    return ttlemu::cb_format(cb);
}

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

template <bool DRAM>
struct InterleavedAddrGen {
    uint32_t bank_base_address;
    uint32_t page_size;
    uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0) const {
        return static_cast<uint64_t>(bank_base_address) + static_cast<uint64_t>(id) * page_size +
               offset;
    }
};

template <bool DRAM, uint32_t tile_hw>
inline uint64_t get_noc_addr(uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& s,
                             uint32_t offset = 0) {
    return s.get_noc_addr(id, offset);
}
template <bool DRAM>
inline uint64_t get_noc_addr(uint32_t id, const InterleavedAddrGen<DRAM>& s, uint32_t offset = 0) {
    return s.get_noc_addr(id, offset);
}

template <bool DRAM, uint32_t tile_hw>
inline void noc_async_read_tile(uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& s,
                                uint32_t dst_local_l1_addr, uint32_t offset = 0) {
    ttlemu::noc_read(s.get_noc_addr(id, offset), dst_local_l1_addr, s.page_size,
                     "noc_async_read_tile");
}
template <bool DRAM, uint32_t tile_hw>
inline void noc_async_write_tile(uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& s,
                                 uint32_t src_local_l1_addr) {
    ttlemu::noc_write(src_local_l1_addr, s.get_noc_addr(id), s.page_size, "noc_async_write_tile");
}
inline void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size) {
    ttlemu::noc_read(src_noc_addr, dst_local_l1_addr, size, "noc_async_read");
}
inline void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size) {
    ttlemu::noc_write(src_local_l1_addr, dst_noc_addr, size, "noc_async_write");
}
inline void noc_async_read_barrier() {}
inline void noc_async_write_barrier() {}
inline void noc_async_writes_flushed() {}
