// AMX-BF16 GEMMs (tdpbf16ps) over the AVX-512 VNNI kernels' packed RHS, so the decode GEMV
// stays theirs and one copy of the weights serves both:
//
//   matmul_clamp_f32_bf16p16x32_qau4c32p16x4_16x16_amxbf16_tdpbf16ps   Q4_0    kr 4, sr 2
//   matmul_clamp_f32_bf16p16x32_qau8c32p16x4_16x16_amxbf16_tdpbf16ps   Q8_0    kr 4, sr 1
//   matmul_clamp_f32_bf16p16x32_q4kp16x4_16x16_amxbf16_tdpbf16ps       Q4_K    kr 4, sr 2
//   matmul_clamp_f32_bf16p16x32_q6kp16x4_16x16_amxbf16_tdpbf16ps       Q6_K    kr 4, sr 2
//   matmul_clamp_f32_bf16p16x32_iq4nlp16x4_16x16_amxbf16_tdpbf16ps     IQ4_NL  kr 4, sr 2
//   mr 16, nr 16, m_step 16, n_step 16.
// LHS: lhs_quant_pack_bf16p16x32_f32_avx512 (the activations rounded to BF16 once per matmul;
// a 16-row block is an A tile as it lies). RHS: the AVX-512 VNNI kernels' packers, nr 16.
//
// Unlike the AMX-INT8 GEMMs (a tile product per 32-block, then an F32 epilogue per block and
// row), the weights are dequantized in F32 with their block scales folded in
// (matmul_clamp_f32_bf16p_scalar.h gives the formulas), rounded to BF16 in the tile's pair
// layout, and the C tiles accumulate in F32 across K: no per-block epilogue at all. Per 32
// columns and chunk of K, the B tiles are made once (a stack buffer in L1) and serve every
// row tile of the call; 2 x 2 tiles (32 rows x 32 columns) per step; the F32 sums wait in dst
// between chunks (stored and reloaded exactly), clamped after the last one.
//
// Numerics: not the int8 path's. BF16 keeps 8 significant bits of each activation and each
// dequantized weight (relative rounding ≤ 2^-9 each); the products are exact and summed in
// F32. The references are matmul_clamp_f32_bf16p_scalar.h's kernels (Ukernel::reference).
//
// Needs the process's AMX tile state (core/cpu_x86.cpp asks Linux for it) and AVX512_BF16;
// configures the tiles on entry and releases them on return.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_bf16p16x32_qau4c32p16x4_16x16_amxbf16_tdpbf16ps;
extern const Ukernel matmul_clamp_f32_bf16p16x32_qau8c32p16x4_16x16_amxbf16_tdpbf16ps;
extern const Ukernel matmul_clamp_f32_bf16p16x32_q4kp16x4_16x16_amxbf16_tdpbf16ps;
extern const Ukernel matmul_clamp_f32_bf16p16x32_q6kp16x4_16x16_amxbf16_tdpbf16ps;
extern const Ukernel matmul_clamp_f32_bf16p16x32_iq4nlp16x4_16x16_amxbf16_tdpbf16ps;

}  // namespace qmm
