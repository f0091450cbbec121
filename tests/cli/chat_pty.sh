#!/usr/bin/env bash
# `qmm chat` on a terminal keeps non-ASCII characters: a line typed through a pseudo-terminal
# (util-linux `script`) gives the model as many prompt tokens as the same line piped in.
# Usage: chat_pty.sh QMM MODEL WORK_DIR
set -uo pipefail
qmm=$1 model=$2 work=$3
command -v script >/dev/null || { echo "SKIP: no util-linux script (pseudo-terminal)"; exit 0; }
mkdir -p "$work"
line='héllo 😀 你好'
chat=("$qmm" chat -m "$model" --chat-template chatml -n 1 --temp 0 --trace -t 1)
printf '%s\n' "$line" | "${chat[@]}" >/dev/null 2>"$work/pipe.err"
piped=$(grep -o 'trace turn 1: [0-9]* prompt tokens' "$work/pipe.err")
# The terminal: the line, then Ctrl-D at the empty prompt; LANG unset (the C locale) is the
# case that dropped the characters.
for lang in "" C.UTF-8; do
  (printf '%s\r' "$line"; sleep 2; printf '\004'; sleep 1) |
    env -u LC_ALL -u LC_CTYPE LANG="$lang" timeout 60 script -qfec "$(printf '%q ' "${chat[@]}") 2>$work/pty.err" /dev/null \
      >"$work/pty.out"
  typed=$(grep -o 'trace turn 1: [0-9]* prompt tokens' "$work/pty.err")
  if [ -z "$piped" ] || [ "$typed" != "$piped" ]; then
    echo "LANG='$lang': through a terminal '$typed', piped '$piped'"; cat "$work/pty.err"; exit 1
  fi
done
echo "ok: $piped, on a terminal and through a pipe"
