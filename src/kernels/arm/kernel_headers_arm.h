// Declarations of the Arm variants.
#pragma once
// --- SME2 ---
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1vlx4_qsi8c32p4vlx4_1vlx4vl_sme2_mopa.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x4_qsi8c32p4vlx4_1x4vl_sme2_sdot.h"
#include "kernels/arm/matmul_clamp_f32_f32p1vlx1_f16p4vlx1_1vlx4vl_sme2_mopa.h"
#include "kernels/arm/matmul_clamp_f32_f32p1x1_f16p4vlx1_1x4vl_sme2_fmla.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1vlx4_q4kp4vlx4_1vlx4vl_sme2_mopa.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x4_q4kp4vlx4_1x4vl_sme2_sdot.h"
// --- NEON ---
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x8_qsi4c32p8x8_1x8_neon_dotprod.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_dotprod.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_i8mm.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_i8mm.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_dotprod.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x8_qsi8c32p8x8_1x8_neon_dotprod.h"
#include "kernels/arm/matmul_clamp_f32_f32p8x1_f16p8x1_8x8_neon.h"
#include "kernels/arm/matmul_clamp_f32_f32p1x1_f16p8x1_1x8_neon.h"
#include "kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.h"
#include "kernels/arm/matmul_clamp_f32_f32p8x1_f32p8x1_8x8_neon.h"
#include "kernels/arm/matmul_clamp_f32_f32p1x1_f32p8x1_1x8_neon.h"
