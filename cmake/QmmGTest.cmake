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
  # The ISA the Q4_0 GEMM selection must pick on a CPU that has `isas` (best first): the first
  # of them with a Q4_0 GEMM in this build's Arm kernel list (so a tree without the NEON
  # kernels expects scalar on a CPU without SME), else scalar.
  file(STRINGS ${PROJECT_SOURCE_DIR}/src/kernels/arm/kernel_list_arm.inc _qmm_arm_list REGEX "^ *&matmul_clamp_f32_")
  function(_qmm_expected_gemm_isa out)
    foreach(isa IN LISTS ARGN)
      if(isa STREQUAL "sme2" AND NOT QMM_HAVE_SME2)
        continue()
      endif()
      foreach(line IN LISTS _qmm_arm_list)
        if(line MATCHES "qsi4c32p" AND line MATCHES "_${isa}(_|,|$)" AND NOT line MATCHES "_1x")
          set(${out} ${isa} PARENT_SCOPE)
          return()
        endif()
      endforeach()
    endforeach()
    set(${out} scalar PARENT_SCOPE)
  endfunction()
  _qmm_expected_gemm_isa(_qmm_all sme2 i8mm dotprod)
  _qmm_expected_gemm_isa(_qmm_nosme i8mm dotprod)
  _qmm_expected_gemm_isa(_qmm_dotprod dotprod)
  # name|qemu -cpu value|SVL bytes|QMM_DISABLE|expected Q4_0 GEMM ISA|gtest filter
  # The default emulated CPU (SVL 512) runs every test; the other runs repeat only what depends
  # on them. At SVL 128 and 256: the SME2 kernels (their names hold "sme2"), the SME2 suites of
  # tests/arm, KleidiAI's bits, the hybrid split and selection, and at 128 also the driver and C
  # API over SVL-sized tiles. Without SME, and with DotProd only: selection under QMM_DISABLE and
  # the driver and C API on what was selected (the NEON kernels run in the default run).
  set(_qmm_sme_tests "*sme2*:*Sme*:*KleidiAI*:*Hybrid*:*Select*")
  set(_qmm_selection_tests "*Select*:Driver.*:CApi.*")
  set(QMM_EMU_CONFIGS
      "svl128|${QMM_QEMU_CPU}|16||${_qmm_all}|${_qmm_sme_tests}:Driver.*:CApi.*"
      "svl256|${QMM_QEMU_CPU}|32||${_qmm_all}|${_qmm_sme_tests}"
      "nosme|max,sme=off|0||${_qmm_nosme}|${_qmm_selection_tests}"
      "dotprod|${QMM_QEMU_CPU}|16|sme2,i8mm|${_qmm_dotprod}|${_qmm_selection_tests}")
  set(QMM_EMU_DEFAULT_GEMM_ISA ${_qmm_all})
  message(STATUS "qmm: emulated test runs (name|cpu|svl|QMM_DISABLE|expected GEMM ISA): default SVL "
                 "${QMM_QEMU_SME_VL}|${_qmm_all}; ${QMM_EMU_CONFIGS}")
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
    if(NOT len EQUAL 6)
      message(FATAL_ERROR "QMM_EMU_CONFIGS entry '${cfg}': want name|cpu|svl_bytes|QMM_DISABLE|isa|filter")
    endif()
    list(GET f 0 name)
    list(GET f 1 cpu)
    list(GET f 2 svl)
    list(GET f 3 disable)
    list(GET f 4 isa)
    list(GET f 5 filter)
    set(cpu_arg "${cpu}")
    if(svl)
      string(APPEND cpu_arg ",sme-default-vector-length=${svl}")
    endif()
    add_test(NAME ${target}.${name} COMMAND ${QMM_QEMU_AARCH64} -cpu ${cpu_arg} $<TARGET_FILE:${target}>
             --gtest_filter=${filter})
    # Whole-suite runs under slow emulation: the small shape set of tests/test_kernels.cpp.
    set(env "QMM_EXPECT_GEMM_ISA=${isa}" "QMM_EXPECT_SVL_BYTES=${svl}" "QMM_TEST_SHAPES=small")
    if(disable)
      list(APPEND env "QMM_DISABLE=${disable}")
    endif()
    set_tests_properties(${target}.${name} PROPERTIES ENVIRONMENT "${env}" LABELS "emu;emu-${name}" TIMEOUT 900
                                                     COST 1000)  # the longest: started first
  endforeach()
endfunction()
