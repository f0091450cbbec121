#!/usr/bin/env bash
# Ctrl-C during `qmm run` stops the generation and still prints the statistics, exit code 130
# (128 + SIGINT, as llama-cli: a script tells it from a finished run).
# Usage: run_interrupt.sh QMM MODEL [EMULATOR...]
set -uo pipefail
qmm=$1 model=$2
shift 2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# A long generation (EOS ignored, a large context), interrupted after 3 s (10 s under an
# emulator, which starts slower); killed 30 s later if SIGINT did not stop it.
wait_s=$([ $# -gt 0 ] && echo 10 || echo 3)
timeout --preserve-status -s INT -k 30 "$wait_s" "$@" "$qmm" run -m "$model" -p "Once upon a time" --ignore-eos -c 50000 --temp 0 -t 1 \
  >/dev/null 2>"$err"
rc=$?
grep -q "interrupted (Ctrl-C)" "$err" && grep -q "^decode: " "$err" && [ $rc = 130 ] ||
  { echo "exit $rc; stderr:"; cat "$err"; exit 1; }
echo "ok: $(grep -h 'interrupted\|^decode' "$err" | tr '\n' ' ')"
