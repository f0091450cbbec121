// The kernel source itself, compiled with SIMDe's portable intrinsics (simde_shim.h).
#include "x86/simde_shim.h"
#include "kernels/x86/matmul_clamp_f32_qsi8d32p_q5kp_avx512vnni.cpp"
