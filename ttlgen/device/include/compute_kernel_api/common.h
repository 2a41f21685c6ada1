// tt-metal compute_kernel_api/common.h for the host emulator. The UNPACK/MATH/PACK
// selectors run their statement once: one host thread plays all three TRISCs,
// and the runtime's DST state machine enforces the hand-over order they would.
#pragma once
#include "ttlemu/compute.hpp"
// As in tt-metal, common.h brings the pack and reconfig calls.
#include "compute_kernel_api/pack.h"
#include "compute_kernel_api/reconfig_data_format.h"

#ifndef NAMESPACE
#define NAMESPACE ttlemu_compute
#endif
#ifndef MAIN
#define MAIN compute_main()
#endif

#define UNPACK(x) x
#define MATH(x)   x
#define PACK(x)   x

enum PoolType { SUM, AVG, MAX };
enum ReduceDim { REDUCE_ROW, REDUCE_COL, REDUCE_SCALAR };
enum class BroadcastType { NONE, ROW, COL, SCALAR };
enum class MathFidelity : uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4 };

namespace ckernel {
ALWI void tile_regs_acquire() {
    ttlemu::compute::regs_acquire();
}
ALWI void tile_regs_commit() {
    ttlemu::compute::regs_commit();
}
ALWI void tile_regs_wait() {
    ttlemu::compute::regs_wait();
}
ALWI void tile_regs_release() {
    ttlemu::compute::regs_release();
}
// Pre-split names kept by older kernels.
ALWI void acquire_dst() {
    ttlemu::compute::regs_acquire();
}
ALWI void release_dst() {
    ttlemu::compute::regs_commit();
    ttlemu::compute::regs_wait();
    ttlemu::compute::regs_release();
}
ALWI uint32_t get_compile_time_arg(uint32_t i) {
    return kernel_compile_time_args[i];
}
} // namespace ckernel
using namespace ckernel; // tt-metal kernels call the API unqualified
