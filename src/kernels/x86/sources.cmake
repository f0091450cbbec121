# x86 kernel sources: every .cpp of this folder (cmake/QmmIsa.cmake's qmm_kernel_folder), each
# compiled with the flags of the ISA its file name ends with, so one binary runs on any x86-64
# CPU and selects kernels at run time. Files without an ISA token (the plain packers and their
# references) get no ISA flag. -ffp-contract=off: the packers' rounding must be the
# reference's, bit for bit.
set(QMM_AVX2_FLAGS -mavx2 -mfma -mf16c -ffp-contract=off)
set(QMM_AVXVNNI_FLAGS -mavxvnni ${QMM_AVX2_FLAGS})
set(QMM_AVX512_FLAGS -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mfma -mf16c -ffp-contract=off)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12's avx512fintrin.h initialises its "undefined" vectors from themselves, which
  # -Wmaybe-uninitialized reports inside the intrinsics (GCC bug 105593, fixed in 13).
  list(APPEND QMM_AVX512_FLAGS -Wno-maybe-uninitialized -Wno-uninitialized)
endif()
# AMX-INT8: tile products, with an AVX-512 epilogue.
set(QMM_AMX_FLAGS -mamx-tile -mamx-int8 ${QMM_AVX512_FLAGS})
set(QMM_AMX_FLAGS "${QMM_AMX_FLAGS}" CACHE INTERNAL "flags of the AMX sources (the emulated tests reuse them)")
# AMX-BF16: tile products on BF16, the weights dequantized with AVX-512 (+ AVX512_BF16 conversions).
set(QMM_AMXBF16_FLAGS -mamx-tile -mamx-bf16 -mavx512bf16 ${QMM_AVX512_FLAGS})
set(QMM_AMXBF16_FLAGS "${QMM_AMXBF16_FLAGS}" CACHE INTERNAL "flags of the AMX-BF16 sources (the emulated tests reuse them)")

qmm_kernel_folder(qmm ${CMAKE_CURRENT_LIST_DIR} TOKENS
  _avx2 QMM_AVX2_FLAGS
  _avxvnni QMM_AVXVNNI_FLAGS
  "_avx512(vnni)?" QMM_AVX512_FLAGS
  _amx QMM_AMX_FLAGS
  _amxbf16 QMM_AMXBF16_FLAGS)
