#!/usr/bin/env bash
# Depth curves (issue 29): prefill and decode tokens/s of qmm and of llama.cpp built for this CPU
# (Debian's llama-bench, scripts/llamacpp_native.sh, with its flash attention -fa 1 and its
# default F16 KV cache) against the number of positions already in the KV cache (llama-bench's
# -d/--n-depth), on one model, then the plot (scripts/depth_plot.py). Each round runs `qmm bench
# model` and llama-bench on the same file, threads and depths, one right after the other,
# alternating which goes first; the plot shows the median of the rounds and their range.
#
# usage: scripts/bench_depth.sh [-m MODEL] [-d DEPTHS] [-r ROUNDS] [-t THREADS] [-p PP] [-n TG] [-o OUT]
#   -m MODEL    GGUF file (default: the synthetic llama-1b Q4_0 in $CACHE, synthesized once)
#   -d DEPTHS   comma-separated depths (default 0,1024,2048,4096,8192)
#   -r ROUNDS   rounds (default 2)
#   -t THREADS  comma-separated thread counts (default: the number of cores)
#   -p PP, -n TG  prompt tokens of the prefill test (0: none), tokens of the decode test (default 512, 32)
#   -o OUT      output directory (default bench-results/depth-DATE): raw.jsonl, machine.txt,
#               depth.svg
# environment: QMM=path/to/qmm (default: builds build-bench/, as scripts/bench.sh),
#   CACHE=DIR (synthesized models, default ~/.cache/qmm-bench), CTK/CTV (qmm's and llama.cpp's
#   KV types, default f16), NICE=19 runs both under nice (a shared machine), IK=1 a third system:
#   ik_llama.cpp built for this CPU (scripts/ik_llamacpp.sh, -rtr 1 -fa 1), whose llama-bench has
#   no -d: its decode at depth D is -gp D,TG (TG tokens timed after a D-token prompt), its
#   prefill is measured at depth 0 only
set -euo pipefail
usage() { sed -n '9,22p' "$0" | sed 's/^# \{0,1\}//'; }
cd "$(dirname "$0")/.."
ROOT=$PWD
MODEL='' DEPTHS=0,1024,2048,4096,8192 ROUNDS=2 THREADS=$(nproc) PP=512 TG=32 OUT=''
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    -m | -d | -r | -t | -p | -n | -o)
      [ $# -ge 2 ] || { echo "bench_depth.sh: $1 needs a value (see --help)" >&2; exit 2; }
      case "$1" in -m) MODEL=$2 ;; -d) DEPTHS=$2 ;; -r) ROUNDS=$2 ;; -t) THREADS=$2 ;; -p) PP=$2 ;; -n) TG=$2 ;; -o) OUT=$2 ;; esac
      shift 2 ;;
    *) echo "bench_depth.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $DEPTHS =~ ^[0-9]{1,6}(,[0-9]{1,6})*$ ]] || { echo "bench_depth.sh: -d must be a comma-separated list of depths, not '$DEPTHS'" >&2; exit 2; }
[[ $THREADS =~ ^[1-9][0-9]{0,3}(,[1-9][0-9]{0,3})*$ ]] || { echo "bench_depth.sh: -t must be a comma-separated list of thread counts, not '$THREADS'" >&2; exit 2; }
for v in ROUNDS TG; do
  [[ ${!v} =~ ^[1-9][0-9]{0,5}$ ]] || { echo "bench_depth.sh: $v must be a positive number, not '${!v}'" >&2; exit 2; }
done
[[ $PP =~ ^(0|[1-9][0-9]{0,5})$ ]] || { echo "bench_depth.sh: PP must be a number, not '$PP'" >&2; exit 2; }
case ${IK:-0} in
  0) ;;
  1) command -v python3 >/dev/null || { echo "bench_depth.sh: IK=1 needs python3 (ik_llama.cpp's llama-bench writes JSON, not JSON lines)" >&2; exit 2; } ;;
  *) echo "bench_depth.sh: IK must be 0 or 1, not '$IK'" >&2; exit 2 ;;
esac
CTK=${CTK:-f16} CTV=${CTV:-f16}
CACHE=${CACHE:-$HOME/.cache/qmm-bench}
OUT=${OUT:-$ROOT/bench-results/depth-$(date -u +%Y%m%d-%H%M%S)}
run() { if [ -n "${NICE:-}" ]; then nice -n "$NICE" "$@"; else "$@"; fi; }

if [ -z "${QMM:-}" ]; then
  scripts/deps.sh
  cmake -S "$ROOT" -B "$ROOT/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release -DQMM_BUILD_TESTS=OFF \
        -DQMM_BUILD_BENCH=OFF -DQMM_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$ROOT/build-bench" --target qmm_cli -j "$(nproc)" >/dev/null
  QMM=$ROOT/build-bench/tools/qmm
fi
if [ -z "$MODEL" ]; then
  MODEL=$CACHE/llama-1b-q4_0.gguf
  if [ ! -f "$MODEL" ]; then
    mkdir -p "$CACHE"
    echo "synthesizing $MODEL" >&2
    "$QMM" synth llama-1b --type q4_0 -o "$MODEL.partial" -f >/dev/null
    mv "$MODEL.partial" "$MODEL"
  fi
fi
[ -f "$MODEL" ] || { echo "bench_depth.sh: no model file '$MODEL'" >&2; exit 2; }
LLAMA_BENCH=$(scripts/llamacpp_native.sh --print-bin)/llama-bench
SYSTEMS=(qmm llamacpp)
if [ "${IK:-0}" = 1 ]; then
  IK_BENCH=$(scripts/ik_llamacpp.sh --print-bin)/llama-bench
  SYSTEMS+=(ik)
fi
mkdir -p "$OUT"
RAW=$OUT/raw.jsonl
: >"$RAW"

# One round: each system, starting with system $1 % the number of systems (rounds alternate
# which goes first); each result line goes to $RAW tagged with its system.
round() {
  local i sys
  for ((i = 0; i < ${#SYSTEMS[@]}; ++i)); do
    sys=${SYSTEMS[$((($1 + i) % ${#SYSTEMS[@]}))]}
    if [ "$sys" = qmm ]; then
      run "$QMM" bench model -m "$MODEL" -p "$PP" -n "$TG" -d "$DEPTHS" -t "$THREADS" -r 1 -ctk "$CTK" -ctv "$CTV" --no-limits -o jsonl |
        sed 's/^{/{"system": "qmm", /' >>"$RAW"
    elif [ "$sys" = llamacpp ]; then
      run "$LLAMA_BENCH" -m "$MODEL" -p "$PP" -n "$TG" -d "$DEPTHS" -t "$THREADS" -r 1 -fa 1 -ctk "$CTK" -ctv "$CTV" -o jsonl 2>/dev/null |
        sed 's/^{/{"system": "llama.cpp", /' >>"$RAW"
    else
      local gp=() d
      for d in ${DEPTHS//,/ }; do [ "$d" = 0 ] || gp+=(-gp "$d,$TG"); done
      # (-n 0 with depths only: its default -n 128 would run too)
      run "$IK_BENCH" -m "$MODEL" -p "$PP" -n "$([[ ,$DEPTHS, == *,0,* ]] && echo "$TG" || echo 0)" "${gp[@]}" -t "$THREADS" -r 1 \
          -rtr 1 -fa 1 -ctk "$CTK" -ctv "$CTV" -o json 2>/dev/null |
        python3 -c '
import json, sys
for o in json.load(sys.stdin):
    if o["n_prompt"] > 0 and o["n_gen"] > 0:  # -gp D,TG: TG decodes timed at depth D
        o["n_depth"], o["n_prompt"] = o["n_prompt"], 0
    else:
        o["n_depth"] = 0
    o["system"] = "ik_llama.cpp"
    print(json.dumps(o))' >>"$RAW"
    fi
  done
}

{
  echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "model: $(basename "$MODEL"); KV cache K $CTK, V $CTV; pp$PP, tg$TG; threads $THREADS; $ROUNDS rounds${NICE:+; both under nice -n $NICE}"
  echo "qmm: $("$QMM" --version | head -1)"
  echo "llama.cpp: $(scripts/llamacpp_native.sh | sed -n 's/^  CPU variant ggml picks here: \([^ ]*\).*/Debian build, CPU variant \1/p'), -fa 1"
  [ -z "${IK_BENCH:-}" ] || echo "ik_llama.cpp: $(cat "$(dirname "$IK_BENCH")/../stamp" 2>/dev/null || echo '?'), GGML_NATIVE=ON, -rtr 1 -fa 1, decode at depth by -gp D,$TG"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/machine.txt"
for ((r = 0; r < ROUNDS; ++r)); do
  echo "round $((r + 1))/$ROUNDS" >&2
  round "$r"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/machine.txt"
python3 scripts/depth_plot.py "$RAW" "$OUT/machine.txt" "$OUT/depth.svg"
echo "results: $OUT (plot: $OUT/depth.svg)"
