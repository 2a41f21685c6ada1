// The helper thread of tile_pool.hpp. A call is published under the pool's mutex
// (its work function and data, and a new generation number); the units are then
// claimed one at a time from an atomic word holding the generation and the next
// unclaimed index, so a helper still holding an older call can never claim a unit of
// a newer one, and every unit is claimed exactly once.
#include "tile_pool.hpp"

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ttlemu {

namespace {

// How long an idle helper polls for the next call before it sleeps: a kernel's
// shared calls follow each other within tens of microseconds, and waking a sleeping
// helper costs the caller a futex call and the helper the start of the call.
constexpr int kHelperPollUs = 200;
// How long the caller busy-waits for the helper's last unit (one takes a few
// microseconds) before it yields the core, in case the helper is waiting for it.
constexpr int kCallerSpinUs = 10;

struct Job {
    WorkUnit work = nullptr;
    const void* ctx = nullptr;
    int n = 0;
};

struct Pool {
    std::thread thread;
    std::mutex mu;              // guards job, asleep, stop and changes of published
    std::condition_variable cv; // an idle helper sleeps here
    Job job;                    // written by the caller only, under mu, between calls
    bool asleep = false;
    bool stop = false;
    // Polled without the lock: the generation of the last call published (a stop
    // publishes one more), the claim word (generation << 32 | next unclaimed unit) and
    // the units finished.
    std::atomic<uint32_t> published{0};
    std::atomic<uint64_t> claim{0};
    std::atomic<int> done{0};
    std::atomic<long> helper_units{0};
};

Pool pool;

// The next unit of call `generation` (of n units), or -1 when none is left.
int claim_unit(uint32_t generation, int n) {
    uint64_t word = pool.claim.load(std::memory_order_acquire);
    for (;;) {
        if (static_cast<uint32_t>(word >> 32) != generation)
            return -1;
        const int next = static_cast<int>(word & 0xffffffffu);
        if (next >= n)
            return -1;
        if (pool.claim.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel,
                                             std::memory_order_acquire))
            return next;
    }
}

void run_claimed(const Job& job, uint32_t generation, bool helper) {
    for (int i = claim_unit(generation, job.n); i >= 0; i = claim_unit(generation, job.n)) {
        job.work(job.ctx, i);
        if (helper)
            pool.helper_units.fetch_add(1, std::memory_order_relaxed);
        pool.done.fetch_add(1, std::memory_order_release);
    }
}

void helper_main() {
    uint32_t seen = 0;
    Job job;
    for (;;) {
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::microseconds(kHelperPollUs);
        while (pool.published.load(std::memory_order_acquire) == seen) {
            std::this_thread::yield();
            if (std::chrono::steady_clock::now() > until) {
                std::unique_lock<std::mutex> lk(pool.mu);
                pool.asleep = true;
                pool.cv.wait(lk, [&] {
                    return pool.stop || pool.published.load(std::memory_order_relaxed) != seen;
                });
                pool.asleep = false;
                break;
            }
        }
        uint32_t generation = 0;
        {
            std::lock_guard<std::mutex> lk(pool.mu);
            if (pool.stop)
                return;
            generation = pool.published.load(std::memory_order_relaxed);
            job = pool.job;
        }
        seen = generation;
        run_claimed(job, generation, true);
    }
}

} // namespace

void tile_pool_start(int cpu) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (cpu < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2)
        return;
    pool.thread = std::thread([cpu, allowed] {
#ifndef TTLEMU_NO_PINNING // bench/emulator_devices.py measures the placement without it
        cpu_set_t home;
        CPU_ZERO(&home);
        CPU_SET(cpu, &home);
        pthread_setaffinity_np(pthread_self(), sizeof home, &home);
        pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
#endif
        helper_main();
    });
}

void tile_pool_stop() {
    if (!pool.thread.joinable())
        return;
    {
        std::lock_guard<std::mutex> lk(pool.mu);
        pool.stop = true;
        pool.published.fetch_add(1, std::memory_order_release);
    }
    pool.cv.notify_one();
    pool.thread.join();
}

void run_shared(WorkUnit work, const void* ctx, int n) {
    if (n < 2 || !pool.thread.joinable()) {
        for (int i = 0; i < n; ++i)
            work(ctx, i);
        return;
    }
    uint32_t generation = 0;
    bool wake = false;
    {
        std::lock_guard<std::mutex> lk(pool.mu);
        pool.job = Job{work, ctx, n};
        generation = pool.published.load(std::memory_order_relaxed) + 1;
        pool.done.store(0, std::memory_order_relaxed);
        pool.claim.store(static_cast<uint64_t>(generation) << 32, std::memory_order_release);
        pool.published.store(generation, std::memory_order_release);
        wake = pool.asleep;
    }
    if (wake)
        pool.cv.notify_one();
    run_claimed(pool.job, generation, false);
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kCallerSpinUs);
    while (pool.done.load(std::memory_order_acquire) < n) {
        if (std::chrono::steady_clock::now() < until)
            _mm_pause();
        else
            std::this_thread::yield();
    }
}

long tile_pool_helper_units() {
    return pool.helper_units.load(std::memory_order_relaxed);
}

} // namespace ttlemu
