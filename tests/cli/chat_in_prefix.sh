#!/usr/bin/env bash
# `qmm chat --in-prefix P --in-suffix S` (llama-cli's) wraps each typed message in P and S: the
# conversation that /save writes holds "P<message>S" as the user's turn.
# Usage: chat_in_prefix.sh QMM MODEL
set -uo pipefail
qmm=$1 model=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'Hello there\n/save %s/chat.json\n' "$dir" |
  "$qmm" chat -m "$model" --chat-template chatml --in-prefix '[PRE] ' --in-suffix ' [SUF]' -n 2 --temp 0 -t 1 \
    >"$dir/out" 2>&1 || { echo "chat failed:"; cat "$dir/out"; exit 1; }
grep -q '"content": *"\[PRE\] Hello there \[SUF\]"' "$dir/chat.json" ||
  { echo "the saved user turn is not '[PRE] Hello there [SUF]':"; cat "$dir/chat.json" "$dir/out"; exit 1; }
echo "ok: $(grep -o '"\[PRE\][^"]*"' "$dir/chat.json")"
