// Runtime args and NoC transfers. Transfers are bounds-checked against the
// emulated DRAM image and the CB regions of L1, so a wrong address or page size
// is an error naming the call instead of silent corruption.
#include <sstream>

#include "state.hpp"

namespace ttlemu {

uint32_t runtime_arg(uint32_t index) {
    if (index >= t_self->args.size()) {
        std::ostringstream m;
        m << "get_arg_val(" << index << "): only " << t_self->args.size()
          << " runtime args were given";
        fail("protocol", m.str());
    }
    return t_self->args[index];
}

namespace {

uint8_t* dram_range(uint64_t addr, uint32_t size, const char* call) {
    if (addr < g.cfg.dram_base || addr + size > g.cfg.dram_base + g.cfg.dram_size) {
        std::ostringstream m;
        m << call << ": DRAM range [0x" << std::hex << addr << ", 0x" << addr + size
          << ") is outside the buffers [0x" << g.cfg.dram_base << ", 0x"
          << g.cfg.dram_base + g.cfg.dram_size << ")";
        fail("memory", m.str());
    }
    return g.dram + (addr - g.cfg.dram_base);
}

uint8_t* l1_range(uint32_t addr, uint32_t size, const char* call) {
    const uintptr_t a = addr;
    for (const CbState& c : g.cbs) {
        if (!c.configured)
            continue;
        const uintptr_t lo = reinterpret_cast<uintptr_t>(c.base);
        const uintptr_t hi = lo + static_cast<uintptr_t>(c.page_size) * c.num_pages;
        if (a >= lo && a + size <= hi)
            return reinterpret_cast<uint8_t*>(a);
    }
    std::ostringstream m;
    m << call << ": L1 range [0x" << std::hex << addr << ", 0x" << a + size
      << ") is not inside one CB";
    fail("memory", m.str());
}

} // namespace

void noc_read(uint64_t src_addr, uint32_t l1_addr, uint32_t size, const char* call) {
    std::memcpy(l1_range(l1_addr, size, call), dram_range(src_addr, size, call), size);
}

void noc_write(uint32_t l1_addr, uint64_t dst_addr, uint32_t size, const char* call) {
    std::memcpy(dram_range(dst_addr, size, call), l1_range(l1_addr, size, call), size);
}

} // namespace ttlemu
