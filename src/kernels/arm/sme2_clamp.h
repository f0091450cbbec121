// Pieces every family of SME2 kernels shares. Include only from SME2 sources.
//  - The output clamp. FCLAMP (svclamp) clamps to the minimum / maximum *number*: it turns a NaN
//    output into clamp_min, against the NaN policy (kernels/ukernel.h). FMAX and FMIN keep NaN,
//    one instruction each per four vectors.
//  - The 4-bit weight expansion of the Q4_0 kernels (sme2_matmul.h) and of the QC4 kernels on
//    KleidiAI's SME2 layout (sme2_channel.h).
//  - Chunk offsets kept in registers (the per-channel loops, the F16-activation Q4_0 GEMM).
#pragma once
#include <arm_sme.h>

#include <cstddef>
#include <cstdint>

namespace qmm::sme2 {
namespace {  // internal linkage: every kernel file is compiled with its own flags

__attribute__((always_inline)) inline svfloat32x4_t clamp_x4(svfloat32x4_t v, svfloat32_t lo,
                                                             svfloat32_t hi) __arm_streaming {
  return svmin_single_f32_x4(svmax_single_f32_x4(v, lo), hi);
}

// Four int8 operand vectors from the 4-bit RHS rows at q: nr little-endian u16 of four nibbles
// (4·VL rows × 4 K values) = 2 streaming vectors; LUTI4 through ZT0 (the kernel's table of the 16
// nibble values, loaded once with svldr_zt) expands each into two vectors, nibble i -> byte i.
__attribute__((always_inline)) inline svint8x4_t luti4_x4(const uint8_t* q) __arm_streaming __arm_preserves("za")
    __arm_in("zt0") {
  const svuint8x2_t idx = svld1_u8_x2(svptrue_c8(), q);
  const svint8x2_t lo = svluti4_lane_zt_s8_x2(0, svget2(idx, 0), 0);
  const svint8x2_t hi = svluti4_lane_zt_s8_x2(0, svget2(idx, 1), 0);
  return svcreate4(svget2(lo, 0), svget2(lo, 1), svget2(hi, 0), svget2(hi, 1));
}

// The offsets 1..7 chunks of `bytes` each past a K step's first (c[i] = i·bytes), in
// registers for the whole K loop: clang 19 folds no immediate into the multi-vector loads and
// would otherwise recompute each offset with an RDVL per step (the empty asm keeps it from
// rematerialising them).
struct ChunkOffsets {
  size_t c[8];
};
__attribute__((always_inline)) inline ChunkOffsets chunk_offsets(size_t bytes) __arm_streaming {
  ChunkOffsets o{{0, bytes, bytes * 2, bytes * 3, bytes * 4, bytes * 5, bytes * 6, bytes * 7}};
  asm("" : "+r"(o.c[1]), "+r"(o.c[2]), "+r"(o.c[3]), "+r"(o.c[4]), "+r"(o.c[5]), "+r"(o.c[6]), "+r"(o.c[7]));
  return o;
}

}  // namespace
}  // namespace qmm::sme2
