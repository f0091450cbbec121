#!/usr/bin/env bash
# The README's first command: build qmm, show what this CPU gets, generate text with --trace
# (the packers and microkernels of load, prefill and decode; the prompt makes prefill run the
# GEMM kernels), time one matmul against the machine's limits and benchmark a 1B-parameter
# model's shape. Needs nothing beyond the repository: without a model file it writes a
# synthetic one (random weights, so the text is noise; the trace and the speed are the point).
#   QMM=path/to/qmm      use this binary instead of building build-demo/
#   MODEL=file.gguf      generate with this model (default: models/stories260K.gguf of a
#                        sibling checkout "shared" if present, else a synthetic tiny model)
#   THREADS=N            threads (default: all cores);  PP=N TG=N  bench sizes (default 64, 16)
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
        -DQMM_BUILD_BENCH=OFF -DQMM_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$ROOT/build-demo" --target qmm_cli -j "$(nproc)" >/dev/null
  QMM=$ROOT/build-demo/tools/qmm
fi
has_verb() { "$QMM" --help | grep -qE "^  $1 "; }
section() { printf '\n== %s\n' "$*"; }

section "qmm info: what this CPU has and which kernels each weight type gets"
"$QMM" info

section "qmm run --trace: prefill runs the GEMM kernels, decode the GEMV kernels"
MODEL=${MODEL:-}
if [ -z "$MODEL" ] && [ -f "$ROOT/../shared/models/stories260K.gguf" ]; then
  MODEL=$ROOT/../shared/models/stories260K.gguf  # a real 260K-parameter story model, if it is at hand
fi
if [ -z "$MODEL" ]; then
  MODEL=$WORK/tiny-q8_0.gguf
  "$QMM" synth tiny --type q8_0 -f -o "$MODEL" >/dev/null
  echo "(no model given: a synthetic tiny Llama with random weights, so the text is noise; MODEL=file.gguf for real text)"
  CONVERT=()
else
  CONVERT=(--convert q8_0)  # requantized at load, so the trace shows the int8 kernels
fi
# The per-tensor lines of the load trace are long; the stage summaries are the point here.
"$QMM" run -m "$MODEL" "${CONVERT[@]}" -p "Once upon a time" -n 48 --temp 0 -t "$THREADS" --trace 2>&1 |
  grep -vE '^  blk\.|^    -> ' || true

section "qmm bench matmul: one Q4_0 GEMV (4096 x 4096), selected kernel vs scalar, against limits measured now"
"$QMM" bench matmul --type q4_0 -m 1 -n 4096 -k 4096 --min-time 0.3

section "qmm bench model: a synthetic Llama-1B shape in Q4_0 (random weights), pp$PP / tg$TG, $THREADS threads"
BENCH_MODEL=$WORK/llama-1b-q4_0.gguf
[ -f "$BENCH_MODEL" ] || "$QMM" synth llama-1b --type q4_0 -o "$BENCH_MODEL"
"$QMM" bench model -m "$BENCH_MODEL" -p "$PP" -n "$TG" -t "$THREADS" -r 3

cat <<EOF

== What next
  A real model: any Llama-family GGUF in Q4_0, Q8_0, F16 or F32, e.g.
    curl -LO https://huggingface.co/TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF/resolve/main/tinyllama-1.1b-chat-v1.0.Q4_0.gguf
    $QMM run -m tinyllama-1.1b-chat-v1.0.Q4_0.gguf -p "The three laws of robotics are"
EOF
if has_verb chat; then
  echo "  Chat with it:          $QMM chat -m tinyllama-1.1b-chat-v1.0.Q4_0.gguf"
fi
if has_verb serve; then
  echo "  Serve it over HTTP:    $QMM serve -m tinyllama-1.1b-chat-v1.0.Q4_0.gguf   (OpenAI-compatible API)"
fi
cat <<EOF
  Benchmark it:          $QMM bench model -m tinyllama-1.1b-chat-v1.0.Q4_0.gguf -t 1,$THREADS
  See a packed layout:   $QMM layout rhs --kernel matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa -n 64 -k 64
  Every verb:            $QMM --help   (README.md, docs/design.md, docs/performance.md)
EOF
