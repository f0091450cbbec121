#!/usr/bin/env bash
# The depth curves of issue 29: the committed plot exists, is an SVG of both systems, and the
# README and docs/performance-depth.md show it; scripts/depth_plot.py draws a plot from benchmark lines
# (a small fixture of the format scripts/bench_depth.sh writes) and refuses a bad line with a
# message. Usage: check_depth_plot.sh REPO_ROOT
set -euo pipefail
cd "$1"
svg=docs/depth-llama-1b.svg
bad=0
fail() { echo "check_depth_plot: $*"; bad=1; }
[ -f "$svg" ] || { echo "check_depth_plot: $svg is missing (scripts/bench_depth.sh makes it)"; exit 1; }
head -c 5 "$svg" | grep -q '^<svg' || fail "$svg is not an SVG"
grep -q 'qmm' "$svg" && grep -q 'llama.cpp' "$svg" || fail "$svg does not show both systems"
for f in README.md docs/performance-depth.md; do
  grep -q "depth-llama-1b.svg" "$f" || fail "$f does not show $svg"
done
grep -q 'scripts/bench_depth.sh' docs/performance-depth.md || fail "docs/performance-depth.md does not give the command (scripts/bench_depth.sh)"
if command -v python3 >/dev/null; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  printf 'CPU: test\nload average before: 1\n' >"$tmp/machine.txt"
  python3 scripts/depth_plot.py tests/docs/depth_fixture.jsonl "$tmp/machine.txt" "$tmp/out.svg" || fail "depth_plot.py failed on the fixture"
  [ "$(grep -c '<circle' "$tmp/out.svg")" -ge 12 ] || fail "depth_plot.py drew fewer points than the fixture has"
  echo '{"system": "qmm"}' >"$tmp/bad.jsonl"
  if python3 scripts/depth_plot.py "$tmp/bad.jsonl" "$tmp/machine.txt" "$tmp/bad.svg" 2>"$tmp/err"; then
    fail "depth_plot.py accepted a line without results"
  fi
  grep -q 'not a benchmark line' "$tmp/err" || fail "depth_plot.py's error does not say what is wrong: $(cat "$tmp/err")"
else
  echo "check_depth_plot: no python3 here: the plot script is not run"
fi
exit $bad
