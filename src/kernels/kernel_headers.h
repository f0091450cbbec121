// Declarations of every variant in the kernel list (one header per kernel file pair); the
// architecture's own are generated from its folder (cmake/QmmIsa.cmake, build/generated/).
#pragma once
#include "kernels/ref/matmul_clamp_f32_f32p_f16p_scalar.h"
#include "kernels/ref/matmul_clamp_f32_f32p_f32p_scalar.h"
#include "kernels/ref/matmul_clamp_f32_qai8dxp_qsi4cxp_scalar.h"
#include "kernels/ref/matmul_clamp_f32_qai8dxp_qsi8cxp_scalar.h"
#include "kernels/ref/matmul_clamp_f32_qsi8d32p_qsi4c32p_scalar.h"
#include "kernels/ref/matmul_clamp_f32_qsi8d32p_kquants_scalar.h"
#include "kernels/ref/matmul_clamp_f32_qsi8d32p_qsi8c32p_scalar.h"
#if defined(__aarch64__)
#include "kernels/kernel_headers_arm.h"
#endif
#if defined(__x86_64__)
#include "kernels/kernel_headers_x86.h"
#endif
