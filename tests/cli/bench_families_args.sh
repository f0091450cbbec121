#!/usr/bin/env bash
# scripts/bench_families.sh (a benchmark, not run in CI) checks its arguments before it builds,
# synthesizes or measures anything: --help is the usage, a bad option, value or shape is one line
# on stderr and exit code 2. Usage: bench_families_args.sh QMM
set -uo pipefail
qmm=$1
script=$(dirname "$0")/../../scripts/bench_families.sh
. "$(dirname "$0")/expect_lib.sh"
expect 0 "^usage: scripts/bench_families.sh" -- bash "$script" --help
expect 2 "unknown option '--frob'" -- bash "$script" --frob
expect 2 "PP must be a positive number, not '0'" -- env PP=0 QMM="$qmm" bash "$script"
expect 2 "ROUNDS must be a positive number, not 'x'" -- env ROUNDS=x QMM="$qmm" bash "$script"
expect 2 "no synth shape 'gemma9'" -- env QMM="$qmm" bash "$script" gemma9
expect 2 "IK must be 0 or 1, not 'yes'" -- env IK=yes QMM="$qmm" bash "$script"
exit $fail
