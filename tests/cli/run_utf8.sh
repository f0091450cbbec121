#!/usr/bin/env bash
# qmm run streams only valid UTF-8: a random-weight model emits byte tokens that form invalid
# sequences, which must come out as U+FFFD. Usage: run_utf8.sh QMM WORK_DIR [EMULATOR...]
set -euo pipefail
qmm=$1 work=$2
shift 2
mkdir -p "$work"
"$@" "$qmm" synth tiny --type q8_0 -f -o "$work/tiny.gguf" >/dev/null
"$@" "$qmm" run -m "$work/tiny.gguf" -p "Once upon a time" -n 200 --temp 1.5 --seed 7 -t 1 >"$work/out.txt" 2>/dev/null
iconv -f UTF-8 -t UTF-8 "$work/out.txt" >/dev/null || { echo "qmm run wrote invalid UTF-8:"; od -c "$work/out.txt" | head; exit 1; }
grep -q $'\xEF\xBF\xBD' "$work/out.txt" || { echo "no U+FFFD: the model produced no invalid sequence to replace"; exit 1; }
echo "ok: $(wc -c <"$work/out.txt") bytes of valid UTF-8, invalid sequences replaced by U+FFFD"
