# Tests of `qmm layout` (tools/qmm/layout_*): included from tests/CMakeLists.txt.
if(NOT TARGET qmm_cli)
  return()  # the tools are not built (QMM_BUILD_TOOLS=OFF)
endif()
find_package(GTest REQUIRED)
include(GoogleTest)
add_executable(test_layout test_layout.cpp)
target_link_libraries(test_layout PRIVATE qmm_layout GTest::gtest_main)
target_compile_definitions(test_layout PRIVATE QMM_BINARY="$<TARGET_FILE:qmm_cli>")
add_dependencies(test_layout qmm_cli)
gtest_discover_tests(test_layout DISCOVERY_MODE PRE_TEST)

# The pictures in docs/img must be what the command draws today.
add_test(NAME layout_docs_up_to_date
         COMMAND sh ${PROJECT_SOURCE_DIR}/scripts/gen-layout-docs.sh --check ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:qmm_cli>)
