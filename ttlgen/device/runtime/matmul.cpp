// FPU matmul into DST. Operands are unpacked once per call into row-major
// arrays already narrowed to what the multiplier sees for the configured
// fidelity; fpu_matmul.cpp accumulates them into DST (fpu.hpp, NUMERICS.md), the
// call's tiles shared with the helper thread of tile_pool.hpp.
#include <sstream>

#include "dst.hpp"
#include "fpu.hpp"
#include "tile_pool.hpp"
#include "ttlemu/compute.hpp"
#include "unpack.hpp"

namespace ttlemu {

namespace {

constexpr int kMaxBlock = 16;
static_assert(kMaxSharedTiles >= sizeof(DstState::regs[0]) / sizeof(DstState::regs[0][0]),
              "a matmul call's tiles all lie in one half of DST");

struct Operand {
    float main[kTileElems];  // row-major, the bits every fidelity pass uses
    float extra[kTileElems]; // row-major, the HiFi3 cross term's operand
};

// Unpacked operands of one call (one compute thread per process).
Operand a_ops[kMaxBlock], b_ops[kMaxBlock];

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

void matmul_prefault() {
    std::memset(static_cast<void*>(a_ops), 0, sizeof a_ops);
    std::memset(static_cast<void*>(b_ops), 0, sizeof b_ops);
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
    dst_math(dst, call);
    check_dst_range(dst, ct_dim * rt_dim, call);
    const int fid = g.cfg.math_fidelity;
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
    // check_dst_range bounds rt_dim * ct_dim by DST's capacity (16 tiles at most).
    float* half = g.dst.regs[g.dst.math_half][0];
    MatmulOperands ops[kMaxSharedTiles];
    float* tiles[kMaxSharedTiles];
    int n = 0;
    for (uint32_t r = 0; r < rt_dim; ++r) {
        for (uint32_t c = 0; c < ct_dim; ++c, ++n) {
            tiles[n] = half + static_cast<size_t>(dst + r * ct_dim + c) * kTileElems;
            ops[n] =
                MatmulOperands{a_ops[r].main, b_ops[c].main, fid == 3 ? a_ops[r].extra : nullptr,
                               fid == 3 ? b_ops[c].extra : nullptr, finite};
        }
    }
    matmul_tiles_shared(ops, tiles, n, fpu_accum());
}

} // namespace compute
} // namespace ttlemu
