// AMX-INT8 GEMMs for Q4_0, Q8_0, Q4_K, Q5_K and Q6_K weights (tdpbssd / tdpbsud), over the
// same packed RHS as the AVX-512 VNNI kernels (nr 16, kr 4; sr 2, for Q8_0 1), so the decode
// GEMV stays theirs:
//
//   matmul_clamp_f32_qsi8d32p16x32_qau4c32p16x4_16x16_amx_tdpbssd   Q4_0   mr 16, nr 16, kr 4, sr 2
//   matmul_clamp_f32_qsi8d32p16x32_qau8c32p16x4_16x16_amx_tdpbssd   Q8_0   mr 16, nr 16, kr 4, sr 1
//   matmul_clamp_f32_qsi8d32p16x32_q4kp16x4_16x16_amx_tdpbsud       Q4_K   mr 16, nr 16, kr 4, sr 2
//   matmul_clamp_f32_qsi8d32p16x32_q5kp16x4_16x16_amx_tdpbsud       Q5_K   mr 16, nr 16, kr 4, sr 2
//   matmul_clamp_f32_qsi8d32p16x32_q6kp16x4_16x16_amx_tdpbssd       Q6_K   mr 16, nr 16, kr 4, sr 2
//   m_step = 16, n_step = 16.
// Packers: lhs_quant_pack_qsi8d32pscalef32sumrows_f32_avx2 (each row's 32 int8 of a block
//          contiguous: an mr = 16 block is the 16 x 32-byte A tile as it lies; kr is the RHS's),
//          rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0 / rhs_pack_nxk_qau8c32pscalef16_qsi8c32 /
//          rhs_pack_nxk_q4kp_q4k / rhs_pack_nxk_q5kp_q5k / rhs_pack_nxk_q6kp_q6k, nr 16.
//
// Per 16 x 16 output tile and 32-block: the RHS block's 4-byte K chunks of 16 columns are the
// B tile's rows (8 rows of 64 bytes) once made signed (Q4_0: `and 0x0f` / `srl 4; and 0x0f`,
// then −8; Q8_0: `xor 0x80`) or as unsigned levels (Q4_K 0..15, Q5_K 0..31: tdpbsud), so one
// tile product gives the block's exact int32 sums for all 256 outputs. Q6_K has an int8 scale
// per 16 weights: its B tiles hold (level − 32)·scale, 16-bit, as a low-byte (tdpbsud) and a
// high-byte tile (tdpbssd), two products whose 256·Σ_hi + Σ_lo is the block's scaled sum.
// Then, per row, the VNNI kernels' epilogue (acc += float(Σ) · (s_w · s_a); Q4_K / Q5_K's min
// term; Q6_K's s_a per block and d per super-block) on the same integers in the same order,
// so the outputs are theirs bit for bit. Two blocks are in flight (two sets of C tiles) so a
// block's epilogue overlaps the next block's tile products. The epilogue (3 zmm instructions
// per row and block, 4 for Q4_K, Q5_K and Q6_K) bounds the kernel, not the tile unit.
//
// Needs the process's AMX tile state (core/cpu_x86.cpp asks Linux for it when it detects
// AMX); configures the tiles on entry and releases them on return.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_qsi8d32p16x32_qau4c32p16x4_16x16_amx_tdpbssd;
extern const Ukernel matmul_clamp_f32_qsi8d32p16x32_qau8c32p16x4_16x16_amx_tdpbssd;
extern const Ukernel matmul_clamp_f32_qsi8d32p16x32_q4kp16x4_16x16_amx_tdpbsud;
extern const Ukernel matmul_clamp_f32_qsi8d32p16x32_q6kp16x4_16x16_amx_tdpbssd;
extern const Ukernel matmul_clamp_f32_qsi8d32p16x32_q5kp16x4_16x16_amx_tdpbsud;

}  // namespace qmm
