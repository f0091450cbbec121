#!/usr/bin/env bash
# qmm against llama.cpp on each model family's 1B-class synthetic model (issue 13). One row per
# shape, weight type and thread count, made of paired measurements: each round runs `qmm bench
# model` and llama.cpp built for this CPU (Debian's llama-bench, whose ggml CPU backend picks its
# ISA variant at run time: scripts/llamacpp_native.sh) on the same file with the same threads, one
# right after the other, alternating which goes first; a row reports the median of its rounds. qmm's decode is also given as its share of a plain read
# of its packed weights timed right after each token (the "paired" column of `qmm bench model`):
# 100 % decodes as fast as the machine streams the weights from DRAM at that moment, so the share
# holds up under load where a bound measured once would not.
#
# usage: scripts/bench_families.sh [--quick] [--help] [SHAPE...]
#   SHAPE       default: gemma3-1b gemma2-2b qwen2.5-0.5b qwen3-0.6b phi3-mini llama-1b
#   --quick     the same as QUICK=1: PP=64 TG=16 ROUNDS=1 (minutes instead of hours)
# environment:
#   TYPES="q4_0 q4_k_m"   THREADS="1 2"   ROUNDS=2   PP=512   TG=128
#   QMM=path/to/qmm       default: builds build-bench/ (as scripts/bench.sh)
#   CACHE=DIR             synthesized models are kept there (default ~/.cache/qmm-bench), so a
#                         re-run does not synthesize them again
#   OUT=DIR               default bench-results/families-DATE: table.md, raw.jsonl
#   QMM_DISABLE, QMM_KERNELS, QMM_ATTENTION  pass through to qmm (QMM_KERNELS=avx2
#                         QMM_ATTENTION=attend_avx2: the AVX2 path; disabling avx512vnni,avxvnni
#                         alone leaves AMX to prefill)
#   QMM_LLAMACPP_VARIANT  llama.cpp's CPU variant (haswell: AVX2), as QMM_DISABLE is qmm's; an
#                         AVX2-only CPU (Zen 3) compared on this one: both set
#   IK=1                  ik_llama.cpp built for this CPU too (scripts/ik_llamacpp.sh, from
#                         IK_LLAMA_SRC or its cache; its llama-bench with -rtr 1 -fa 1), a third
#                         system in each round and four more columns
# A full run (6 shapes x 2 types x 2 thread counts, 2 rounds of pp512 + tg128 each) takes about
# two hours on 2 cores, most of it llama.cpp's prefill; the models take ~12 GB of disk.
set -euo pipefail
usage() { sed -n '11,29p' "$0" | sed 's/^# \{0,1\}//'; }
SHAPES=()
for a in "$@"; do
  case "$a" in
    -h | --help) usage; exit 0 ;;
    --quick) QUICK=1 ;;
    -*) echo "bench_families.sh: unknown option '$a' (see --help)" >&2; exit 2 ;;
    *) SHAPES+=("$a") ;;
  esac
done
cd "$(dirname "$0")/.."
ROOT=$PWD
[ ${#SHAPES[@]} -gt 0 ] || SHAPES=(gemma3-1b gemma2-2b qwen2.5-0.5b qwen3-0.6b phi3-mini llama-1b)
TYPES=${TYPES:-q4_0 q4_k_m}
THREADS=${THREADS:-1 2}
if [ -n "${QUICK:-}" ]; then
  PP=${PP:-64} TG=${TG:-16} ROUNDS=${ROUNDS:-1}
else
  PP=${PP:-512} TG=${TG:-128} ROUNDS=${ROUNDS:-2}
fi
for v in PP TG ROUNDS; do
  [[ ${!v} =~ ^[1-9][0-9]{0,5}$ ]] || { echo "bench_families.sh: $v must be a positive number, not '${!v}'" >&2; exit 2; }
done
case ${IK:-0} in
  0) ;;
  1) command -v python3 >/dev/null || { echo "bench_families.sh: IK=1 needs python3 (ik_llama.cpp's llama-bench writes JSON, not JSON lines)" >&2; exit 2; } ;;
  *) echo "bench_families.sh: IK must be 0 or 1, not '$IK'" >&2; exit 2 ;;
esac
CACHE=${CACHE:-$HOME/.cache/qmm-bench}
OUT=${OUT:-$ROOT/bench-results/families-$(date -u +%Y%m%d-%H%M%S)}

if [ -z "${QMM:-}" ]; then
  scripts/deps.sh
  cmake -S "$ROOT" -B "$ROOT/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release -DQMM_BUILD_TESTS=OFF \
        -DQMM_BUILD_BENCH=OFF -DQMM_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$ROOT/build-bench" --target qmm_cli -j "$(nproc)" >/dev/null
  QMM=$ROOT/build-bench/tools/qmm
fi
for s in "${SHAPES[@]}"; do
  "$QMM" synth --help | grep -q "^  $s:" || { echo "bench_families.sh: no synth shape '$s' (qmm synth --help lists them)" >&2; exit 2; }
done
LLAMA_BENCH=$(scripts/llamacpp_native.sh --print-bin)/llama-bench
SYSTEMS=(qmm llamacpp)
if [ "${IK:-0}" = 1 ]; then
  IK_BENCH=$(scripts/ik_llamacpp.sh --print-bin)/llama-bench
  SYSTEMS+=(ik_llamacpp)
fi
mkdir -p "$OUT" "$CACHE"
RAW=$OUT/raw.jsonl
: >"$RAW"

# The model of shape $1 in type $2, synthesized once into $CACHE (written aside, then renamed:
# an interrupted run leaves no half file).
model() {
  local f=$CACHE/$1-$2.gguf
  if [ ! -f "$f" ]; then
    echo "synthesizing $f" >&2
    "$QMM" synth "$1" --type "$2" -o "$f.partial" -f >/dev/null
    mv "$f.partial" "$f"
  fi
  echo "$f"
}

# One round of a row: qmm and llama.cpp (and ik_llama.cpp) on file $1 with $2 threads, round $3
# starting with system $3 % the number of systems (rounds alternate which goes first). Each
# result goes to $RAW as one JSON line tagged with the row.
round() {
  local f=$1 t=$2 r=$3 tag i sys
  tag="\"shape\": \"$SHAPE\", \"type\": \"$TYPE\""
  for ((i = 0; i < ${#SYSTEMS[@]}; ++i)); do
    sys=${SYSTEMS[$(((r + i) % ${#SYSTEMS[@]}))]}
    if [ "$sys" = qmm ]; then
      "$QMM" bench model -m "$f" -p "$PP" -n "$TG" -t "$t" -r 1 --no-limits -o jsonl
    elif [ "$sys" = llamacpp ]; then
      "$LLAMA_BENCH" -m "$f" -p "$PP" -n "$TG" -t "$t" -r 1 -o jsonl 2>/dev/null
    else
      "$IK_BENCH" -m "$f" -p "$PP" -n "$TG" -t "$t" -r 1 -rtr 1 -fa 1 -o json 2>/dev/null |
        python3 -c 'import json, sys; [print(json.dumps(o)) for o in json.load(sys.stdin)]'
    fi | sed "s/^{/{\"system\": \"$sys\", $tag, /" >>"$RAW"
  done
}

{
  echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "qmm: $("$QMM" --version | head -1)"
  echo "llama.cpp: $(scripts/llamacpp_native.sh | sed -n 's/^  CPU variant ggml picks here: \([^ ]*\).*/Debian build, CPU variant \1/p')"
  [ -z "${IK_BENCH:-}" ] || echo "ik_llama.cpp: $(cat "$(dirname "$IK_BENCH")/../stamp" 2>/dev/null || echo '?'), GGML_NATIVE=ON for $(cat "$(dirname "$IK_BENCH")/../cpu" 2>/dev/null || echo '?'), -rtr 1 -fa 1"
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/machine.txt"
for SHAPE in "${SHAPES[@]}"; do
  for TYPE in $TYPES; do
    f=$(model "$SHAPE" "$TYPE")
    for t in $THREADS; do
      for ((r = 0; r < ROUNDS; ++r)); do
        echo "$SHAPE $TYPE -t $t round $((r + 1))/$ROUNDS" >&2
        round "$f" "$t" "$r"
      done
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/machine.txt"

# The table: medians (and ranges) over the rounds of each row.
if command -v node >/dev/null; then
  node scripts/bench_table.mjs "$RAW" >"$OUT/table.md"
else
  echo "(no node here: the raw results are in $RAW; scripts/bench_table.mjs makes the table elsewhere)" >"$OUT/table.md"
fi
echo
cat "$OUT/table.md"
echo
echo "results: $OUT"
