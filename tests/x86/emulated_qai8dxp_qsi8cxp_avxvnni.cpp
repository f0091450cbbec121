// The kernel source itself, compiled with SIMDe's portable intrinsics (simde_shim.h).
#include "x86/simde_shim.h"
#include "kernels/x86/matmul_clamp_f32_qai8dxp_qsi8cxp_avxvnni.cpp"
