// FPU matmul into DST. Operands are unpacked at the call into row-major arrays
// already narrowed to what the multiplier sees for the configured fidelity; the
// accumulation itself (fpu_matmul.cpp: fpu.hpp, NUMERICS.md) is deferred. A call
// only records, per DST tile, which operands it adds; the recorded chains land in
// DST when something next touches it (matmul_flush: any other math on DST, the
// commit that hands DST to the packer, the end of the compute kernel), each tile's
// calls in program order. The chains of different tiles, and the row groups of one
// tile, are independent, so they are split between the compute thread and the
// helper thread of tile_pool.hpp: one hand-over per flush (a subblock's whole K
// loop) rather than per call, which is what let the helper keep up (per call it took
// 20-45% of the tiles at K = 8, for want of time to notice each call).
#include <sstream>
#include <vector>

#include "dst.hpp"
#include "fpu.hpp"
#include "tile_pool.hpp"
#include "ttlemu/compute.hpp"
#include "unpack.hpp"

namespace ttlemu {

namespace {

constexpr int kMaxBlock = 16;
constexpr int kDstTiles = sizeof(DstState::regs[0]) / sizeof(DstState::regs[0][0]);
// Operand tiles the recorded calls may hold before they are flushed: a bf16 K = 32
// subblock of 2x4 tiles (6 operands a call) lands at once; 1.5 MiB, touched at start-up.
constexpr int kBatchOperands = 192;
static_assert(kBatchOperands >= 2 * kMaxBlock, "a call's operands (rt_dim + ct_dim) fit a batch");

struct Operand {
    float main[kTileElems];  // row-major, the bits every fidelity pass uses
    float extra[kTileElems]; // row-major, the HiFi3 cross term's operand
};

// The calls recorded since the last flush (one compute thread per process). Operands
// are never moved once unpacked: chains point into `operands`.
struct Batch {
    alignas(64) Operand operands[kBatchOperands];
    int used = 0;
    // chains[t]: the operands of every recorded call on DST tile t of `half`, in order.
    std::vector<MatmulOperands> chains[kDstTiles];
    float* half = nullptr;
    FpuAccum f;
    bool hifi3 = false;
    // The flush's work units: (tile, row group) pairs.
    struct Unit {
        int tile;
        int group;
    };
    std::vector<Unit> units;
};

Batch batch;

void run_unit(const void* ctx, int index) {
    const Batch& b = *static_cast<const Batch*>(ctx);
    const Batch::Unit u = b.units[index];
    const std::vector<MatmulOperands>& chain = b.chains[u.tile];
    matmul_chain(chain.data(), static_cast<int>(chain.size()),
                 b.half + static_cast<size_t>(u.tile) * kTileElems, b.f, u.group);
}

// A tile of CB `cb` unpacked as unpack_src does, in row-major order (transposed
// if asked). bf16 tiles, the common case, are decoded straight into place. Returns
// whether every value is finite (the vector accumulation paths need that).
bool unpack_row_major(uint32_t cb, const uint8_t* data, float* rm, bool transpose) {
    if (!transpose && g.cbs[cb].format == DataFormat::Float16_b)
        return bf16_row_major(reinterpret_cast<const uint16_t*>(data), rm);
    float faces[kTileElems];
    unpack_src(cb, data, faces);
    for (int r = 0; r < 32; ++r)
        for (int c = 0; c < 32; ++c)
            rm[r * 32 + c] = transpose ? faces[tile_index(c, r)] : faces[tile_index(r, c)];
    return all_finite(rm, kTileElems);
}

// in0 sits in SrcB: its high part keeps kSrcBHiBits; in1 in SrcA keeps kSrcAHiBits.
// LoFi: hiA*hiB. HiFi2: A*hiB. HiFi3: A*hiB + hiA*loB. HiFi4: A*B.
// `op.main` already holds the full operand (row-major) on entry.
void prepare_in0(Operand& op, int fid) {
    if (fid == 4)
        return;
    std::memcpy(op.extra, op.main, sizeof op.extra);
    round_block(op.main, kTileElems, kSrcBHiBits, Rounding::Truncate);
    for (int i = 0; i < kTileElems; ++i)
        op.extra[i] -= op.main[i];
}
void prepare_in1(Operand& op, int fid) {
    if (fid == 2 || fid == 4)
        return;
    std::memcpy(op.extra, op.main, sizeof op.extra);
    round_block(op.extra, kTileElems, kSrcAHiBits, Rounding::Truncate);
    if (fid == 0)
        std::memcpy(op.main, op.extra, sizeof op.main);
}

} // namespace

void matmul_flush() {
    if (batch.used == 0)
        return;
    const int groups = row_groups(best_isa(), batch.hifi3).n;
    batch.units.clear();
    for (int t = 0; t < kDstTiles; ++t)
        if (!batch.chains[t].empty())
            for (int g = 0; g < groups; ++g)
                batch.units.push_back(Batch::Unit{t, g});
    run_shared(run_unit, &batch, static_cast<int>(batch.units.size()));
    for (std::vector<MatmulOperands>& chain : batch.chains)
        chain.clear();
    batch.used = 0;
}

void matmul_prefault() {
    std::memset(static_cast<void*>(batch.operands), 0, sizeof batch.operands);
    for (std::vector<MatmulOperands>& chain : batch.chains)
        chain.reserve(kBatchOperands);
    batch.units.reserve(static_cast<size_t>(kDstTiles) * kMaxRowGroups);
}

namespace compute {

void matmul(uint32_t in0, uint32_t in1, uint32_t tile0, uint32_t tile1, uint32_t dst,
            bool transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim) {
    const char* call = (ct_dim == 1 && rt_dim == 1) ? "matmul_tiles" : "matmul_block";
    if (ct_dim == 0 || rt_dim == 0 || ct_dim > kMaxBlock || rt_dim > kMaxBlock) {
        std::ostringstream m;
        m << call << ": block " << rt_dim << "x" << ct_dim << " tiles is outside 1..16";
        fail("protocol", m.str());
    }
    dst_math_check(dst, call);
    check_dst_range(dst, ct_dim * rt_dim, call);
    const int fid = g.cfg.math_fidelity;
    const FpuAccum f = fpu_accum();
    float* half = g.dst.regs[g.dst.math_half][0];
    // A batch holds calls of one configuration on one DST half (a commit flushes
    // before the half changes hands).
    if (batch.used + static_cast<int>(rt_dim + ct_dim) > kBatchOperands ||
        (batch.used > 0 && (batch.half != half || batch.f.dst16 != f.dst16 ||
                            batch.f.mode != f.mode || batch.hifi3 != (fid == 3))))
        matmul_flush();
    Operand* a_ops = batch.operands + batch.used;
    Operand* b_ops = a_ops + rt_dim;
    // Truncating to the multiplier's bits keeps NaN and Inf non-finite, so the
    // unpacked values tell whether the vector accumulation paths apply.
    bool finite = true;
    for (uint32_t r = 0; r < rt_dim; ++r) {
        finite &= unpack_row_major(in0, read_tile(in0, tile0 + r * kt_dim, call, true, false),
                                   a_ops[r].main, false);
        prepare_in0(a_ops[r], fid);
    }
    for (uint32_t c = 0; c < ct_dim; ++c) {
        finite &= unpack_row_major(in1, read_tile(in1, tile1 + c, call, true, true), b_ops[c].main,
                                   transpose);
        prepare_in1(b_ops[c], fid);
    }
    batch.used += static_cast<int>(rt_dim + ct_dim);
    batch.half = half;
    batch.f = f;
    batch.hifi3 = fid == 3;
    // check_dst_range bounds dst + rt_dim * ct_dim by DST's capacity.
    for (uint32_t r = 0; r < rt_dim; ++r) {
        for (uint32_t c = 0; c < ct_dim; ++c) {
            batch.chains[dst + r * ct_dim + c].push_back(
                MatmulOperands{a_ops[r].main, b_ops[c].main, fid == 3 ? a_ops[r].extra : nullptr,
                               fid == 3 ? b_ops[c].extra : nullptr, finite});
        }
    }
}

} // namespace compute
} // namespace ttlemu
