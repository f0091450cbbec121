// Declarations of the Arm variants.
#pragma once
// --- SME2 ---
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1vlx4_qsi8c32p4vlx4_1vlx4vl_sme2_mopa.h"
#include "kernels/arm/matmul_clamp_f32_qsi8d32p1x4_qsi8c32p4vlx4_1x4vl_sme2_sdot.h"
#include "kernels/arm/matmul_clamp_f32_f32p1vlx1_f16p4vlx1_1vlx4vl_sme2_mopa.h"
#include "kernels/arm/matmul_clamp_f32_f32p1x1_f16p4vlx1_1x4vl_sme2_fmla.h"
// --- NEON ---
