// lhs_quant_pack_qsi8d32pscalef16_f32: F32 activations -> int8 per 32-block + f16 scale, mr-row
// panels with each block's scales in front of its data. This is the LHS of the NEON DotProd/I8MM
// kernels, byte-identical to KleidiAI's kai_lhs_quant_pack_qsi8d32p_f32 (the packer its NEON
// kernels use; not the SME2 one, see lhs_quant_pack_qsi8d32p_f32.h).
//   panel of mr rows = k/32 blocks of mr·34 bytes; block b:
//     mr f16 scales (row r at index r), then 32·mr int8 in chunks of kc = kr/sr columns with the
//     rows interleaved: (row r, column j of the block) at byte mr·2 + (j/kc)·mr·kc + r·kc + j%kc.
//   Accessors: layout::qsi8d32pscalef16_* (kernels/ref/layouts.h).
// Quantization as docs/design.md §5 (quantize_block_qsi8d32). Padding rows of the last panel are zero.
// Parameters: any mr >= 1; kr/sr (the chunk) in {1, 2, 4, 8, 16, 32}.
// This plain version is the reference twin of any optimized packer of the same layout.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const LhsPacker lhs_quant_pack_qsi8d32pscalef16_f32;

}  // namespace qmm
