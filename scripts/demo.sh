#!/usr/bin/env bash
# The LLM demo: greedy text from the real stories260K model with --trace (the call path of
# load, prefill and decode; F32 as shipped, then requantized to Q8_0 with a prompt so the
# prefill shows the int8 GEMM), then a short `qmm bench model` on a synthetic Llama-1B Q4_0.
#   QMM=path/to/qmm      use this binary instead of building build-demo/
#   THREADS=N            threads (default: all cores);  PP=N TG=N  bench sizes (default 64, 16)
# Without ../shared/models the first part runs on a synthetic tiny model (random weights:
# the text is noise, the trace is the point).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
THREADS=${THREADS:-$(nproc)}
PP=${PP:-64}
TG=${TG:-16}
WORK=${TMPDIR:-/tmp}/qmm-demo
mkdir -p "$WORK"

if [ -z "${QMM:-}" ]; then
  scripts/deps.sh  # the Debian 12 packages the build needs (only the missing ones)
  cmake -S "$ROOT" -B "$ROOT/build-demo" -G Ninja -DCMAKE_BUILD_TYPE=Release -DQMM_BUILD_TESTS=OFF \
        -DQMM_BUILD_BENCH=OFF >/dev/null
  cmake --build "$ROOT/build-demo" --target qmm_cli -j 2 >/dev/null
  QMM=$ROOT/build-demo/tools/qmm
fi
has_verb() { "$QMM" --help | grep -qE "^  $1 "; }

STORIES=$ROOT/../shared/models/stories260K.gguf
echo "== qmm info: what this CPU has and which kernels each weight type gets"
"$QMM" info
echo
echo "== qmm bench matmul: Q4_0 GEMV 4096 x 4096, selected kernel vs scalar, against measured limits"
"$QMM" bench matmul --type q4_0 -m 1 -n 4096 -k 4096 --min-time 0.3
echo
echo "== qmm run: greedy decoding from BOS, --trace"
if [ -f "$STORIES" ]; then
  "$QMM" run -m "$STORIES" --trace -n 60 --temp 0 -t "$THREADS"
  echo
  echo "== the same model requantized to Q8_0 at load, with a prompt: prefill runs the int8 GEMM"
  "$QMM" run -m "$STORIES" --convert q8_0 -p "Once upon a time" --trace -n 40 --temp 0 -t "$THREADS" 2>&1 |
    grep -v '^  blk\.\|^    -> '
elif has_verb synth; then
  echo "(../shared/models/stories260K.gguf is absent: a synthetic tiny model with random weights, the text is noise)"
  "$QMM" synth tiny --type q8_0 -f -o "$WORK/tiny-q8_0.gguf" >/dev/null
  "$QMM" run -m "$WORK/tiny-q8_0.gguf" --trace -n 60 --temp 0 -t "$THREADS"
else
  echo "skipped: no stories260K.gguf and this qmm has no 'synth' verb"
fi

echo
echo "== qmm bench model: synthetic llama-1b Q4_0, pp$PP / tg$TG, $THREADS threads"
if has_verb synth; then
  MODEL=$WORK/llama-1b-q4_0.gguf
  [ -f "$MODEL" ] || "$QMM" synth llama-1b --type q4_0 -o "$MODEL"
  "$QMM" bench model -m "$MODEL" -p "$PP" -n "$TG" -t "$THREADS"
else
  echo "skipped: this qmm has no 'synth' verb to make the model"
fi
