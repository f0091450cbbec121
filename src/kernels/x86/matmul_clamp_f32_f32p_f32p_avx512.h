// AVX-512 kernels for F32 weights (no activation quantization), GEMM and GEMV over ONE packed
// RHS. They need only AVX-512F; they sit at the avx512vnni level of the kernel list (a CPU
// with AVX-512F but no VNNI, Skylake-X, falls back to the AVX2 pair).
//
//   GEMM matmul_clamp_f32_f32p12x1_f32p16x1_12x16_avx512_fma   mr 12, nr 16, kr 1, sr 1
//   GEMV matmul_clamp_f32_f32p1x1_f32p16x1_1x16_avx512_fma     mr 1, nr 16, kr 1, sr 1
//   m_step = mr, n_step = nr.
// Packers (kernels/ref/pack_float_panels.h): lhs_pack_f32p_f32, rhs_pack_nxk_f32p_f32 with
// nr = 16, kr = 1 (the AVX2 float kernels' RHS).
//
// Inner loop (x86/avx512_float_tiles.h), per k step: one load of the panel's 16 weights
// and 12 FMAs with the rows' values as embedded broadcasts — 12 accumulators, the FMA ports
// are the bound. The GEMV runs 8 panels (128 columns) at once: 8 independent FMA chains.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_f32p12x1_f32p16x1_12x16_avx512_fma;
extern const Ukernel matmul_clamp_f32_f32p1x1_f32p16x1_1x16_avx512_fma;

}  // namespace qmm
