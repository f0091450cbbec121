// Whether the suite runs under an emulator: the Arm stage runs it under qemu with
// QMM_TEST_SHAPES=small (tests/CMakeLists.txt, scripts/test.sh), where every float operation is
// a softfloat call. The kernel tests then take fewer shapes, generated cases are fewer, and the
// engine tests that run for minutes there skip: they test platform-independent code (the
// portable attention, the KV cache, the batch split) that the native and sanitizer stages run,
// and the Arm kernels under them have their own tests.
#pragma once
#include <cstdlib>
#include <cstring>

namespace qmm::test {

inline bool emulated() {
  const char* s = std::getenv("QMM_TEST_SHAPES");
  return s != nullptr && std::strcmp(s, "small") == 0;
}

// The skip message of an engine test too slow to run under an emulator.
inline constexpr const char* kTooSlowEmulated =
    "minutes under qemu (QMM_TEST_SHAPES=small); platform-independent: the native and sanitizer stages run it";

}  // namespace qmm::test
