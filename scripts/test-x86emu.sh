#!/usr/bin/env bash
# x86 emulation stage of scripts/test.sh: the AVX-512 (VNNI, F) and AVX-VNNI kernels, where
# this host lacks them (a Zen 3 has neither; qemu-x86_64 cannot emulate them, its TCG has
# neither ISA), compiled over SIMDe's portable intrinsics with a CPU detection that reports them
# (tests/x86/CMakeLists.txt), then the generated kernel and packer tests run on every one.
# Usage: scripts/test-x86emu.sh [jobs]. Prints "STAGE-RESULT <passed> <failed> <skipped>".
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${1:-2}
if [ "$(uname -m)" != x86_64 ]; then
  echo "x86emu: not an x86-64 host, stage skipped"
  echo "STAGE-RESULT 0 0 1"
  exit 0
fi
# Only the ISAs this CPU lacks are emulated: kernels it runs natively were tested by the native
# stage (the test names are the kernel names: *avx512* and *avxvnni*).
flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has() { for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done; }
native=() exclude=""
if has avx512f avx512bw avx512vl avx512_vnni; then native+=("AVX-512 VNNI"); exclude+=":*avx512*"; fi
if has avx_vnni; then native+=("AVX-VNNI"); exclude+=":*avxvnni*"; fi
if [ ${#native[@]} = 2 ]; then
  echo "x86emu: stage skipped: this CPU runs the AVX-512 VNNI and AVX-VNNI kernels natively (the native stage tested them)"
  echo "STAGE-RESULT 0 0 1"
  exit 0
fi
[ -z "$exclude" ] || echo "x86emu: ${native[*]} kernels skipped over SIMDe: this CPU runs them natively (the native stage tested them)"
scripts/deps.sh libsimde-dev
B=build-x86emu
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DQMM_WERROR=ON -DQMM_X86_EMULATED_TESTS=ON \
  -DQMM_BUILD_TOOLS=OFF -DQMM_BUILD_BENCH=OFF -DQMM_BUILD_LLM=OFF >/dev/null
cmake --build $B -j "$JOBS" --target qmm_x86_emulated_tests >/dev/null
set +e
out=$($B/tests/x86/qmm_x86_emulated_tests --gtest_brief=1 ${exclude:+"--gtest_filter=-${exclude#:}"} 2>&1)
rc=$?
set -e
echo "$out" | grep -E '^\[  (FAILED|SKIPPED) |^\[==========\]|Failure|Skipped' || true
count() { echo "$out" | sed -n "s/^\[  $1 *\] \([0-9]*\) tests\{0,1\}[.,].*/\1/p" | head -1; }
p=$(count PASSED); f=$(count FAILED); k=$(count SKIPPED)
p=${p:-0} f=${f:-0} k=${k:-0}
[ "$rc" = 0 ] || [ "$f" != 0 ] || f=1
echo "STAGE-RESULT $p $f $k"
[ "$f" = 0 ]
