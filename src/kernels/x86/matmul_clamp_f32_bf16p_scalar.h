// Plain C++ references of the AMX-BF16 GEMMs (matmul_clamp_f32_bf16p_amxbf16.h): the same
// packers, the same numbers, computed one output at a time. Not in the kernel list (they are
// the AMX kernels' Ukernel::reference; the generated tests compare with them).
//
//   dst[i, j] = clamp(Σ_c bf16(a[i, c]) · bf16(w[j, c]), lo, hi), summed in F32 in c order,
//
// bf16() the rounding of lhs_quant_pack_bf16p16x32_f32.h, the BF16 products exact in F32, and
// w the weight dequantized in F32 from the packed RHS with its scales folded in:
//   Q4_0    d·(q − 8)                 (exact)
//   Q8_0    d·(u − 128)               (exact)
//   Q4_K    (d·sc_j)·q − dmin·m_j     (d·sc_j, dmin·m_j and the product exact; one rounding)
//   Q6_K    (d·sc_t)·(q − 32)         (d·sc_t exact; one rounding)
//   IQ4_NL  d·v(q)                    (exact)
// so the kernels' AVX-512 dequantization gives the same BF16 weights bit for bit (NaN bits
// aside: a NaN scale makes NaN weights either way).
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const Ukernel matmul_clamp_f32_bf16p16x32_qau4c32p16x4_16x16_scalar;
extern const Ukernel matmul_clamp_f32_bf16p16x32_qau8c32p16x4_16x16_scalar;
extern const Ukernel matmul_clamp_f32_bf16p16x32_q4kp16x4_16x16_scalar;
extern const Ukernel matmul_clamp_f32_bf16p16x32_q6kp16x4_16x16_scalar;
extern const Ukernel matmul_clamp_f32_bf16p16x32_iq4nlp16x4_16x16_scalar;

}  // namespace qmm
