// FPU matmul into DST. Operands are unpacked once per call into row-major
// arrays already narrowed to what the multiplier sees for the configured
// fidelity, so the inner loops are plain float multiply-adds.
#include <sstream>

#include "dst.hpp"
#include "ttlemu/compute.hpp"
#include "unpack.hpp"

namespace ttlemu {

namespace {

// K elements the FPU sums before each accumulation into DST: one 16-wide face
// of the inner dimension per matrix instruction.
constexpr int kDstAccumK = 16;
constexpr int kMaxBlock = 16;

struct Operand {
    float main[kTileElems];  // row-major, the bits every fidelity pass uses
    float extra[kTileElems]; // row-major, the HiFi3 cross term's operand
};

void to_row_major(const float* faces, float* rm, bool transpose) {
    if (!transpose) {
        for (int r = 0; r < 32; ++r) {
            std::memcpy(rm + r * 32, faces + tile_index(r, 0), 16 * sizeof(float));
            std::memcpy(rm + r * 32 + 16, faces + tile_index(r, 16), 16 * sizeof(float));
        }
        return;
    }
    for (int r = 0; r < 32; ++r)
        for (int c = 0; c < 32; ++c)
            rm[r * 32 + c] = transpose ? faces[tile_index(c, r)] : faces[tile_index(r, c)];
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

// P += A[:, k0:k0+16] @ B[k0:k0+16, :] for row-major 32x32 A and B. Rows of P
// stay in named vector registers across the K loop (GCC vector extensions);
// the loads use unaligned, may_alias vector types. No FMA anywhere, so every
// lane does the same multiply then add and results do not depend on the CPU.
typedef float v4 __attribute__((vector_size(16)));
typedef float v4u __attribute__((vector_size(16), aligned(4), may_alias));
typedef float v8 __attribute__((vector_size(32)));
typedef float v8u __attribute__((vector_size(32), aligned(4), may_alias));

void mm_face_sse(const float* __restrict a, const float* __restrict b, float* __restrict p,
                 int k0) {
    for (int i = 0; i < 32; ++i) {
        float* pr = p + i * 32;
        v4 c0 = *(const v4u*)(pr), c1 = *(const v4u*)(pr + 4), c2 = *(const v4u*)(pr + 8),
           c3 = *(const v4u*)(pr + 12);
        v4 c4 = *(const v4u*)(pr + 16), c5 = *(const v4u*)(pr + 20), c6 = *(const v4u*)(pr + 24),
           c7 = *(const v4u*)(pr + 28);
        for (int k = k0; k < k0 + kDstAccumK; ++k) {
            const float s = a[i * 32 + k];
            const v4 av = {s, s, s, s};
            const float* br = b + k * 32;
            c0 += av * *(const v4u*)(br);
            c1 += av * *(const v4u*)(br + 4);
            c2 += av * *(const v4u*)(br + 8);
            c3 += av * *(const v4u*)(br + 12);
            c4 += av * *(const v4u*)(br + 16);
            c5 += av * *(const v4u*)(br + 20);
            c6 += av * *(const v4u*)(br + 24);
            c7 += av * *(const v4u*)(br + 28);
        }
        *(v4u*)(pr) = c0;
        *(v4u*)(pr + 4) = c1;
        *(v4u*)(pr + 8) = c2;
        *(v4u*)(pr + 12) = c3;
        *(v4u*)(pr + 16) = c4;
        *(v4u*)(pr + 20) = c5;
        *(v4u*)(pr + 24) = c6;
        *(v4u*)(pr + 28) = c7;
    }
}

// The same arithmetic 8 lanes wide, two rows per pass to reuse the B loads.
__attribute__((target("avx"))) void
mm_face_avx(const float* __restrict a, const float* __restrict b, float* __restrict p, int k0) {
    for (int i = 0; i < 32; i += 2) {
        float* p0 = p + i * 32;
        float* p1 = p0 + 32;
        v8 c00 = *(const v8u*)(p0), c01 = *(const v8u*)(p0 + 8), c02 = *(const v8u*)(p0 + 16),
           c03 = *(const v8u*)(p0 + 24);
        v8 c10 = *(const v8u*)(p1), c11 = *(const v8u*)(p1 + 8), c12 = *(const v8u*)(p1 + 16),
           c13 = *(const v8u*)(p1 + 24);
        for (int k = k0; k < k0 + kDstAccumK; ++k) {
            const float s0 = a[i * 32 + k];
            const float s1 = a[(i + 1) * 32 + k];
            const v8 a0 = {s0, s0, s0, s0, s0, s0, s0, s0};
            const v8 a1 = {s1, s1, s1, s1, s1, s1, s1, s1};
            const float* br = b + k * 32;
            const v8 b0 = *(const v8u*)(br), b1 = *(const v8u*)(br + 8),
                     b2 = *(const v8u*)(br + 16), b3 = *(const v8u*)(br + 24);
            c00 += a0 * b0;
            c01 += a0 * b1;
            c02 += a0 * b2;
            c03 += a0 * b3;
            c10 += a1 * b0;
            c11 += a1 * b1;
            c12 += a1 * b2;
            c13 += a1 * b3;
        }
        *(v8u*)(p0) = c00;
        *(v8u*)(p0 + 8) = c01;
        *(v8u*)(p0 + 16) = c02;
        *(v8u*)(p0 + 24) = c03;
        *(v8u*)(p1) = c10;
        *(v8u*)(p1 + 8) = c11;
        *(v8u*)(p1 + 16) = c12;
        *(v8u*)(p1 + 24) = c13;
    }
}

void mm_face(const float* a, const float* b, float* p, int k0) {
    static const bool avx = __builtin_cpu_supports("avx");
    if (avx) {
        mm_face_avx(a, b, p, k0);
    } else {
        mm_face_sse(a, b, p, k0);
    }
}

} // namespace

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
    static Operand a_ops[kMaxBlock], b_ops[kMaxBlock]; // one compute thread per process
    float faces[kTileElems];
    for (uint32_t r = 0; r < rt_dim; ++r) {
        unpack_src(in0, read_tile(in0, tile0 + r * kt_dim, call, true, false), faces);
        to_row_major(faces, a_ops[r].main, false);
        prepare_in0(a_ops[r], fid);
    }
    for (uint32_t c = 0; c < ct_dim; ++c) {
        unpack_src(in1, read_tile(in1, tile1 + c, call, true, true), faces);
        to_row_major(faces, b_ops[c].main, transpose);
        prepare_in1(b_ops[c], fid);
    }
    float* half = g.dst.regs[g.dst.math_half][0];
    float p[kTileElems];
    for (uint32_t r = 0; r < rt_dim; ++r) {
        for (uint32_t c = 0; c < ct_dim; ++c) {
            float* d = half + static_cast<size_t>(dst + r * ct_dim + c) * kTileElems;
            for (int k0 = 0; k0 < 32; k0 += kDstAccumK) {
                std::memset(p, 0, sizeof p);
                mm_face(a_ops[r].main, b_ops[c].main, p, k0);
                if (fid == 3)
                    mm_face(a_ops[r].extra, b_ops[c].extra, p, k0);
                // Row i of P is two 16-float face rows of the DST tile.
                for (int i = 0; i < 32; ++i) {
                    float* f0 = d + tile_index(i, 0);
                    float* f1 = d + tile_index(i, 16);
                    const float* pr = p + i * 32;
                    for (int j = 0; j < 16; ++j)
                        f0[j] += pr[j];
                    for (int j = 0; j < 16; ++j)
                        f1[j] += pr[16 + j];
                }
                if (!g.cfg.fp32_dest_acc_en) {
                    // Same as store_fpu per element: TF32, then bf16.
                    round_block(d, kTileElems, kTf32Mantissa, g.cfg.dst16_rounding, kBf16Mantissa);
                }
            }
        }
    }
}

} // namespace compute
} // namespace ttlemu
