// lhs_quant_pack_qsi8d32pscalef32sum_f32: F32 activations -> int8 per 32-block, the x86
// kernels' LHS. Quantization is docs/design.md §5's, bit for bit: scale = amax/127 (F32),
// q = (int8) roundf(x · (1/scale)). What differs from qsi8d32p is what the kernels want next
// to the data, so they never convert or reduce anything per instruction:
//   - the scale is stored as F32, holding the value of its f16 rounding (the same number
//     the f16-scale formats carry, so results match theirs; a broadcast load, no F16C);
//   - −8·Σq of each row and block, split by K position: two int16, lo = −8·Σ q[j] over j%4 < 2,
//     hi = −8·Σ q[j] over j%4 >= 2 (each |.| <= 8·16·127 = 16256). Kernels whose weights carry a
//     zero point (unsigned u = w + zp for vpmaddubsw / vpdpbusd) start their block sum there:
//     broadcast as one 32-bit value it is exactly the int16 lane pair that vpmaddubsw fills
//     (bytes 0,1 and 2,3 of each 4-byte chunk), so Σ(u − 8)·a needs no extra instruction for
//     Q4_0 on AVX2; vpmaddwd by 1 (resp. 16) turns it into −8·Σq (resp. −128·Σq) for vpdpbusd.
//
// Layout, one panel of mr rows (kr = 4; sr unused), block-major so a panel streams:
//   block b starts at byte b·mr·40 and holds
//     [0, 32·mr)        int8 of (row r, element j) at (j/4)·4·mr + 4·r + j%4
//                       (4-element K chunks, rows interleaved: a 4-byte broadcast is one chunk)
//     [32·mr, 36·mr)    f32 scale of row r at 32·mr + 4·r
//     [36·mr, 40·mr)    int16 lo, hi (above) of row r at 36·mr + 4·r
//   panel bytes mr·(k/32)·40; rows beyond m in the last panel are zero.
//
// The `sumrows` twins write the same panels with each row's 32 int8 of a block contiguous,
// int8 of (row r, element j) at 32·r + j (the K chunk is the whole block, whatever kr says):
// an mr = 16 block is then the 16 x 32-byte A tile of an AMX dot product, loaded as it lies.
//
// Two packers write each layout byte for byte:
//   lhs_quant_pack_qsi8d32pscalef32sum_f32_ref   plain C++ (the reference of the tests)
//   lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2  AVX2 (what the x86 kernels use; its
//                                                LhsPacker::reference is the plain twin)
#pragma once
#include <cstddef>

#include "kernels/ukernel.h"

namespace qmm {

namespace x86lhs {
constexpr size_t kBlockBytes = 40;  // per row and block: 32 int8 + f32 scale + int32 sum
inline size_t panel_bytes(size_t mr, size_t k) { return mr * (k / kBlock) * kBlockBytes; }
size_t packed_size(size_t m, size_t k, size_t mr, size_t kr, size_t sr);
size_t packed_offset(size_t m_idx, size_t k, size_t mr, size_t kr, size_t sr);
}  // namespace x86lhs

extern const LhsPacker lhs_quant_pack_qsi8d32pscalef32sum_f32_ref;
extern const LhsPacker lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2;
extern const LhsPacker lhs_quant_pack_qsi8d32pscalef32sumrows_f32_ref;
extern const LhsPacker lhs_quant_pack_qsi8d32pscalef32sumrows_f32_avx2;

}  // namespace qmm
