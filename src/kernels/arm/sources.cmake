# Arm kernel sources, each ISA with its own flags (cmake/QmmIsa.cmake).
# --- SME2 ---
# --- NEON ---
qmm_isa_sources(qmm FLAGS -march=armv8.2-a+dotprod+i8mm SOURCES
  kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_i8mm.cpp
  kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_i8mm.cpp)
qmm_isa_sources(qmm FLAGS -march=armv8.2-a+dotprod SOURCES
  kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi4c32p8x8_4x8_neon_dotprod.cpp
  kernels/arm/matmul_clamp_f32_qsi8d32p1x8_qsi4c32p8x8_1x8_neon_dotprod.cpp
  kernels/arm/matmul_clamp_f32_qsi8d32p4x8_qsi8c32p8x8_4x8_neon_dotprod.cpp
  kernels/arm/matmul_clamp_f32_qsi8d32p1x8_qsi8c32p8x8_1x8_neon_dotprod.cpp)
# Base Armv8-A (F16 weights widened with FCVTL, F32 FMLA): no extra flags.
qmm_isa_sources(qmm FLAGS -march=armv8-a SOURCES
  kernels/arm/matmul_clamp_f32_f32p8x1_f16p8x1_8x8_neon.cpp
  kernels/arm/matmul_clamp_f32_f32p1x1_f16p8x1_1x8_neon.cpp
  kernels/arm/lhs_quant_pack_qsi8d32pscalef16_f32_neon.cpp)
