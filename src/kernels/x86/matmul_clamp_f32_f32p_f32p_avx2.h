// AVX2 + FMA kernels for F32 weights (no activation quantization), GEMM and GEMV over
// ONE packed RHS.
//
//   GEMM matmul_clamp_f32_f32p6x1_f32p16x1_6x16_avx2_fma   mr 6, nr 16, kr 1, sr 1
//   GEMV matmul_clamp_f32_f32p1x1_f32p16x1_1x16_avx2_fma   mr 1, nr 16, kr 1, sr 1
//   m_step = mr, n_step = nr.
// Packers (kernels/ref/pack_float_panels.h): lhs_pack_f32p_f32, rhs_pack_nxk_f32p_f32 with
// nr = 16, kr = 1 (per k, the 16 F32 of a panel are 64 contiguous bytes).
//
// Inner loop (x86/avx2_float_tiles.h), per k step: 2 loads of the panel's 16 weights, a
// vbroadcastss per LHS row and 2 FMAs per row — 12 FMAs per 8 loads for the 6x16 GEMM tile
// (12 accumulators + 2 weights + 1 broadcast = 15 ymm). The GEMV runs 4 panels (64 columns)
// at once: 8 independent FMA chains hide the FMA latency.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f32p6x1_f32p16x1_6x16_avx2_fma;
extern const Ukernel matmul_clamp_f32_f32p1x1_f32p16x1_1x16_avx2_fma;

}  // namespace qmm
