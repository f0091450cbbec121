# x86 kernel sources, each ISA with its own flags (cmake/QmmIsa.cmake). Plain C++ files (the
# scalar packers and their references) get no ISA flag, so the library still runs on any
# x86-64. -ffp-contract=off: the packers' rounding must be the reference's, bit for bit.
target_sources(qmm PRIVATE
  kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32.cpp
  kernels/x86/rhs_pack_nxk_qau4c32pscalef16_qsu4c32s16s0.cpp
  kernels/x86/rhs_pack_nxk_qau8c32pscalef16_qsi8c32.cpp)

# --- AVX2 + FMA + F16C ---
qmm_isa_sources(qmm FLAGS -mavx2 -mfma -mf16c -ffp-contract=off SOURCES
  kernels/x86/lhs_quant_pack_qsi8d32pscalef32sum_f32_avx2.cpp
  kernels/x86/lhs_quant_pack_qai8dxp_f32_avx2.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_avx2.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_qau8c32p_avx2.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_q4kp_avx2.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_q5kp_avx2.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_q6kp_avx2.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_iq4nlp_avx2.cpp
  kernels/x86/matmul_clamp_f32_qai8dxp_qsi8cxp_avx2.cpp
  kernels/x86/matmul_clamp_f32_qai8dxp_qsi4cxp_avx2.cpp
  kernels/x86/matmul_clamp_f32_f32p_f16p_avx2.cpp
  kernels/x86/matmul_clamp_f32_f32p_f32p_avx2.cpp)

# --- AVX-VNNI (ymm {vex} vpdpbusd) ---
qmm_isa_sources(qmm FLAGS -mavxvnni -mavx2 -mfma -mf16c -ffp-contract=off SOURCES
  kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_avxvnni.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_q4kp_avxvnni.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_q6kp_avxvnni.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_q5kp_avxvnni.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_iq4nlp_avxvnni.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_qau8c32p_avxvnni.cpp
  kernels/x86/matmul_clamp_f32_qai8dxp_qsi8cxp_avxvnni.cpp
  kernels/x86/matmul_clamp_f32_qai8dxp_qsi4cxp_avxvnni.cpp)

# --- AVX-512 VNNI (zmm vpdpbusd) ---
set(QMM_AVX512_FLAGS -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mfma -mf16c -ffp-contract=off)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12's avx512fintrin.h initialises its "undefined" vectors from themselves, which
  # -Wmaybe-uninitialized reports inside the intrinsics (GCC bug 105593, fixed in 13).
  list(APPEND QMM_AVX512_FLAGS -Wno-maybe-uninitialized -Wno-uninitialized)
endif()
qmm_isa_sources(qmm FLAGS ${QMM_AVX512_FLAGS} SOURCES
  kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_avx512vnni.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_q4kp_avx512vnni.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_q6kp_avx512vnni.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_q5kp_avx512vnni.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_iq4nlp_avx512vnni.cpp
  kernels/x86/matmul_clamp_f32_qsi8d32p_qau8c32p_avx512vnni.cpp
  kernels/x86/matmul_clamp_f32_qai8dxp_qsi8cxp_avx512vnni.cpp
  kernels/x86/matmul_clamp_f32_qai8dxp_qsi4cxp_avx512vnni.cpp
  kernels/x86/matmul_clamp_f32_f32p_f16p_avx512.cpp
  kernels/x86/matmul_clamp_f32_f32p_f32p_avx512.cpp)

# --- AMX-INT8 (tile products; the epilogue is AVX-512) ---
qmm_isa_sources(qmm FLAGS -mamx-tile -mamx-int8 ${QMM_AVX512_FLAGS} SOURCES
  kernels/x86/matmul_clamp_f32_qsi8d32p_qau4c32p_amx.cpp)
