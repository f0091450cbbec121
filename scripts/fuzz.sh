#!/usr/bin/env bash
# Fuzz the GGUF reader and model loading with libFuzzer + AddressSanitizer + UBSan for a
# bounded time: fuzz_gguf (the reader) then fuzz_model (Model::load, tokenizer, one forward
# pass), each for half of SECONDS.
#   scripts/fuzz.sh [SECONDS]        (default 60; env JOBS=N runs N fuzzing processes)
#   FUZZ_TARGET=jinja scripts/fuzz.sh [SECONDS]   the Jinja interpreter of chat templates instead
#   (seeds: the built-in templates and ../shared/templates; corpus in build-fuzz/corpus-jinja)
# Builds build-fuzz/ with clang-19 (installing clang-19 and its fuzzer runtime when absent),
# writes the seed corpus (tests/fuzz/make_seeds.cpp) and keeps the growing corpus in
# build-fuzz/corpus (build-fuzz/corpus-model). A crash leaves its input in build-fuzz/artifacts/
# and exits non-zero; reproduce it with build-fuzz/tests/fuzz/fuzz_gguf (or fuzz_model)
# build-fuzz/artifacts/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-60}
JOBS=${JOBS:-1}
BUILD=build-fuzz

need=()
command -v clang++-19 >/dev/null || need+=(clang-19)
[ -n "$(find /usr/lib/llvm-19/lib/clang -name 'libclang_rt.fuzzer*.a' 2>/dev/null | head -1)" ] || need+=(libclang-rt-19-dev)
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
if [ ${#need[@]} -gt 0 ]; then
  echo "fuzz.sh: installing ${need[*]}"
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${need[@]}"
fi

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DQMM_FUZZ=ON -DQMM_SANITIZE=address,undefined \
  -DQMM_BUILD_TESTS=OFF -DQMM_BUILD_BENCH=OFF -DQMM_BUILD_TOOLS=OFF >/dev/null
ninja -C "$BUILD" -j"${NINJA_JOBS:-2}" fuzz_gguf fuzz_model fuzz_jinja fuzz_make_seeds

if [ "${FUZZ_TARGET:-gguf}" = jinja ]; then
  rm -rf "$BUILD/seeds-jinja" && mkdir -p "$BUILD/seeds-jinja" "$BUILD/corpus-jinja" "$BUILD/artifacts"
  "$BUILD/tests/fuzz/fuzz_make_seeds" "$BUILD/seeds-jinja" jinja
  cp ../shared/templates/*.jinja "$BUILD/seeds-jinja/" 2>/dev/null || true
  echo "fuzz.sh: fuzzing the Jinja interpreter for ${SECONDS_TO_RUN}s"
  cd "$BUILD"
  exec tests/fuzz/fuzz_jinja corpus-jinja seeds-jinja -dict=../tests/fuzz/jinja.dict -max_len=16384 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -timeout=10 -max_total_time="$SECONDS_TO_RUN" -print_final_stats=1 -artifact_prefix=artifacts/
fi

rm -rf "$BUILD/seeds" && mkdir -p "$BUILD/seeds" "$BUILD/corpus" "$BUILD/corpus-model" "$BUILD/artifacts"
"$BUILD/tests/fuzz/fuzz_make_seeds" "$BUILD/seeds"

parallel=()
[ "$JOBS" -le 1 ] || parallel=(-jobs="$JOBS" -workers="$JOBS")  # logs: $BUILD/fuzz-N.log
HALF=$(( (SECONDS_TO_RUN + 1) / 2 ))
cd "$BUILD"
fuzz() {  # TARGET CORPUS SECONDS
  echo "fuzz.sh: $1 for ${3}s ($JOBS job(s))"
  tests/fuzz/"$1" "$2" seeds -dict=../tests/fuzz/gguf.dict -max_len=262144 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -timeout=10 -max_total_time="$3" -print_final_stats=1 \
    -artifact_prefix=artifacts/ "${parallel[@]}"
}
fuzz fuzz_gguf corpus "$HALF"
fuzz fuzz_model corpus-model "$HALF"
