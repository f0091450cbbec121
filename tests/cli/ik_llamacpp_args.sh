#!/usr/bin/env bash
# scripts/ik_llamacpp.sh (builds ik_llama.cpp from a source you give; not run in CI) checks its
# arguments before it extracts or builds anything: --help is the usage; a bad option, a missing
# source, a directory that is no ik_llama.cpp source or a bad JOBS is one line on stderr and a
# non-zero exit. Usage: ik_llamacpp_args.sh
set -uo pipefail
script=$(dirname "$0")/../../scripts/ik_llamacpp.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export QMM_IK_CACHE=$tmp/cache IK_LLAMA_SRC=
. "$(dirname "$0")/expect_lib.sh"
expect 0 "^ik_llama.cpp built for the CPU" -- bash "$script" --help
expect 2 "unknown option '--frob'" -- bash "$script" --frob
expect 1 "no source: give ik_llama.cpp's source tree" -- bash "$script" --print-bin
expect 1 "'$tmp/none' is not a directory" -- bash "$script" "$tmp/none"
expect 1 "is neither a git directory nor an ik_llama.cpp source tree" -- bash "$script" "$tmp"
expect 1 "JOBS must be a positive number, not '0'" -- env JOBS=0 bash "$script" "$tmp"
[ ! -e "$tmp/cache" ] || { echo "FAIL: a refused call wrote $tmp/cache"; fail=1; }
exit $fail
