#!/usr/bin/env bash
# qmm tune's whole-step pass runs on a real model, writes its line to the tuning file, and a later
# load applies it (from the cache). Usage: tune_steps.sh QMM MODEL WORK_DIR [EMULATOR...]
set -euo pipefail
qmm=$1 model=$2 work=$3
shift 3
rm -rf "$work"
mkdir -p "$work"
export XDG_CACHE_HOME=$work
"$@" "$qmm" tune -m "$model" -t 1 --step-budget 5 >"$work/tune.out" 2>&1 || { cat "$work/tune.out"; exit 1; }
grep -q "^whole decode steps: " "$work/tune.out" || { echo "no whole-step table:"; cat "$work/tune.out"; exit 1; }
grep -q "^step 1 [0-9a-f]\{16\} " "$work/qmm/tune.txt" || { echo "no step line in the file:"; cat "$work/qmm/tune.txt"; exit 1; }
head -1 "$work/qmm/tune.txt" | grep -qx "qmm-tune 2" || { echo "not a version 2 file"; exit 1; }
"$@" "$qmm" run -m "$model" -t 1 -p Once -n 1 --trace >/dev/null 2>"$work/run.err" || { cat "$work/run.err"; exit 1; }
grep -q "whole decode step: .*from the cache" "$work/run.err" || { echo "the load did not apply it:"; cat "$work/run.err"; exit 1; }
"$@" "$qmm" info >"$work/info.out" 2>&1
grep -q "whole decode step" "$work/info.out" || { echo "qmm info does not list it"; cat "$work/info.out"; exit 1; }
echo "ok: $(grep -c '^step ' "$work/qmm/tune.txt") step line(s) written and applied"
