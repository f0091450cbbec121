#!/usr/bin/env bash
# Cross-check GGUF files with llama.cpp: loads each MODEL in llama.cpp's CPU backend (the
# prebuilt binaries of the node-llama-cpp npm package, installed once into
# ~/.cache/qmm-llamacpp) and prints one JSON line per model: prompt tokens, the greedy
# continuation's token ids and its text.
#   scripts/llamacpp_check.sh [-p PROMPT] [-n N] MODEL.gguf...
# e.g. qmm quantize ../shared/models/stories260K.gguf /tmp/s.gguf q4_0 && scripts/llamacpp_check.sh /tmp/s.gguf
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prompt="Once upon a time"
n=32
while getopts "p:n:" o; do
  case $o in
    p) prompt=$OPTARG ;;
    n) n=$OPTARG ;;
    *) echo "usage: $0 [-p PROMPT] [-n N] MODEL.gguf..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-p PROMPT] [-n N] MODEL.gguf..." >&2; exit 2; }

dir=${QMM_LLAMACPP_DIR:-$HOME/.cache/qmm-llamacpp}
"$here/llamacpp_setup.sh"
cp "$here/llamacpp_run.mjs" "$dir/run.mjs"
for m in "$@"; do
  node "$dir/run.mjs" "$(realpath "$m")" "$prompt" "$n"
done
