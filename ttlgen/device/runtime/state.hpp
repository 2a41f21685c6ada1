// Process-wide emulator state. One mutex guards every field that two kernel
// threads can touch (CB counters, kernel status, the error); compute-only state
// (DST, packer flags) is touched by the compute thread alone.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "numerics.hpp"
#include "ttlemu/api.hpp"

namespace ttlemu {

constexpr int kMaxCbs = 64;

// A kernel error: the first one ends the run and is reported to the harness.
struct EmuError : std::runtime_error {
    std::string kind;
    EmuError(std::string k, const std::string& msg) : std::runtime_error(msg), kind(std::move(k)) {}
};
// Thrown into the other kernels once one has failed, to unwind them quietly.
struct Abort {};

[[noreturn]] void fail(const char* kind, const std::string& msg);

// A page of the quiet-NaN pattern fresh memory is filled with (NUMERICS.md "Memory
// poisoning"): 0x7FC1 per bf16, 0x7FC17FC1 per fp32. A constant, so that filling
// needs no buffer built on first use (in the reader, its first malloc would create
// the thread's arena, about 50 us inside the timed run) and is a plain memcpy (a
// store loop was 80% of the reader's instructions).
struct PoisonPage {
    uint8_t bytes[4096];
};
constexpr PoisonPage make_poison_page() {
    PoisonPage page{};
    for (size_t b = 0; b < sizeof page.bytes; b += 2) {
        page.bytes[b] = 0xC1;
        page.bytes[b + 1] = 0x7F;
    }
    return page;
}
inline constexpr PoisonPage kPoisonPage = make_poison_page();

inline void poison_fill(uint8_t* p, size_t bytes) {
    constexpr size_t kPage = sizeof kPoisonPage.bytes;
    for (size_t off = 0; off < bytes; off += kPage)
        std::memcpy(p + off, kPoisonPage.bytes, bytes - off < kPage ? bytes - off : kPage);
}

struct CbState {
    bool configured = false;
    DataFormat format = DataFormat::Invalid;
    uint32_t page_size = 0;
    uint32_t num_pages = 0;
    bool unpack_to_dest = false;
    uint8_t* base = nullptr;
    // Shared counters: pages pushed and pages popped so far. Changed under Emu::mu
    // (release stores, after the pages' data); a waiting kernel may poll them
    // without the lock (acquire loads) before it sleeps.
    std::atomic<uint64_t> pushed{0};
    std::atomic<uint64_t> popped{0};
    // Producer-side (one thread): pages reserved and not yet pushed, write page, pack cursor.
    uint32_t reserved = 0;
    uint32_t wr_page = 0;
    uint32_t pack_next = 0;
    // Consumer-side (one thread): pages waited for and not yet popped, read page.
    uint32_t waited = 0;
    uint32_t rd_page = 0;

    uint32_t available() const {
        return static_cast<uint32_t>(pushed.load(std::memory_order_acquire) -
                                     popped.load(std::memory_order_acquire));
    }
    uint32_t free_pages() const { return num_pages - available(); }
    uint8_t* page(uint32_t p) const {
        return base + static_cast<size_t>(p % num_pages) * page_size;
    }
};

enum class KState { Running, Blocked, Done };

struct Kernel {
    const char* name = "";
    std::vector<uint32_t> args;
    KState state = KState::Running;
    // What a blocked kernel waits for.
    const char* wait_call = "";
    uint32_t wait_cb = 0;
    uint32_t wait_pages = 0;
    bool wait_front = false;
    bool sleeping = false;        // inside cv.wait
    std::condition_variable cv;   // a blocked kernel sleeps on its own
};

struct Config {
    int math_fidelity = 4; // 0 LoFi, 2 HiFi2, 3 HiFi3, 4 HiFi4
    bool fp32_dest_acc_en = false;
    bool dst_full_sync_en = false;
    bool math_approx_mode = false;
    bool bfp8_pack_precise = false;
    Rounding pack_rounding = Rounding::NearestEven;
    Rounding unpack_tf32_rounding = Rounding::Truncate;
    Rounding dst16_rounding = Rounding::TiesAway;
    Rounding sfpu_dst16_rounding = Rounding::Truncate;
    bool poison_reserve = true;
    double timeout_s = 10.0;
    uint64_t dram_base = 0;
    uint64_t dram_size = 0;
    std::string dram_in, dram_out, result;
};

struct DstState {
    alignas(64) float regs[2][16][kTileElems];
    int halves = 2;        // 1 with full sync, 2 double-buffered
    uint32_t capacity = 8; // tiles usable per acquire
    int math_half = -1;    // half held by math between acquire and commit
    int committed[2] = {-1, -1};
    int n_committed = 0; // committed halves not yet taken by pack
    int pack_half = -1;  // half held by pack between wait and release
    int next_half = 0;
    int held = 0; // halves acquired and not yet released
};

struct Emu {
    Config cfg;
    CbState cbs[kMaxCbs];
    Kernel kernels[3];
    std::mutex mu;
    std::condition_variable cv; // the main thread waits here for the kernels to finish
    std::atomic<bool> aborted{false}; // also polled without the lock
    int sleepers = 0; // kernels asleep: pushes and pops look for whom to wake only then
    // When the last kernel finished (kernel_finished): the end of the timed run, so
    // that the main thread's wake-up and the joins are not counted as kernel time.
    std::chrono::steady_clock::time_point finished_at;
    std::string err_kind, err_msg;
    std::vector<std::string> warnings;
    uint8_t* l1 = nullptr;
    size_t l1_size = 0;
    uint8_t* dram = nullptr;
    // Compute-thread-only state.
    DstState dst;
    bool l1_acc = false;
    bool binary_acc_to_dest = false;
    int srca_cb = -1, srcb_cb = -1, pack_cb = -1;
};

extern Emu g;
extern thread_local Kernel* t_self;

CbState& cb_checked(uint32_t cb, const char* call);
// Records the first failure (later ones are consequences) and wakes everyone.
void record_error(const std::string& kind, const std::string& msg);

} // namespace ttlemu
