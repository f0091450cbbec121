# GoogleTest for qmm's suite, native or cross.
#
# Native builds use the installed GoogleTest (find_package(GTest)). Cross builds (the aarch64
# toolchain) build it from source, because the cross sysroot has no aarch64 gtest: Debian's
# googletest package puts the sources in /usr/src/googletest. Either way GTest::gtest and
# GTest::gtest_main exist afterwards.
#
#   qmm_add_gtest(<target>)
# registers a GoogleTest executable with CTest: natively with gtest_discover_tests; cross
# compiled, the discovered tests run under the default emulator (CMAKE_CROSSCOMPILING_EMULATOR,
# SVL QMM_QEMU_SME_VL) and the whole executable additionally runs once per configuration of
# QMM_EMU_CONFIGS (other SVLs, a CPU without SME, ISAs disabled by QMM_DISABLE). Every run gets
# QMM_EXPECT_GEMM_ISA, the ISA the Q4_0 GEMM selection must pick on that configuration
# (tests/arm/test_arm_selection.cpp checks it).
include_guard(GLOBAL)
include(GoogleTest)

if(CMAKE_CROSSCOMPILING)
  set(QMM_GTEST_SOURCE_DIR /usr/src/googletest CACHE PATH "GoogleTest sources, built for the target when cross compiling")
  if(NOT EXISTS "${QMM_GTEST_SOURCE_DIR}/CMakeLists.txt")
    message(FATAL_ERROR "${QMM_GTEST_SOURCE_DIR} has no GoogleTest sources: install googletest "
                        "(apt-get install googletest) or set QMM_GTEST_SOURCE_DIR")
  endif()
  if(NOT TARGET gtest)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    add_subdirectory(${QMM_GTEST_SOURCE_DIR} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL SYSTEM)
    # Third-party code: our warning flags (and -Werror) are not its business.
    target_compile_options(gtest PRIVATE -w)
    target_compile_options(gtest_main PRIVATE -w)
  endif()
else()
  find_package(GTest REQUIRED)
endif()

if(CMAKE_CROSSCOMPILING AND DEFINED QMM_QEMU_AARCH64)
  # name|qemu -cpu value|SVL bytes|QMM_DISABLE|expected Q4_0 GEMM ISA
  set(_qmm_gemm_isa i8mm)
  if(QMM_HAVE_SME2)
    set(_qmm_gemm_isa sme2)
  endif()
  set(QMM_EMU_CONFIGS
      "svl128|${QMM_QEMU_CPU}|16||${_qmm_gemm_isa}"
      "svl256|${QMM_QEMU_CPU}|32||${_qmm_gemm_isa}"
      "nosme|max,sme=off|16||i8mm"
      "dotprod|${QMM_QEMU_CPU}|64|sme2,i8mm|dotprod"
      CACHE STRING "Extra emulated runs of every test executable: name|cpu|svl_bytes|QMM_DISABLE|expected GEMM ISA")
  set(QMM_EMU_DEFAULT_GEMM_ISA ${_qmm_gemm_isa} CACHE STRING "GEMM ISA expected under the default emulator")
endif()

function(qmm_add_gtest target)
  if(NOT CMAKE_CROSSCOMPILING)
    gtest_discover_tests(${target} DISCOVERY_TIMEOUT 300 DISCOVERY_MODE PRE_TEST)
    return()
  endif()
  # Listing the tests runs the executable under qemu: do it at test time, not at build time.
  gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 300
                       PROPERTIES ENVIRONMENT "QMM_EXPECT_GEMM_ISA=${QMM_EMU_DEFAULT_GEMM_ISA}"
                                  ENVIRONMENT_MODIFICATION "QMM_EXPECT_SVL_BYTES=set:${QMM_QEMU_SME_VL}")
  # (two properties: a list in one PROPERTIES value does not survive gtest_discover_tests)
  foreach(cfg IN LISTS QMM_EMU_CONFIGS)
    string(REPLACE "|" ";" f "${cfg}")
    list(LENGTH f len)
    if(NOT len EQUAL 5)
      message(FATAL_ERROR "QMM_EMU_CONFIGS entry '${cfg}': want name|cpu|svl_bytes|QMM_DISABLE|isa")
    endif()
    list(GET f 0 name)
    list(GET f 1 cpu)
    list(GET f 2 svl)
    list(GET f 3 disable)
    list(GET f 4 isa)
    set(cpu_arg "${cpu}")
    if(NOT cpu MATCHES "sme=off")
      string(APPEND cpu_arg ",sme-default-vector-length=${svl}")
    endif()
    add_test(NAME ${target}.${name} COMMAND ${QMM_QEMU_AARCH64} -cpu ${cpu_arg} $<TARGET_FILE:${target}>)
    set(env "QMM_EXPECT_GEMM_ISA=${isa}" "QMM_EXPECT_SVL_BYTES=${svl}")
    if(cpu MATCHES "sme=off")
      set(env "QMM_EXPECT_GEMM_ISA=${isa}" "QMM_EXPECT_SVL_BYTES=0")
    endif()
    if(disable)
      list(APPEND env "QMM_DISABLE=${disable}")
    endif()
    set_tests_properties(${target}.${name} PROPERTIES ENVIRONMENT "${env}" LABELS "emu;emu-${name}" TIMEOUT 900)
  endforeach()
endfunction()
