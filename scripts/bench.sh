#!/usr/bin/env bash
# Every figure of docs/performance.md, measured again on this machine: the machine limits,
# the GEMV and GEMM tables (each selected kernel against the limits measured in the same run,
# and against the scalar kernel), and `qmm bench model` on a synthetic Llama-1B in Q4_0.
# Every output goes to the terminal and to $OUT/NAME.txt (default OUT: bench-results/DATE).
#   QMM=path/to/qmm      use this binary instead of building build-bench/
#   THREADS="1 2"        thread counts (default: 1 and all cores)
#   QUICK=1              small shapes and short runs, to try the script out (about 6 minutes on 2 vCPUs instead of 15)
# A full run takes about 15 minutes on 2 cores and needs ~1.3 GB of disk for the model.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
THREADS=${THREADS:-$(echo 1 "$(nproc)" | tr ' ' '\n' | sort -un | tr '\n' ' ')}
OUT=${OUT:-$ROOT/bench-results/$(date -u +%Y%m%d-%H%M%S)}
WORK=${TMPDIR:-/tmp}/qmm-bench
mkdir -p "$OUT" "$WORK"

if [ -z "${QMM:-}" ]; then
  scripts/deps.sh
  cmake -S "$ROOT" -B "$ROOT/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release -DQMM_BUILD_TESTS=OFF \
        -DQMM_BUILD_BENCH=OFF -DQMM_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$ROOT/build-bench" --target qmm_cli -j "$(nproc)" >/dev/null
  QMM=$ROOT/build-bench/tools/qmm
fi
if [ -n "${QUICK:-}" ]; then
  N_LIST="1024" K=1024 M_LIST="16" MIN_TIME=0.1 ROTATE=64 PP=64 TG=8 REPS=1 SHAPE=tiny
else
  N_LIST="4096 14336" K=4096 M_LIST="16 64 512" MIN_TIME=1 ROTATE=256 PP=512 TG=64 REPS=3 SHAPE=llama-1b
fi
# Runs one qmm benchmark; its output also goes to $OUT/NAME.txt.
measure() {
  local name=$1
  shift
  echo
  echo "== qmm $*" | tee "$OUT/$name.txt"
  "$QMM" "$@" | tee -a "$OUT/$name.txt"
}

"$QMM" info | tee "$OUT/info.txt"
for t in $THREADS; do
  measure "limits-t$t" bench limits -t "$t"
done

# GEMV (m = 1): DRAM (weights rotating through >= 256 MiB of copies, paired with a plain read
# of the same copies), cache-hot, and the scalar kernel on the same shape.
for type in q4_0 q8_0 f16 f32; do
  for n in $N_LIST; do
    for t in $THREADS; do
      scalar=$([ "$t" = 1 ] && [ "$n" = "${N_LIST%% *}" ] || echo --no-scalar)
      measure "gemv-$type-$n-t$t" bench matmul --type "$type" -m 1 -n "$n" -k "$K" -t "$t" \
        --min-time "$MIN_TIME" --rotate-mib "$ROTATE" $scalar
    done
  done
done

# GEMM, n = k = 4096 (the LHS quant+pack is timed alone, on one thread).
for type in q4_0 q8_0 f16 f32; do
  for m in $M_LIST; do
    for t in $THREADS; do
      measure "gemm-$type-m$m-t$t" bench matmul --type "$type" -m "$m" -n "$K" -k "$K" -t "$t" --min-time "$MIN_TIME" --no-scalar
    done
  done
  # Against the scalar reference on a smaller shape (the scalar GEMM is slow).
  measure "gemm-$type-vs-scalar" bench matmul --type "$type" -m 32 -n 1024 -k 1024 --min-time "$MIN_TIME"
done

# A whole model: prefill pp512 and decode tg64 on a synthetic Llama-1B in Q4_0 (random weights
# at the real shape), every thread count, each test repeated.
MODEL=$WORK/$SHAPE-q4_0.gguf
[ -f "$MODEL" ] || "$QMM" synth "$SHAPE" --type q4_0 -o "$MODEL"
tlist=$(echo $THREADS | tr ' ' ',')  # bench model takes a list: -t 1,2
measure model bench model -m "$MODEL" -p "$PP" -n "$TG" -t "$tlist" -r "$REPS"
echo
echo "results: $OUT"
