// A helper thread on another core that shares work units with the compute thread:
// the units of one call are independent of each other (a matmul's DST tiles and their
// row groups, fpu.hpp), so which thread runs a unit changes no bit; the compute kernel
// itself still runs on one thread, in program order.
#pragma once

namespace ttlemu {

// Starts the helper thread, first placed on `cpu` (then free to move); none when the
// process may use only one CPU or `cpu` is negative.
void tile_pool_start(int cpu);
// Ends the helper thread (after the kernels have finished).
void tile_pool_stop();

// One unit of shared work: unit `index` of the call whose data `ctx` points to.
using WorkUnit = void (*)(const void* ctx, int index);

// work(ctx, i) for every i < n, each exactly once, the helper taking units while the
// caller takes the others; returns when all are done. Without a helper (or with one
// unit), the caller runs them all in order.
void run_shared(WorkUnit work, const void* ctx, int n);

// Units the helper has run since start (for tests).
long tile_pool_helper_units();

} // namespace ttlemu
