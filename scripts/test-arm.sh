#!/usr/bin/env bash
# Stage "arm" of scripts/test.sh: the aarch64 cross build (clang-19) and its CTest suite under
# qemu-aarch64 11: every test at SVL 512, each test executable again at SVL 128 and 256, on a
# CPU without SME (I8MM/DotProd selection) and with QMM_DISABLE=sme2,i8mm (cmake/QmmGTest.cmake).
# Usage: scripts/test-arm.sh [jobs]. Prints 'STAGE-RESULT <passed> <failed> <skipped>'.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${1:-2}
if ! scripts/setup-arm.sh >/dev/null; then
  echo "arm: scripts/setup-arm.sh failed (no cross toolchain or qemu 11): stage not run"
  echo "STAGE-RESULT 0 0 1"
  exit 0
fi
cmake -S . -B build-arm -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-clang.cmake \
  -DCMAKE_BUILD_TYPE=Release -DQMM_WERROR=ON -DQMM_BUILD_BENCH=OFF >/dev/null
cmake --build build-arm -j "$JOBS" >/dev/null
log=$(mktemp)
set +e
ctest --test-dir build-arm -j "$JOBS" --output-on-failure --timeout 900 >"$log" 2>&1
set -e
grep -vE '^ *(Start|[0-9]+/[0-9]+ Test) ' "$log" >&2 || true
total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
fails=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -1)
skips=$(grep -c '(Skipped)' "$log" || true)
rm -f "$log"
if [ -z "$total" ]; then echo "arm: ctest did not finish"; echo "STAGE-RESULT 0 1 0"; exit 1; fi
echo "STAGE-RESULT $((total - fails - skips)) $fails $skips"
[ "$fails" = 0 ]
