// Circular buffers: real capacities, blocking waits, protocol checks and
// deadlock detection. A wait is a deadlock as soon as no kernel is running and
// no blocked kernel's condition holds: with every CB change made under one
// mutex, that state can never change again, so it is reported at once.
#include <chrono>
#include <sstream>
#include <thread>

#include "state.hpp"

namespace ttlemu {

Emu g;
thread_local Kernel* t_self = nullptr;

void record_error(const std::string& kind, const std::string& msg) {
    // Caller holds g.mu.
    if (!g.aborted) {
        g.aborted = true;
        g.err_kind = kind;
        g.err_msg = msg;
    }
    for (Kernel& k : g.kernels)
        k.cv.notify_one();
    g.cv.notify_all();
}

void fail(const char* kind, const std::string& msg) {
    std::string who = t_self ? t_self->name : "runtime";
    throw EmuError(kind, who + ": " + msg);
}

CbState& cb_checked(uint32_t cb, const char* call) {
    if (cb >= static_cast<uint32_t>(kMaxCbs) || !g.cbs[cb].configured) {
        std::ostringstream m;
        m << call << "(cb=" << cb << "): CB " << cb << " is not in program.json";
        fail("protocol", m.str());
    }
    return g.cbs[cb];
}

namespace {

// How long a blocked kernel polls its CB before it sleeps. Producer and consumer
// usually hand over within microseconds, and a futex round trip costs more than
// that; producers are also woken lazily (wake_satisfied), so a sleeping reader is
// woken a few times per CB rather than once per page. The poll yields the core
// between checks: on a machine busier than its cores, a busy-wait would keep the
// very kernel it waits for from running (measured: 2-3x slower bench runs with
// one core taken by another process). A millisecond covers the writer's wait for
// the next output block of a matmul: at 50 us it slept between blocks, and the
// compute thread's cb_push_back paid a futex wake of it, 6-40 us each on the
// 2-core VM, where waking a sleeping thread means waking its idle virtual CPU
// (bench/emulator.py, interleaved A/B: 8% less time at K = 8, 2-9% at K = 32
// and 128; with a busy-looping process on one core, no slower).
// bench/emulator_devices.py builds the runtime with another value to measure the poll.
#ifndef TTLEMU_SPIN_US
#define TTLEMU_SPIN_US 1000
#endif
constexpr int kSpinUs = TTLEMU_SPIN_US;

bool satisfied(const Kernel& k) {
    const CbState& c = g.cbs[k.wait_cb];
    return k.wait_front ? c.available() >= k.wait_pages : c.free_pages() >= k.wait_pages;
}

// Wakes the sleeping kernels whose wait is satisfied. With `lazy`, a producer is
// woken only once half of its CB is free, so that it refills in bursts rather
// than after every page (fewer futex round trips on the consumer's side); a kernel
// about to block calls this with lazy = false, so no satisfied wait is left asleep.
void wake_satisfied(bool lazy) {
    if (g.sleepers == 0)
        return;
    for (Kernel& k : g.kernels) {
        if (!k.sleeping || !satisfied(k))
            continue;
        const CbState& c = g.cbs[k.wait_cb];
        if (lazy && !k.wait_front && c.free_pages() < (c.num_pages + 1) / 2)
            continue;
        k.cv.notify_one();
    }
}

std::string describe(const Kernel& k) {
    std::ostringstream m;
    m << k.name;
    if (k.state == KState::Done) {
        m << " finished";
    } else if (k.state == KState::Running) {
        m << " running";
    } else {
        const CbState& c = g.cbs[k.wait_cb];
        m << " blocked in " << k.wait_call << "(cb=" << k.wait_cb << ", " << k.wait_pages
          << " pages): ";
        if (k.wait_front) {
            m << c.available() << " of " << c.num_pages << " pages available";
        } else {
            m << c.free_pages() << " of " << c.num_pages << " pages free";
        }
    }
    return m.str();
}

bool deadlocked() {
    bool any_blocked = false;
    for (const Kernel& k : g.kernels) {
        if (k.state == KState::Running)
            return false;
        if (k.state == KState::Blocked) {
            if (satisfied(k))
                return false;
            any_blocked = true;
        }
    }
    return any_blocked;
}

void report_deadlock() {
    std::string msg = "deadlock: a wait can never be satisfied; ";
    for (int i = 0; i < 3; ++i) {
        msg += describe(g.kernels[i]);
        if (i < 2)
            msg += "; ";
    }
    record_error("deadlock", msg);
}

void block_until(std::unique_lock<std::mutex>& lk, const char* call, uint32_t cb, uint32_t pages,
                 bool front) {
    Kernel& self = *t_self;
    self.wait_call = call;
    self.wait_cb = cb;
    self.wait_pages = pages;
    self.wait_front = front;
    // Poll the counters first, without the lock.
    if (!satisfied(self)) {
        lk.unlock();
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinUs);
        while (!satisfied(self)) {
            std::this_thread::yield();
            if (std::chrono::steady_clock::now() > until ||
                g.aborted.load(std::memory_order_relaxed))
                break;
        }
        lk.lock();
    }
    while (!satisfied(self)) {
        if (g.aborted)
            throw Abort{};
        self.state = KState::Blocked;
        if (deadlocked()) {
            report_deadlock();
            throw Abort{};
        }
        wake_satisfied(false);
        g.sleepers++;
        self.sleeping = true;
        self.cv.wait(lk);
        self.sleeping = false;
        g.sleepers--;
        self.state = KState::Running;
    }
    self.state = KState::Running;
    if (g.aborted)
        throw Abort{};
}

} // namespace

void kernel_finished() {
    std::lock_guard<std::mutex> lk(g.mu);
    t_self->state = KState::Done;
    g.finished_at = std::chrono::steady_clock::now();
    if (deadlocked())
        report_deadlock();
    wake_satisfied(false);
    g.cv.notify_all();
}

void cb_wait_front(uint32_t cb, uint32_t pages) {
    CbState& c = cb_checked(cb, "cb_wait_front");
    if (pages > c.num_pages) {
        std::ostringstream m;
        m << "cb_wait_front(cb=" << cb << ", " << pages
          << " pages): more than the CB's capacity of " << c.num_pages
          << " pages, can never be satisfied";
        fail("deadlock", m.str());
    }
    std::unique_lock<std::mutex> lk(g.mu);
    block_until(lk, "cb_wait_front", cb, pages, true);
    if (pages > c.waited)
        c.waited = pages;
}

void cb_pop_front(uint32_t cb, uint32_t pages) {
    CbState& c = cb_checked(cb, "cb_pop_front");
    if (pages > c.waited) {
        std::ostringstream m;
        m << "cb_pop_front(cb=" << cb << ", " << pages << " pages): only " << c.waited
          << " pages were waited for (cb_wait_front) and not yet popped";
        fail("protocol", m.str());
    }
    std::lock_guard<std::mutex> lk(g.mu);
    c.waited -= pages;
    c.rd_page = (c.rd_page + pages) % c.num_pages;
    c.popped.store(c.popped.load(std::memory_order_relaxed) + pages, std::memory_order_release);
    wake_satisfied(true);
}

void cb_reserve_back(uint32_t cb, uint32_t pages) {
    CbState& c = cb_checked(cb, "cb_reserve_back");
    if (pages > c.num_pages) {
        std::ostringstream m;
        m << "cb_reserve_back(cb=" << cb << ", " << pages
          << " pages): more than the CB's capacity of " << c.num_pages
          << " pages, can never be satisfied";
        fail("deadlock", m.str());
    }
    {
        std::unique_lock<std::mutex> lk(g.mu);
        block_until(lk, "cb_reserve_back", cb, pages, false);
    }
    if (g.cfg.poison_reserve) {
        // Hardware leaves stale data in a fresh reservation; NaN makes reading or
        // accumulating into it before the first write visible in the output.
        for (uint32_t p = c.reserved; p < pages; ++p)
            poison_fill(c.page(c.wr_page + p), c.page_size);
    }
    if (pages > c.reserved)
        c.reserved = pages;
}

void cb_push_back(uint32_t cb, uint32_t pages) {
    CbState& c = cb_checked(cb, "cb_push_back");
    if (pages > c.reserved) {
        std::ostringstream m;
        m << "cb_push_back(cb=" << cb << ", " << pages << " pages): only " << c.reserved
          << " pages were reserved (cb_reserve_back) and not yet pushed";
        fail("protocol", m.str());
    }
    std::lock_guard<std::mutex> lk(g.mu);
    c.reserved -= pages;
    c.wr_page = (c.wr_page + pages) % c.num_pages;
    c.pack_next = 0;
    c.pushed.store(c.pushed.load(std::memory_order_relaxed) + pages, std::memory_order_release);
    wake_satisfied(true);
}

uint32_t cb_write_addr(uint32_t cb) {
    CbState& c = cb_checked(cb, "get_write_ptr");
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(c.page(c.wr_page)));
}
uint32_t cb_read_addr(uint32_t cb) {
    CbState& c = cb_checked(cb, "get_read_ptr");
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(c.page(c.rd_page)));
}
uint32_t cb_page_size(uint32_t cb) {
    return cb_checked(cb, "get_tile_size").page_size;
}
DataFormat cb_format(uint32_t cb) {
    return cb_checked(cb, "get_dataformat").format;
}

} // namespace ttlemu
