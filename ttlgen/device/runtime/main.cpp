// Emulator process: reads the run description written by the Python harness
// (ttlgen/device/harness.py, format in PROGRAM_JSON.md "Run file"), maps L1 and
// DRAM below 4 GiB, runs reader, compute and writer as threads and writes a
// result file. Any failure becomes a result record, never a crash or a hang.
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "state.hpp"
#include "tile_pool.hpp"

void ttlemu_reader_main();
void ttlemu_writer_main();
namespace ttlemu_compute {
void compute_main();
}

namespace ttlemu {
void kernel_finished();
void check_compute_end();
void matmul_prefault();
} // namespace ttlemu

using namespace ttlemu;

namespace {

constexpr uintptr_t kL1Base = 0x20000000u;

void* map_low(uintptr_t addr, size_t size) {
    void* p = mmap(reinterpret_cast<void*>(addr), size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED || reinterpret_cast<uintptr_t>(p) != addr)
        return nullptr;
    return p;
}

[[noreturn]] void die_config(const std::string& result_path, const std::string& msg) {
    std::ofstream r(result_path);
    r << "status error\nkind config\nmessage\n" << msg << "\n";
    r.close();
    std::_Exit(2);
}

Rounding parse_rounding(const std::string& s) {
    if (s == "ties_away")
        return Rounding::TiesAway;
    if (s == "nearest_even")
        return Rounding::NearestEven;
    if (s == "truncate")
        return Rounding::Truncate;
    throw std::runtime_error("unknown rounding mode " + s);
}

DataFormat parse_format(const std::string& s) {
    if (s == "Float32")
        return DataFormat::Float32;
    if (s == "Float16_b")
        return DataFormat::Float16_b;
    if (s == "Bfp8_b")
        return DataFormat::Bfp8_b;
    throw std::runtime_error("unsupported CB format " + s);
}

void read_run_file(const char* path) {
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error(std::string("cannot open run file ") + path);
    std::string key;
    while (in >> key) {
        if (key == "result") {
            in >> g.cfg.result;
        } else if (key == "dram") {
            in >> std::hex >> g.cfg.dram_base >> std::dec >> g.cfg.dram_size >> g.cfg.dram_in >>
                g.cfg.dram_out;
        } else if (key == "cb") {
            uint32_t idx, page_size, pages, u2d;
            std::string fmt;
            in >> idx >> fmt >> page_size >> pages >> u2d;
            if (idx >= static_cast<uint32_t>(kMaxCbs))
                throw std::runtime_error("CB index out of range");
            CbState& c = g.cbs[idx];
            c.configured = true;
            c.format = parse_format(fmt);
            c.page_size = page_size;
            c.num_pages = pages;
            c.unpack_to_dest =
                u2d != 0 && c.format == DataFormat::Float32; // inert for other formats
        } else if (key == "compute") {
            int full, fp32, approx, bfp8;
            in >> g.cfg.math_fidelity >> fp32 >> full >> approx >> bfp8;
            g.cfg.fp32_dest_acc_en = fp32 != 0;
            g.cfg.dst_full_sync_en = full != 0;
            g.cfg.math_approx_mode = approx != 0;
            g.cfg.bfp8_pack_precise = bfp8 != 0;
        } else if (key == "numerics") {
            std::string pack, unpack, dst16, sfpu;
            int poison;
            in >> pack >> unpack >> dst16 >> sfpu >> poison;
            g.cfg.pack_rounding = parse_rounding(pack);
            g.cfg.unpack_tf32_rounding = parse_rounding(unpack);
            g.cfg.dst16_rounding = parse_rounding(dst16);
            g.cfg.sfpu_dst16_rounding = parse_rounding(sfpu);
            g.cfg.poison_reserve = poison != 0;
        } else if (key == "timeout") {
            in >> g.cfg.timeout_s;
        } else if (key == "args") {
            std::string role;
            size_t n;
            in >> role >> n;
            int k = role == "reader" ? 0 : role == "compute" ? 1 : role == "writer" ? 2 : -1;
            if (k < 0)
                throw std::runtime_error("unknown kernel role " + role);
            g.kernels[k].args.resize(n);
            for (size_t i = 0; i < n; ++i)
                in >> g.kernels[k].args[i];
        } else if (key == "end") {
            return;
        } else {
            throw std::runtime_error("unknown run file key " + key);
        }
        if (!in)
            throw std::runtime_error("malformed run file near key " + key);
    }
    throw std::runtime_error("run file has no end marker");
}

void validate_config() {
    const DstState& d = g.dst;
    (void)d;
    for (int i = 0; i < kMaxCbs; ++i) {
        const CbState& c = g.cbs[i];
        if (!c.configured)
            continue;
        if (c.unpack_to_dest && c.format == DataFormat::Float32 && !g.cfg.fp32_dest_acc_en) {
            throw std::runtime_error(
                "CB " + std::to_string(i) +
                " is UnpackToDestFp32 but fp32_dest_acc_en is false: unpack to DST at fp32 "
                "needs the 32-bit DST");
        }
        const uint32_t want = c.format == DataFormat::Float32     ? 4096u
                              : c.format == DataFormat::Float16_b ? 2048u
                                                                  : kBfp8TileBytes;
        if (c.page_size != want) {
            throw std::runtime_error(
                "CB " + std::to_string(i) + " page_size " + std::to_string(c.page_size) +
                " does not hold one 32x32 tile of its format (" + std::to_string(want) + ")");
        }
    }
}

void setup_memory() {
    size_t total = 0;
    for (const CbState& c : g.cbs) {
        if (c.configured)
            total += (static_cast<size_t>(c.page_size) * c.num_pages + 63) & ~size_t(63);
    }
    g.l1_size = total + 4096;
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t l1_map = (g.l1_size + page - 1) / page * page;
    g.l1 = static_cast<uint8_t*>(map_low(kL1Base, l1_map));
    if (!g.l1)
        throw std::runtime_error("cannot map emulated L1 at 0x20000000");
    // Fresh L1 holds stale garbage on hardware; NaN makes its use visible.
    poison_fill(g.l1, l1_map);
    size_t off = 0;
    for (CbState& c : g.cbs) {
        if (!c.configured)
            continue;
        c.base = g.l1 + off;
        off += (static_cast<size_t>(c.page_size) * c.num_pages + 63) & ~size_t(63);
    }
    const size_t dram_map = (g.cfg.dram_size + page - 1) / page * page;
    if (g.cfg.dram_base + dram_map > (1ull << 32))
        throw std::runtime_error("DRAM image does not fit below 4 GiB");
    g.dram = static_cast<uint8_t*>(
        map_low(static_cast<uintptr_t>(g.cfg.dram_base), dram_map ? dram_map : page));
    if (!g.dram)
        throw std::runtime_error("cannot map emulated DRAM at its base address");
    std::ifstream img(g.cfg.dram_in, std::ios::binary);
    if (!img.read(reinterpret_cast<char*>(g.dram), static_cast<std::streamsize>(g.cfg.dram_size))) {
        throw std::runtime_error("cannot read DRAM image " + g.cfg.dram_in);
    }
}

// Where the threads start: compute on the main thread's CPU, which main leaves to
// sleep, and reader, writer and the matmul helper (tile_pool.hpp) on another. Each
// kernel thread is then free to move. Left to itself the scheduler started compute
// and the reader on the same core in 9 runs of 10 on the 2-core machine and did not
// separate them within a run, which also left the helper no core of its own.
struct Placement {
    cpu_set_t allowed;
    int compute = -1; // -1: no hint (one CPU allowed)
    int other = -1;
};

Placement placement() {
    Placement p;
    CPU_ZERO(&p.allowed);
    if (sched_getaffinity(0, sizeof p.allowed, &p.allowed) != 0)
        return p;
    const int here = sched_getcpu();
    for (int c = 0; c < CPU_SETSIZE && p.other < 0; ++c) {
        if (c != here && CPU_ISSET(c, &p.allowed))
            p.other = c;
    }
    if (p.other >= 0 && here >= 0 && CPU_ISSET(here, &p.allowed))
        p.compute = here;
    else
        p.other = -1;
    return p;
}

void pin_self(int cpu) {
#ifdef TTLEMU_NO_PINNING // bench/emulator_devices.py measures the placement without it
    return;
#endif
    cpu_set_t home;
    CPU_ZERO(&home);
    CPU_SET(cpu, &home);
    pthread_setaffinity_np(pthread_self(), sizeof home, &home);
}

template <typename F>
void run_kernel(int k, F body) {
    t_self = &g.kernels[k];
    try {
        body();
        if (k == 1)
            check_compute_end();
    } catch (const EmuError& e) {
        std::lock_guard<std::mutex> lk(g.mu);
        record_error(e.kind, e.what());
    } catch (const Abort&) {
    } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lk(g.mu);
        record_error("runtime", std::string(t_self->name) + ": " + e.what());
    }
    kernel_finished();
}

void write_result(const char* status, double elapsed_ns) {
    std::ofstream r(g.cfg.result);
    r << "status " << status << "\n";
    r << "elapsed_ns " << static_cast<long long>(elapsed_ns) << "\n";
    for (const std::string& w : g.warnings)
        r << "warning " << w << "\n";
    if (!g.err_kind.empty())
        r << "kind " << g.err_kind << "\n";
    r << "message\n" << g.err_msg << "\n";
}

void leftover_warnings() {
    for (int i = 0; i < kMaxCbs; ++i) {
        const CbState& c = g.cbs[i];
        if (c.configured && c.available() != 0) {
            g.warnings.push_back("CB " + std::to_string(i) + " ended with " +
                                 std::to_string(c.available()) + " pushed pages never popped");
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s RUNFILE\n", argv[0]);
        return 2;
    }
    try {
        read_run_file(argv[1]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ttlemu: %s\n", e.what());
        return 2;
    }
    try {
        validate_config();
        setup_memory();
    } catch (const std::exception& e) {
        die_config(g.cfg.result, e.what());
    }
    g.kernels[0].name = "reader";
    g.kernels[1].name = "compute";
    g.kernels[2].name = "writer";
    g.dst.halves = g.cfg.dst_full_sync_en ? 1 : 2;
    g.dst.capacity = (g.cfg.fp32_dest_acc_en ? 8u : 16u) / static_cast<uint32_t>(g.dst.halves);

    // DST is a register file that exists before the program: touch it (and the
    // matmul operand buffers) now, so that page faults of their first use are not
    // counted as kernel time.
    std::memset(static_cast<void*>(&g.dst.regs), 0, sizeof g.dst.regs);
    matmul_prefault();
    const Placement where = placement();
    tile_pool_start(where.other);
    // The kernels start together once all three threads have run up to the start
    // line; kernel time counts from there (creating a thread and its first time on a
    // core are process start-up, not kernel work) to the last kernel's end
    // (g.finished_at; waking this thread and the joins are not kernel work).
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    auto start = [&ready, &go, &where](int k, void (*body)()) {
        if (where.compute >= 0)
            pin_self(k == 1 ? where.compute : where.other);
        ready.fetch_add(1, std::memory_order_release);
        while (!go.load(std::memory_order_acquire))
            std::this_thread::yield();
        if (where.compute >= 0)
            pthread_setaffinity_np(pthread_self(), sizeof where.allowed, &where.allowed);
        run_kernel(k, body);
    };
    std::thread reader(start, 0, ttlemu_reader_main);
    std::thread compute(start, 1, ttlemu_compute::compute_main);
    std::thread writer(start, 2, ttlemu_writer_main);
    while (ready.load(std::memory_order_acquire) < 3)
        std::this_thread::yield();
    const auto t0 = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);

    {
        // A kernel spinning outside the API never blocks, so deadlock detection
        // cannot see it: the wall-clock limit turns that into a timeout record.
        std::unique_lock<std::mutex> lk(g.mu);
        const auto deadline = t0 + std::chrono::duration<double>(g.cfg.timeout_s);
        auto all_done = [] {
            for (const Kernel& k : g.kernels)
                if (k.state != KState::Done)
                    return false;
            return true;
        };
        if (!g.cv.wait_until(lk, deadline, all_done)) {
            std::string msg =
                "timeout: kernels still running after " + std::to_string(g.cfg.timeout_s) + " s;";
            for (const Kernel& k : g.kernels) {
                msg += std::string(" ") + k.name +
                       (k.state == KState::Done      ? " finished"
                        : k.state == KState::Blocked ? " blocked in " + std::string(k.wait_call) +
                                                           "(cb=" + std::to_string(k.wait_cb) + ")"
                                                     : " running (not in a CB wait)") +
                       ";";
            }
            if (g.err_kind.empty()) {
                g.err_kind = "timeout";
                g.err_msg = msg;
            }
            write_result("error", 0);
            std::_Exit(3);
        }
    }
    reader.join();
    compute.join();
    writer.join();
    tile_pool_stop();
    const double ns = std::chrono::duration<double, std::nano>(g.finished_at - t0).count();
    if (g.err_kind.empty())
        leftover_warnings();
    std::ofstream out(g.cfg.dram_out, std::ios::binary);
    out.write(reinterpret_cast<const char*>(g.dram), static_cast<std::streamsize>(g.cfg.dram_size));
    out.close();
    write_result(g.err_kind.empty() ? "ok" : "error", ns);
    return g.err_kind.empty() ? 0 : 1;
}
