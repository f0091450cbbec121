// Tile parameters of the SME2 kernels (docs/design.md §5), as portable code, so that kernel_list's
// packer_presets() can describe the SME2 variants on every architecture and tools (`qmm layout`)
// can draw their layouts at any SVL even where the SME2 kernels are not compiled. The SME2
// kernels should use these functions as their `params`, so that there is one description.
// svl_bytes: the streaming vector length in bytes (64 at 512 bits); 0 (no SME) counts as 16.
#pragma once
#include <cstddef>

#include "kernels/ukernel.h"

namespace qmm {

inline size_t sme2_lanes32(size_t svl_bytes) { return (svl_bytes ? svl_bytes : 16) / 4; }

// GEMM (SMOPA): a 1VL x 4VL tile of 32-bit lanes: mr = SVL/32 rows, nr = 4·SVL/32 columns; kr = 4.
// Q4_0 weights are qsi4c32ps1s0 (sr = 2), Q8_0 weights qsi8c32p (sr = 1). The Q4_K, Q5_K, Q6_K and
// IQ4_NL kernels use the Q4 parameters on the rhs_pack_nxk_kquants.h layouts (kr = 4, sr = 2).
inline TileParams sme2_q4_gemm_params(size_t svl_bytes) {
  const size_t vl = sme2_lanes32(svl_bytes);
  return {vl, 4 * vl, 4, 2, vl, 4 * vl};
}
inline TileParams sme2_q8_gemm_params(size_t svl_bytes) {
  const size_t vl = sme2_lanes32(svl_bytes);
  return {vl, 4 * vl, 4, 1, vl, 4 * vl};
}

// GEMV (multi-vector SDOT): m == 1, reading the same packed RHS as the GEMM.
inline TileParams sme2_q4_gemv_params(size_t svl_bytes) {
  const size_t vl = sme2_lanes32(svl_bytes);
  return {1, 4 * vl, 4, 2, 1, 4 * vl};
}
inline TileParams sme2_q8_gemv_params(size_t svl_bytes) {
  const size_t vl = sme2_lanes32(svl_bytes);
  return {1, 4 * vl, 4, 1, 1, 4 * vl};
}

// Per-channel weights (qai8dxp LHS): QC4 qsi4cxp with kr = 8, sr = 2 (KleidiAI's 1vlx4 SME
// kernels: 4-byte RHS chunks, 4-value LHS chunks), QC8 qsi8cxp with kr = 4, sr = 1. The GEMV
// (mr = 1) reads the GEMM's packed RHS.
inline TileParams sme2_qc4_gemm_params(size_t svl_bytes) {
  const size_t vl = sme2_lanes32(svl_bytes);
  return {vl, 4 * vl, 8, 2, vl, 4 * vl};
}
inline TileParams sme2_qc4_gemv_params(size_t svl_bytes) {
  const size_t vl = sme2_lanes32(svl_bytes);
  return {1, 4 * vl, 8, 2, 1, 4 * vl};
}
// KleidiAI's SME2 QC4 GEMV layout (..._qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot): qsi4cxps1s0,
// kr = 4, sr = 1, so a framework's buffers packed for KleidiAI's kernel run unchanged.
inline TileParams sme2_qc4_kai_gemv_params(size_t svl_bytes) {
  const size_t vl = sme2_lanes32(svl_bytes);
  return {1, 4 * vl, 4, 1, 1, 4 * vl};
}
// KleidiAI's SME2 QC4 GEMM (..._qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa) on the same RHS.
inline TileParams sme2_qc4_kai_gemm_params(size_t svl_bytes) {
  const size_t vl = sme2_lanes32(svl_bytes);
  return {vl, 4 * vl, 4, 1, vl, 4 * vl};
}
inline TileParams sme2_qc8_gemm_params(size_t svl_bytes) { return sme2_q8_gemm_params(svl_bytes); }
inline TileParams sme2_qc8_gemv_params(size_t svl_bytes) { return sme2_q8_gemv_params(svl_bytes); }

// F16 weights (F32 FMOPA GEMM, FMLA-into-ZA GEMV): f32p LHS / f16p RHS panels with kr = 1.
inline TileParams sme2_f16_gemm_params(size_t svl_bytes) {
  const size_t vl = sme2_lanes32(svl_bytes);
  return {vl, 4 * vl, 1, 1, vl, 4 * vl};
}
inline TileParams sme2_f16_gemv_params(size_t svl_bytes) {
  const size_t vl = sme2_lanes32(svl_bytes);
  return {1, 4 * vl, 1, 1, 1, 4 * vl};
}

}  // namespace qmm
