# Arm kernel sources: every .cpp of this folder (cmake/QmmIsa.cmake's qmm_kernel_folder), each
# compiled with the flags of the ISA its file name ends with (_sme2_<technique>, _neon_i8mm,
# _neon_dotprod, _neon), so one binary runs on any AArch64 CPU and selects kernels at run time.

# --- SME2 ---
# Needs a compiler with the SME2 ACLE (clang >= 19 here; GCC >= 14 should do) and the SME ABI
# support routines at link time (compiler-rt builtins / libgcc >= 14). Checked by compiling and
# linking a streaming function that uses every kind of intrinsic the kernels use; without it the
# SME2 kernels are left out (the NEON and scalar ones still build).
# -march=armv8.2-a+sme2, not armv9-a+sme2: without SVE in the target the compiler cannot emit
# non-streaming SVE (which faults on SME-only CPUs such as Apple M4). See docs/arm.md.
set(QMM_SME2_FLAGS -march=armv8.2-a+sme2)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 21)
  # LLVM bug #145635: leaf __arm_locally_streaming functions without SVE lose LR.
  list(APPEND QMM_SME2_FLAGS -mno-omit-leaf-frame-pointer)
endif()
set(QMM_SME2_FLAGS "${QMM_SME2_FLAGS}" CACHE INTERNAL "flags of the SME2 sources (tests reuse them)")
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "${QMM_SME2_FLAGS}")
string(REPLACE ";" " " CMAKE_REQUIRED_FLAGS "${CMAKE_REQUIRED_FLAGS}")
check_cxx_source_compiles([[
#include <arm_sme.h>
#include <stdint.h>
static const int32_t lut[16] = {0};
__arm_new("za", "zt0") __arm_locally_streaming int probe(const int8_t* p) {
  svldr_zt(0, lut);
  svzero_za();
  const svint8x2_t w = svluti4_lane_zt_s8_x2(0, svld1_u8(svptrue_b8(), (const uint8_t*)p), 0);
  svmopa_za32_s8_m(0, svptrue_b8(), svptrue_b8(), svget2(w, 0), svget2(w, 1));
  svdot_lane_za32_s8_vg1x4(0, svcreate4(svget2(w, 0), svget2(w, 1), svget2(w, 0), svget2(w, 1)), svget2(w, 0), 0);
  const svint8x4_t r = svread_hor_za8_s8_vg4(0, 0);
  const svfloat32x4_t f = svcvt_f32_s32_x4(svcreate4(svreinterpret_s32(svget4(r, 0)), svreinterpret_s32(svget4(r, 1)),
                                                     svreinterpret_s32(svget4(r, 2)), svreinterpret_s32(svget4(r, 3))));
  return (int)svaddv_f32(svptrue_b32(), svget4(f, 0));
}
int main() { int8_t buf[256] = {0}; return probe(buf); }
]] QMM_HAVE_SME2)
unset(CMAKE_REQUIRED_FLAGS)
set(QMM_SME2_SKIP "")
if(QMM_HAVE_SME2)
  target_compile_definitions(qmm PRIVATE QMM_HAVE_SME2=1)
else()
  message(STATUS "qmm: ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} cannot build SME2 "
                 "(needs clang >= 19 or GCC >= 14 with the SME ABI routines): SME2 kernels left out")
  set(QMM_SME2_SKIP "_sme2_[a-z]+$")
endif()
set(QMM_I8MM_FLAGS -march=armv8.2-a+dotprod+i8mm)
set(QMM_DOTPROD_FLAGS -march=armv8.2-a+dotprod)
set(QMM_NEON_FLAGS -march=armv8-a)  # base Armv8-A (F16 weights widened with FCVTL, F32 FMLA)
qmm_kernel_folder(qmm ${CMAKE_CURRENT_LIST_DIR} SKIP "${QMM_SME2_SKIP}" TOKENS
  "_sme2_[a-z]+" QMM_SME2_FLAGS
  _neon_i8mm QMM_I8MM_FLAGS
  _neon_dotprod QMM_DOTPROD_FLAGS
  _neon QMM_NEON_FLAGS)
