// The tiles of one matmul call, shared between the compute thread and a helper
// thread on another core. Each tile's accumulation chain is independent of every
// other tile's, so which thread computes a tile changes no bit; the compute kernel
// itself still runs on one thread, in program order.
#pragma once
#include "fpu.hpp"

namespace ttlemu {

// Most tiles one call shares: a matmul_block's tiles all lie in DST (16 at most).
constexpr int kMaxSharedTiles = 16;

// Starts the helper thread, first placed on `cpu` (then free to move); none when the
// process may use only one CPU or `cpu` is negative.
void tile_pool_start(int cpu);
// Ends the helper thread (after the kernels have finished).
void tile_pool_stop();

// matmul_tile(ops[i], tiles[i], f) for every i < n (n <= kMaxSharedTiles), each
// exactly once, the helper taking tiles while the caller takes the others; returns
// when all are done. Without a helper, the caller computes them all in order.
void matmul_tiles_shared(const MatmulOperands* ops, float* const* tiles, int n, const FpuAccum& f);

// Tiles the helper has computed since start (for tests).
long tile_pool_helper_tiles();

} // namespace ttlemu
