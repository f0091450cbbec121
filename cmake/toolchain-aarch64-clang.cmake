# Cross-compile qmm for aarch64 Linux on a Debian 12 x86-64 host, and run its tests under
# qemu-aarch64 (user mode).  Prepare the host once with scripts/setup-arm.sh, then:
#
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-clang.cmake
#   cmake --build build-arm -j2 && ctest --test-dir build-arm
#
# Compiler: clang-19 --target=aarch64-linux-gnu (GCC 12 cannot assemble SME2), linker lld-19.
# Sysroot: Debian's arm64 cross packages (libc6-dev-arm64-cross in /usr/aarch64-linux-gnu,
# libstdc++-12-dev-arm64-cross via the GCC cross install in /usr/lib/gcc-cross/aarch64-linux-gnu).
# Executables are linked statically, so qemu needs no target libraries.
#
# Cache variables (all optional):
#   QMM_ARM_CACHE          where setup-arm.sh put qemu and compiler-rt ($ENV{QMM_ARM_CACHE}
#                          or ~/.cache/qmm-arm)
#   QMM_QEMU_AARCH64       the qemu-aarch64 used as CMAKE_CROSSCOMPILING_EMULATOR (>= 10; never
#                          Debian 12's /usr/bin/qemu-aarch64 7.2, which gets SME wrong)
#   QMM_QEMU_CPU           qemu -cpu model+features, default "max,sme_fa64=off"
#   QMM_QEMU_SME_VL        streaming vector length in BYTES for the default emulator:
#                          16, 32 or 64 (SVL 128/256/512 bits); default 64
#   QMM_CLANG_RT_BUILTINS  libclang_rt.builtins-aarch64.a (SME ABI routines), linked into
#                          every executable
#   QMM_AARCH64_GCC_DIR    GCC cross install dir (default: newest /usr/lib/gcc-cross/aarch64-linux-gnu/N)
#
# Tests that want several vector lengths can add their own commands, e.g.
#   add_test(NAME t_svl128 COMMAND ${QMM_QEMU_AARCH64} -cpu ${QMM_QEMU_CPU},sme-default-vector-length=16 $<TARGET_FILE:t>)
# (CMake does not prepend the emulator when the command is not a target name.)

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(_qmm_triple aarch64-linux-gnu)
set(CMAKE_SYSROOT /usr/${_qmm_triple})

# Pass the cache settings on to try_compile() projects, which re-read this file.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
     QMM_ARM_CACHE QMM_QEMU_AARCH64 QMM_QEMU_CPU QMM_QEMU_SME_VL QMM_CLANG_RT_BUILTINS QMM_AARCH64_GCC_DIR)

# ---- compilers -------------------------------------------------------------------------
find_program(QMM_CLANG clang-19 PATHS /usr/lib/llvm-19/bin REQUIRED)
find_program(QMM_CLANGXX clang++-19 PATHS /usr/lib/llvm-19/bin REQUIRED)
set(CMAKE_C_COMPILER ${QMM_CLANG})
set(CMAKE_CXX_COMPILER ${QMM_CLANGXX})
set(CMAKE_ASM_COMPILER ${QMM_CLANG})
set(CMAKE_C_COMPILER_TARGET ${_qmm_triple})
set(CMAKE_CXX_COMPILER_TARGET ${_qmm_triple})
set(CMAKE_ASM_COMPILER_TARGET ${_qmm_triple})
foreach(_tool ar ranlib nm objdump strip)
  string(TOUPPER ${_tool} _TOOL)
  find_program(QMM_LLVM_${_TOOL} llvm-${_tool}-19 PATHS /usr/lib/llvm-19/bin)
  if(QMM_LLVM_${_TOOL})
    set(CMAKE_${_TOOL} ${QMM_LLVM_${_TOOL}} CACHE FILEPATH "" FORCE)
  endif()
endforeach()

# The GCC cross install gives clang crtbegin/crtend, libgcc and the libstdc++ headers+libs.
# --gcc-install-dir together with --sysroot keeps the host's /usr/include and /usr/lib out of
# the search paths (with the default sysroot "/" clang would add them after the cross ones).
if(NOT QMM_AARCH64_GCC_DIR)
  file(GLOB _qmm_gcc_dirs LIST_DIRECTORIES true /usr/lib/gcc-cross/${_qmm_triple}/*)
  list(SORT _qmm_gcc_dirs COMPARE NATURAL ORDER DESCENDING)
  list(GET _qmm_gcc_dirs 0 _qmm_gcc_dir)
  set(QMM_AARCH64_GCC_DIR "${_qmm_gcc_dir}" CACHE PATH "GCC aarch64 cross install (crtbegin, libgcc, libstdc++)")
endif()
if(NOT EXISTS "${QMM_AARCH64_GCC_DIR}/crtbeginT.o" OR NOT EXISTS "${CMAKE_SYSROOT}/lib/libc.a")
  message(FATAL_ERROR "aarch64 cross sysroot not found (${QMM_AARCH64_GCC_DIR}, ${CMAKE_SYSROOT}): run scripts/setup-arm.sh")
endif()

# -mno-omit-leaf-frame-pointer: works around LLVM < 21 bug #145635: a leaf function that enters
# streaming mode (__arm_locally_streaming) on a target without SVE calls __arm_get_current_vg
# in its prologue without saving LR, and returns into itself (crash).  Cheap; keep it everywhere.
set(_qmm_flags "--gcc-install-dir=${QMM_AARCH64_GCC_DIR} -mno-omit-leaf-frame-pointer")
set(CMAKE_C_FLAGS_INIT "${_qmm_flags}")
set(CMAKE_CXX_FLAGS_INIT "${_qmm_flags}")
set(CMAKE_ASM_FLAGS_INIT "${_qmm_flags}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld -static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-fuse-ld=lld")

# ---- compiler-rt builtins (SME ABI support routines) -------------------------------------
# clang emits calls to __arm_tpidr2_save (__arm_new("za")/lazy save), __arm_sme_state,
# __arm_za_disable and __arm_get_current_vg; GCC 12's libgcc has none of them.  The archive
# only contributes the members a program needs, so it is linked into every executable.
if(NOT QMM_ARM_CACHE)
  if(DEFINED ENV{QMM_ARM_CACHE} AND NOT "$ENV{QMM_ARM_CACHE}" STREQUAL "")
    set(_qmm_cache "$ENV{QMM_ARM_CACHE}")
  else()
    set(_qmm_cache "$ENV{HOME}/.cache/qmm-arm")
  endif()
  set(QMM_ARM_CACHE "${_qmm_cache}" CACHE PATH "qemu + compiler-rt cache filled by scripts/setup-arm.sh")
endif()
set(QMM_CLANG_RT_BUILTINS "${QMM_ARM_CACHE}/clang-rt-19/lib/linux/libclang_rt.builtins-aarch64.a"
    CACHE FILEPATH "compiler-rt builtins for aarch64 (SME ABI routines)")
if(NOT EXISTS "${QMM_CLANG_RT_BUILTINS}")
  message(FATAL_ERROR "${QMM_CLANG_RT_BUILTINS} not found: run scripts/setup-arm.sh "
                      "(or set QMM_ARM_CACHE / QMM_CLANG_RT_BUILTINS)")
endif()
set(CMAKE_C_STANDARD_LIBRARIES_INIT "\"${QMM_CLANG_RT_BUILTINS}\"")
set(CMAKE_CXX_STANDARD_LIBRARIES_INIT "\"${QMM_CLANG_RT_BUILTINS}\"")

# ---- emulator ----------------------------------------------------------------------------
set(QMM_QEMU_AARCH64 "${QMM_ARM_CACHE}/bin/qemu-aarch64" CACHE FILEPATH
    "qemu-aarch64 >= 10 (Debian trixie-backports), never Debian 12's 7.2")
set(QMM_QEMU_CPU "max,sme_fa64=off" CACHE STRING
    "qemu -cpu value (sme_fa64=off: no NEON/FP in streaming mode, as on real SME2 cores)")
set(QMM_QEMU_SME_VL 64 CACHE STRING "default streaming vector length in bytes (16, 32, 64)")
set_property(CACHE QMM_QEMU_SME_VL PROPERTY STRINGS 16 32 64 128 256)

get_property(_qmm_in_try GLOBAL PROPERTY IN_TRY_COMPILE)
if(NOT _qmm_in_try)
  if(NOT EXISTS "${QMM_QEMU_AARCH64}")
    message(FATAL_ERROR "${QMM_QEMU_AARCH64} not found: run scripts/setup-arm.sh (or set QMM_QEMU_AARCH64)")
  endif()
  execute_process(COMMAND "${QMM_QEMU_AARCH64}" --version OUTPUT_VARIABLE _qmm_qv
                  RESULT_VARIABLE _qmm_qrc ERROR_QUIET)
  if(NOT _qmm_qrc EQUAL 0 OR NOT _qmm_qv MATCHES "version ([0-9]+)\\.([0-9]+)\\.([0-9]+)")
    message(FATAL_ERROR "${QMM_QEMU_AARCH64} --version failed: ${_qmm_qv}")
  endif()
  if(CMAKE_MATCH_1 LESS 10)
    message(FATAL_ERROR "${QMM_QEMU_AARCH64} is qemu ${CMAKE_MATCH_1}.${CMAKE_MATCH_2}: SME2 needs >= 10 "
                        "(Debian 12's 7.2 computes SMOPA wrongly). Run scripts/setup-arm.sh")
  endif()
  if(NOT QMM_QEMU_SME_VL MATCHES "^(16|32|64|128|256)$")
    message(FATAL_ERROR "QMM_QEMU_SME_VL=${QMM_QEMU_SME_VL}: must be 16, 32, 64, 128 or 256 (bytes); "
                        "qemu silently rounds other values")
  endif()
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR
    "${QMM_QEMU_AARCH64};-cpu;${QMM_QEMU_CPU},sme-default-vector-length=${QMM_QEMU_SME_VL}")

# ---- find_* only in the sysroot (host x86-64 libraries and headers must never be picked up) --
# (plus the arm64 libutf8proc that setup-arm.sh unpacked: include/utf8proc.h, lib/libutf8proc.a)
set(CMAKE_FIND_ROOT_PATH ${CMAKE_SYSROOT} ${QMM_ARM_CACHE}/utf8proc)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
