// Declarations of the x86 variants.
#pragma once
#include "kernels/x86/matmul_clamp_f32_f32p_f16p_avx2.h"
#include "kernels/x86/matmul_clamp_f32_f32p_f16p_avx512.h"
#include "kernels/x86/matmul_clamp_f32_f32p_f32p_avx2.h"
#include "kernels/x86/matmul_clamp_f32_f32p_f32p_avx512.h"
#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q4kp_avx2.h"
#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q6kp_avx2.h"
#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_avx2.h"
#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_avx512vnni.h"
#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_avxvnni.h"
#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau8c32p_avx2.h"
#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau8c32p_avx512vnni.h"
#include "kernels/x86/matmul_clamp_f32_qsi8d32p_qau8c32p_avxvnni.h"
