// matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_neon_dotprod: the NEON (DotProd) twin of
// the SME2 Q4_0 GEMM ..._1vlx4vl_sme2_mopa, for the hybrid SME + NEON split of one matmul
// (matmul/matmul.cpp, docs/design.md §6): it reads the SME2 kernel's packed LHS and RHS as they
// are (SME2 layouts at the CPU's SVL: mr = VL, nr = 4·VL, kr = 4, sr = 2) and gives its bits:
// the same int32 block sums, converted, times the same product rsc·s_lhs, added with one fused
// multiply-add per block into an F32 accumulator that starts at 0, clamped by FMAX then FMIN.
//
// Not in the kernel list: it needs the SVL of an SME CPU (VL is a template parameter here, one
// instantiation per SVL), so it is only ever the partner of the SME2 kernel. Per 4-K quad of a
// 4-row × 8-column micro-tile: LD1 ×2, AND, USHR, ZIP1, ZIP2, 2 SUB (the −8 zero point) and 8
// SDOT by element; per 32-block the F32 epilogue (2 FCVTL scale loads, 8 FMUL, 8 SCVTF, 8 FMLA).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

// The twin for a streaming vector length of svl_bytes (16..256, a power of two); nullptr for
// any other.
MatmulFn q4_0_sme2_layout_gemm_neon_dotprod(size_t svl_bytes);

}  // namespace qmm
