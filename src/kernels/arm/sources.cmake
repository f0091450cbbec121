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
