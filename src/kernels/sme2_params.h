// Tile parameters of the SME2 Q4_0 kernels (DESIGN.md §5), as portable code: the SME2 kernels
// use them as their `params`, and kernel_list's packer_presets() uses them on every
// architecture, so tools (`qmm layout`) can draw SME2 layouts at any SVL even where the SME2
// kernels are not compiled. svl_bytes: the streaming vector length in bytes (64 at 512 bits).
#pragma once
#include <cstddef>

#include "kernels/ukernel.h"

namespace qmm {

// GEMM (SMOPA): a 1VL x 4VL tile of 32-bit lanes: mr = SVL/32 rows, nr = 4·SVL/32 columns.
inline TileParams sme2_gemm_params(size_t svl_bytes) {
  const size_t mr = svl_bytes / 4, nr = svl_bytes;
  return {mr, nr, 4, 2, mr, nr};
}

// GEMV (multi-vector SDOT): m == 1, the same packed RHS as the GEMM (nr = 4·SVL/32).
inline TileParams sme2_gemv_params(size_t svl_bytes) { return {1, svl_bytes, 4, 2, 1, svl_bytes}; }

}  // namespace qmm
