// Compute-kernel operations other than matmul: the DST state machine, unpacker,
// FPU eltwise / reduce / broadcast / transpose, SFPU ops and the packer.
#include <cmath>
#include <sstream>

#include "dst.hpp"
#include "ttlemu/compute.hpp"
#include "unpack.hpp"

namespace ttlemu {

namespace {

const char* format_name(DataFormat f) {
    switch (f) {
    case DataFormat::Float32:
        return "Float32";
    case DataFormat::Float16_b:
        return "Float16_b";
    case DataFormat::Bfp8_b:
        return "Bfp8_b";
    default:
        return "unsupported";
    }
}

std::string sync_name() {
    std::string s = g.cfg.fp32_dest_acc_en ? "32-bit DST" : "16-bit DST";
    s += g.cfg.dst_full_sync_en ? ", full sync" : ", double-buffered";
    return s;
}

void check_unpack_format(int configured, uint32_t cb, const char* call, const char* reg) {
    const CbState& c = g.cbs[cb];
    if (configured < 0) {
        std::ostringstream m;
        m << call << "(cb=" << cb << "): the unpacker was never configured (call "
          << "compute_kernel_hw_startup first; at the legacy level, a full init such as "
          << "binary_op_init_common)";
        fail("protocol", m.str());
    }
    if (g.cbs[configured].format != c.format) {
        std::ostringstream m;
        m << call << "(cb=" << cb << ", " << format_name(c.format) << "): " << reg
          << " is configured for " << format_name(g.cbs[configured].format) << " (CB " << configured
          << "); reconfigure with reconfig_data_format first";
        fail("protocol", m.str());
    }
}

// The element of a tile (face layout) that a broadcast of `type` (BroadcastType: 0 NONE,
// 1 ROW, 2 COL, 3 SCALAR) puts at row r, column c.
int bcast_index(int type, int r, int c) {
    return type == 1   ? tile_index(0, c)
           : type == 2 ? tile_index(r, 0)
           : type == 3 ? 0
                       : tile_index(r, c);
}

// The fidelity an FPU eltwise op runs at: mul at the configured MATH_FIDELITY, add and sub
// at LoFi whatever it says (eltwise_binary.h@00b0fa3f; any_tiles_bcast, bcast.h@00b0fa3f).
int eltwise_fidelity(compute::Fpu2 op) {
    return op == compute::Fpu2::Mul ? g.cfg.math_fidelity : kLoFi;
}

// The FPU issues an eltwise instruction once per phase of its fidelity, and the phases'
// results accumulate in DST: that is how HiFi-N sums mul's partial products (fidelity_mul).
// The adder sees whole SrcA/SrcB values, so an add or sub issued in LoFi's one phase is
// the exact sum (a second phase would add it again).
float fpu_eltwise(compute::Fpu2 op, float a, float b, int fidelity) {
    if (op == compute::Fpu2::Mul)
        return fidelity_mul(a, b, fidelity);
    const float once = op == compute::Fpu2::Add ? a + b : a - b;
    float r = once;
    for (int phase = 1; phase < fidelity_phases(fidelity); ++phase)
        r += once;
    return r;
}

} // namespace

std::string dst_state() {
    const DstState& d = g.dst;
    std::ostringstream m;
    m << "DST state: math " << (d.math_half >= 0 ? "holds a half" : "holds nothing") << ", "
      << d.n_committed << " committed half(s) waiting for pack, pack "
      << (d.pack_half >= 0 ? "holds a half" : "holds nothing");
    return m.str();
}

void check_dst_range(uint32_t first, uint32_t count, const char* call) {
    if (first + count > g.dst.capacity) {
        std::ostringstream m;
        m << call << ": DST index " << first + count - 1 << " beyond capacity " << g.dst.capacity
          << " tiles (" << sync_name() << ")";
        fail("protocol", m.str());
    }
}

void dst_math_check(uint32_t index, const char* call) {
    if (g.dst.math_half < 0) {
        std::ostringstream m;
        m << call << "(dst=" << index << "): math uses DST without tile_regs_acquire ("
          << dst_state() << ")";
        fail("protocol", m.str());
    }
    check_dst_range(index, 1, call);
}

float* dst_math(uint32_t index, const char* call) {
    dst_math_check(index, call);
    matmul_flush();
    return g.dst.regs[g.dst.math_half][index];
}

const uint8_t* read_tile(uint32_t cb, uint32_t tile, const char* call, bool fpu, bool srca) {
    CbState& c = cb_checked(cb, call);
    if (tile >= c.waited) {
        std::ostringstream m;
        m << call << "(cb=" << cb << ", tile=" << tile << "): only " << c.waited
          << " pages were waited for (cb_wait_front) and not yet popped";
        fail("protocol", m.str());
    }
    if (fpu && c.unpack_to_dest) {
        std::ostringstream m;
        m << call << "(cb=" << cb << "): CB " << cb
          << " is configured UnpackToDestFp32, which the FPU cannot read (SrcA/SrcB); copy it to "
             "DST and use an SFPU op";
        fail("protocol", m.str());
    }
    check_unpack_format(srca ? g.srca_cb : g.srcb_cb, cb, call, srca ? "SrcA" : "SrcB");
    return c.page(c.rd_page + tile);
}

void decode_tile(DataFormat format, const uint8_t* data, float* out) {
    if (format == DataFormat::Float32) {
        std::memcpy(out, data, kTileElems * 4);
    } else if (format == DataFormat::Bfp8_b) {
        const uint8_t* mants = data + 64;
        for (int i = 0; i < kTileElems; ++i) {
            const float mag = std::ldexp(static_cast<float>(mants[i] & 0x7f),
                                         static_cast<int>(data[i / 16]) - 127 - 6);
            out[i] = (mants[i] & 0x80) ? -mag : mag;
        }
    } else {
        const uint16_t* h = reinterpret_cast<const uint16_t*>(data);
        for (int i = 0; i < kTileElems; ++i)
            out[i] = bf16_value(h[i]);
    }
}

void unpack_src(uint32_t cb, const uint8_t* data, float* out) {
    decode_tile(g.cbs[cb].format, data, out);
    if (g.cbs[cb].format == DataFormat::Float32) {
        for (int i = 0; i < kTileElems; ++i)
            out[i] = to_tf32(out[i], g.cfg.unpack_tf32_rounding);
    }
}

// Called when the compute kernel returns normally.
void check_compute_end() {
    matmul_flush();
    if (g.l1_acc) {
        fail("protocol",
             "pack_reconfig_l1_acc: L1 accumulation left enabled at the end of the compute kernel "
             "(the flag persists into the next program; call pack_reconfig_l1_acc(0) after the "
             "loop)");
    }
    if (g.dst.math_half >= 0 || g.dst.n_committed > 0 || g.dst.pack_half >= 0) {
        g.warnings.push_back("compute kernel ended with DST not released (" + dst_state() + ")");
    }
}

namespace compute {

void regs_acquire() {
    DstState& d = g.dst;
    if (d.math_half >= 0)
        fail("protocol", "tile_regs_acquire: math already holds DST (missing tile_regs_commit)");
    if (d.held == d.halves) {
        fail("protocol", "tile_regs_acquire: no free DST half; pack has not released (" +
                             dst_state() + "); this hangs on hardware");
    }
    d.math_half = d.next_half;
    d.next_half = (d.next_half + 1) % d.halves;
    d.held++;
}

void regs_commit() {
    DstState& d = g.dst;
    if (d.math_half < 0)
        fail("protocol", "tile_regs_commit without tile_regs_acquire (" + dst_state() + ")");
    // The packer reads what math committed.
    matmul_flush();
    d.committed[d.n_committed++] = d.math_half;
    d.math_half = -1;
}

void regs_wait() {
    DstState& d = g.dst;
    if (d.pack_half >= 0)
        fail("protocol", "tile_regs_wait: pack already holds DST (missing tile_regs_release)");
    if (d.n_committed == 0) {
        fail("protocol", "tile_regs_wait: math has committed nothing (missing tile_regs_commit; " +
                             dst_state() + "); this hangs on hardware");
    }
    d.pack_half = d.committed[0];
    d.committed[0] = d.committed[1];
    d.n_committed--;
}

void regs_release() {
    DstState& d = g.dst;
    if (d.pack_half < 0)
        fail("protocol", "tile_regs_release without tile_regs_wait (" + dst_state() + ")");
    // The packer clears the half it releases, so the next acquire starts from zero.
    std::memset(d.regs[d.pack_half], 0, sizeof(float) * kTileElems * d.capacity);
    d.pack_half = -1;
    d.held--;
}

void configure(const char*, uint32_t srca_cb, uint32_t srcb_cb, uint32_t pack_cb) {
    cb_checked(srca_cb, "configure");
    cb_checked(srcb_cb, "configure");
    cb_checked(pack_cb, "configure");
    g.srca_cb = static_cast<int>(srca_cb);
    g.srcb_cb = static_cast<int>(srcb_cb);
    g.pack_cb = static_cast<int>(pack_cb);
}
void reconfig_srca(uint32_t cb) {
    cb_checked(cb, "reconfig_data_format_srca");
    g.srca_cb = static_cast<int>(cb);
}
void reconfig_srcb(uint32_t cb) {
    cb_checked(cb, "reconfig_data_format_srcb");
    g.srcb_cb = static_cast<int>(cb);
}
void reconfig_pack(uint32_t cb) {
    cb_checked(cb, "pack_reconfig_data_format");
    g.pack_cb = static_cast<int>(cb);
}
void set_binary_acc(bool acc_to_dest) {
    g.binary_acc_to_dest = acc_to_dest;
}

void copy_tile(uint32_t cb, uint32_t tile, uint32_t dst) {
    float* d = dst_math(dst, "copy_tile");
    const uint8_t* data = read_tile(cb, tile, "copy_tile", false, true);
    const CbState& c = g.cbs[cb];
    if (c.unpack_to_dest) {
        decode_tile(c.format, data, d); // straight to the 32-bit DST, no SrcA
        return;
    }
    float v[kTileElems];
    unpack_src(cb, data, v);
    for (int i = 0; i < kTileElems; ++i)
        d[i] = store_fpu(v[i]);
}

void fpu_binary(Fpu2 op, uint32_t cb_a, uint32_t cb_b, uint32_t tile_a, uint32_t tile_b,
                uint32_t dst, int bcast) {
    const char* call = op == Fpu2::Add ? "add_tiles" : op == Fpu2::Sub ? "sub_tiles" : "mul_tiles";
    float* d = dst_math(dst, call);
    float a[kTileElems], b[kTileElems];
    unpack_src(cb_a, read_tile(cb_a, tile_a, call, true, true), a);
    unpack_src(cb_b, read_tile(cb_b, tile_b, call, true, false), b);
    const bool acc = g.binary_acc_to_dest && op != Fpu2::Mul;
    const int fid = eltwise_fidelity(op);
    for (int r = 0; r < 32; ++r) {
        for (int c = 0; c < 32; ++c) {
            const int i = tile_index(r, c);
            float v = fpu_eltwise(op, a[i], b[bcast_index(bcast, r, c)], fid);
            if (acc)
                v += d[i];
            d[i] = store_fpu(v);
        }
    }
}

void sfpu_unary(math::Unary f, uint32_t dst) {
    float* d = dst_math(dst, "sfpu unary op");
    const bool rne = f.rounding == math::Rounding::NearestEven;
    for (int i = 0; i < kTileElems; ++i) {
        const float r = f.evaluate(d[i]);
        d[i] = rne ? store_sfpu_rne(r) : store_sfpu(r);
    }
}

// The rounding comes from the function's math (mul and div round to nearest even before
// their store, eltwise_binary_sfpu.h@1387d4d6) or the kernel's DstRoundingMode::NearestEven
// (add, sub, rsub); the rest store natively (sfpu_dst16_rounding).
void sfpu_binary(math::Binary f, uint32_t dst0, uint32_t dst1, uint32_t dst_out) {
    const float* a = dst_math(dst0, "sfpu binary op");
    const float* b = dst_math(dst1, "sfpu binary op");
    float* o = dst_math(dst_out, "sfpu binary op");
    const bool rne = f.rounding == math::Rounding::NearestEven;
    for (int i = 0; i < kTileElems; ++i) {
        const float r = f.evaluate(a[i], b[i]);
        o[i] = rne ? store_sfpu_rne(r) : store_sfpu(r);
    }
}

void sfpu_constant(uint32_t dst, float value) {
    float* d = dst_math(dst, "sfpu nullary op");
    const float v = store_sfpu(value);
    for (int i = 0; i < kTileElems; ++i)
        d[i] = v;
}

// The scaler that multiplies input element (r, c): the scaler tile's first row of
// the face holding (r, c), at the position `idx` (0..15) of the reduced index
// within the face.
inline float scaler_at(const float* s, int r, int c, int idx) {
    return s[tile_index(r & 16, (c & 16) | idx)];
}

void reduce(int pool, int dim, uint32_t in, uint32_t scaler, uint32_t tile, uint32_t scaler_tile,
            uint32_t dst, bool data_in_srcb) {
    (void)pool; // SUM and AVG differ only in the scaler the kernel supplies
    float* d = dst_math(dst, "reduce_tile");
    float x[kTileElems], s[kTileElems];
    unpack_src(in, read_tile(in, tile, "reduce_tile", true, !data_in_srcb), x);
    unpack_src(scaler, read_tile(scaler, scaler_tile, "reduce_tile", true, data_in_srcb), s);
    const FpuAccum f = fpu_accum();
    const int fid = g.cfg.math_fidelity;
    // One FPU accumulation chain per output element; the multiplier sees each operand with
    // the bits of the register it was read through.
    auto mac = [&](float acc, float v, float k) {
        return data_in_srcb ? fpu_mac_fidelity(acc, k, v, fid, f) : fpu_mac_fidelity(acc, v, k, fid, f);
    };
    if (dim == 0) { // REDUCE_ROW: column 0 holds each row's sum
        for (int r = 0; r < 32; ++r) {
            float& o = d[tile_index(r, 0)];
            float acc = o;
            for (int c = 0; c < 32; ++c)
                acc = mac(acc, x[tile_index(r, c)], scaler_at(s, r, c, c & 15));
            o = fpu_land(acc, f);
        }
    } else if (dim == 1) { // REDUCE_COL: row 0 holds each column's sum
        for (int c = 0; c < 32; ++c) {
            float& o = d[tile_index(0, c)];
            float acc = o;
            for (int r = 0; r < 32; ++r)
                acc = mac(acc, x[tile_index(r, c)], scaler_at(s, r, c, r & 15));
            o = fpu_land(acc, f);
        }
    } else { // REDUCE_SCALAR: the column sums land in DST, then their row is reduced
        float cols[32];
        for (int c = 0; c < 32; ++c) {
            float acc = 0.0f;
            for (int r = 0; r < 32; ++r)
                acc = mac(acc, x[tile_index(r, c)], scaler_at(s, r, c, r & 15));
            cols[c] = fpu_land(acc, f);
        }
        float acc = d[0];
        for (int c = 0; c < 32; ++c)
            acc = mac(acc, cols[c], scaler_at(s, 0, c, c & 15));
        d[0] = fpu_land(acc, f);
    }
}

void bcast(int type, uint32_t in, uint32_t tile, uint32_t dst) {
    float* d = dst_math(dst, "unary_bcast");
    // bcast.h@00b0fa3f: a 32-bit input unpacks straight to DST (A2D, through SrcA's
    // unpacker) "since SrcB is only 19 bits wide"; any other goes through SrcB (B2D).
    const bool to_dest = cb_checked(in, "unary_bcast").format == DataFormat::Float32;
    const uint8_t* data = read_tile(in, tile, "unary_bcast", !to_dest, to_dest);
    if (to_dest && !g.cfg.fp32_dest_acc_en) {
        fail("protocol", "unary_bcast(cb=" + std::to_string(in) +
                             "): a 32-bit input unpacks straight to DST, which needs "
                             "fp32_dest_acc_en (a 16-bit DST cannot hold it)");
    }
    if (!to_dest && g.cfg.fp32_dest_acc_en) {
        fail("protocol", "unary_bcast(cb=" + std::to_string(in) +
                             "): a 16-bit input with fp32_dest_acc_en is wrong or hangs on "
                             "Wormhole B0 / Blackhole "
                             "(the broadcast data mover is 16-bit)");
    }
    float x[kTileElems];
    if (to_dest)
        decode_tile(g.cbs[in].format, data, x); // all 32 bits, no SrcA/SrcB narrowing
    else
        unpack_src(in, data, x);
    for (int r = 0; r < 32; ++r) {
        for (int c = 0; c < 32; ++c) {
            d[tile_index(r, c)] = store_fpu(x[bcast_index(type, r, c)]);
        }
    }
}

void transpose(uint32_t in, uint32_t tile, uint32_t dst) {
    float* d = dst_math(dst, "transpose_wh_tile");
    float x[kTileElems];
    unpack_src(in, read_tile(in, tile, "transpose_wh_tile", true, true), x);
    for (int r = 0; r < 32; ++r)
        for (int c = 0; c < 32; ++c)
            d[tile_index(r, c)] = store_fpu(x[tile_index(c, r)]);
}

void fpu_binary_dest_reuse(Fpu2 op, bool dest_to_srca, uint32_t cb, uint32_t tile, uint32_t dst) {
    const char* call = "dest-reuse binary";
    float* d = dst_math(dst, call);
    float x[kTileElems];
    unpack_src(cb, read_tile(cb, tile, call, true, !dest_to_srca), x);
    const int fid = eltwise_fidelity(op);
    for (int i = 0; i < kTileElems; ++i) {
        // The move from DST to a source register keeps its 19 bits (TF32), as an unpack does.
        const float moved = to_tf32(d[i], g.cfg.unpack_tf32_rounding);
        const float a = dest_to_srca ? moved : x[i];
        const float b = dest_to_srca ? x[i] : moved;
        d[i] = store_fpu(fpu_eltwise(op, a, b, fid));
    }
}

void typecast(uint32_t in_format, uint32_t out_format, uint32_t dst) {
    constexpr uint32_t kFloat32 = 0, kFloat16b = 5;  // tt-metal DataFormat values
    const bool known = (in_format == kFloat32 || in_format == kFloat16b) &&
                       (out_format == kFloat32 || out_format == kFloat16b);
    if (!known)
        unsupported("typecast_tile", "only Float32 <-> Float16_b typecasts are emulated");
    float* d = dst_math(dst, "typecast_tile");
    if (out_format == kFloat16b) {
        // The SFPU rounds the fp32 value to bf16 (nearest even) and stores it.
        for (int i = 0; i < kTileElems; ++i)
            d[i] = store_sfpu_rne(to_bf16(d[i], Rounding::NearestEven));
    }
}

void set_l1_acc(uint32_t enable) {
    g.l1_acc = enable != 0;
}

namespace {

double round_to_int(double q, Rounding mode) {
    switch (mode) {
    case Rounding::Truncate:
        return std::floor(q);
    case Rounding::TiesAway:
        return std::floor(q + 0.5);
    case Rounding::NearestEven:
        return std::nearbyint(q);
    }
    return q;
}

// Packs one tile into Bfp8_b. Without bfp8_pack_precise the value is first
// narrowed to bf16 (pack_rounding) and then aligned to the shared exponent by
// shifting, which truncates; with it the alignment itself rounds (pack_rounding).
void pack_bfp8(const float* v, uint8_t* page) {
    const bool precise = g.cfg.bfp8_pack_precise;
    const Rounding mode = g.cfg.pack_rounding;
    uint8_t* mants = page + 64;
    for (int grp = 0; grp < kTileElems / 16; ++grp) {
        float x[16];
        uint32_t max_e = 0;
        for (int j = 0; j < 16; ++j) {
            x[j] = precise ? v[grp * 16 + j] : to_bf16(v[grp * 16 + j], mode);
            const uint32_t e = (f2u(x[j]) >> 23) & 0xffu;
            max_e = e > max_e ? e : max_e;
        }
        page[grp] = static_cast<uint8_t>(max_e);
        for (int j = 0; j < 16; ++j) {
            const double q =
                std::ldexp(std::fabs(static_cast<double>(x[j])), 127 + 6 - static_cast<int>(max_e));
            double m = round_to_int(q, precise ? mode : Rounding::Truncate);
            m = m > 127.0 ? 127.0 : m;
            const uint8_t mag = static_cast<uint8_t>(m);
            mants[grp * 16 + j] =
                static_cast<uint8_t>(((std::signbit(x[j]) && mag) ? 0x80 : 0) | mag);
        }
    }
}

} // namespace

void pack(uint32_t dst, uint32_t cb, bool out_of_order, uint32_t out_tile) {
    DstState& ds = g.dst;
    if (ds.pack_half < 0) {
        std::ostringstream m;
        m << "pack_tile(dst=" << dst << ", cb=" << cb
          << "): pack reads DST without tile_regs_wait (" << dst_state() << ")";
        fail("protocol", m.str());
    }
    check_dst_range(dst, 1, "pack_tile");
    CbState& c = cb_checked(cb, "pack_tile");
    const uint32_t index = out_of_order ? out_tile : c.pack_next;
    if (index >= c.reserved) {
        std::ostringstream m;
        m << "pack_tile(dst=" << dst << ", cb=" << cb << "): output tile " << index
          << " beyond the " << c.reserved << " pages reserved (cb_reserve_back) and not yet pushed";
        fail("protocol", m.str());
    }
    if (g.pack_cb < 0)
        fail("protocol", "pack_tile: the packer was never configured (call an init first)");
    if (g.cbs[g.pack_cb].format != c.format) {
        std::ostringstream m;
        m << "pack_tile(cb=" << cb << ", " << format_name(c.format)
          << "): packer is configured for " << format_name(g.cbs[g.pack_cb].format) << " (CB "
          << g.pack_cb << "); call pack_reconfig_data_format first";
        fail("protocol", m.str());
    }
    if (!out_of_order)
        c.pack_next++;
    const float* v = ds.regs[ds.pack_half][dst];
    uint8_t* page = c.page(c.wr_page + index);
    const Rounding mode = g.cfg.pack_rounding;
    if (g.l1_acc && g.cfg.fp32_dest_acc_en) {
        static bool warned = false;
        if (!warned) {
            warned = true;
            g.warnings.push_back(
                "packer L1 accumulation with fp32_dest_acc_en is reported unreliable on hardware");
        }
    }
    if (c.format == DataFormat::Bfp8_b) {
        if (g.l1_acc) {
            fail("protocol",
                 "pack_tile(cb=" + std::to_string(cb) +
                     "): L1 accumulation is not valid for a block-float (Bfp8_b) output CB");
        }
        pack_bfp8(v, page);
    } else if (c.format == DataFormat::Float32) {
        float* out = reinterpret_cast<float*>(page);
        if (g.l1_acc) {
            for (int i = 0; i < kTileElems; ++i)
                out[i] = static_cast<float>(static_cast<double>(out[i]) + v[i]);
        } else {
            std::memcpy(out, v, kTileElems * 4);
        }
    } else {
        uint16_t* out = reinterpret_cast<uint16_t*>(page);
        if (g.l1_acc) {
            // One rounding per accumulation step (numerics.hpp l1_add_bf16).
            l1_add_bf16_block(out, v, kTileElems, mode);
        } else if (!g.cfg.fp32_dest_acc_en) {
            // A 16-bit DST holds bf16 values only (every store into it narrows), so
            // the packer's rounding leaves them unchanged.
            for (int i = 0; i < kTileElems; ++i)
                out[i] = bf16_bits(v[i]);
        } else {
            float r[kTileElems];
            std::memcpy(r, v, sizeof r);
            round_block(r, kTileElems, kBf16Mantissa, mode);
            for (int i = 0; i < kTileElems; ++i)
                out[i] = bf16_bits(r[i]);
        }
    }
}

} // namespace compute
} // namespace ttlemu
