#!/bin/sh
# Regenerate the layout pictures of docs/layouts.md with `qmm layout`, or check them.
#   scripts/gen-layout-docs.sh [--check] [QMM...]
# QMM is the qmm command (default: build-rel/tools/qmm, built with `ninja -C build-rel qmm_cli`);
# it may be several words, e.g. an emulator and the binary. --check writes nothing and fails
# when a checked-in picture differs from what the command draws (CTest: layout_docs_up_to_date).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
if [ $# -eq 0 ]; then set -- "$root/build-rel/tools/qmm"; fi

img="$root/docs/img"
out="$img"
if [ $check -eq 1 ]; then out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi
mkdir -p "$out"

# name | qmm layout arguments
pictures='
layout-lhs-qsi8d32p-16x64-svl512|lhs --packer lhs_quant_pack_qsi8d32p_f32 -m 16 -k 64 --svl 512
layout-rhs-qsi4c32ps1s0scalef16-64x64-svl512|rhs --packer rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0 -n 64 -k 64 --svl 512
'
status=0
echo "$pictures" | while IFS='|' read -r name args; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086  # args are words
  "$@" layout $args --format svg -o "$out/$name.svg"
  if [ $check -eq 1 ]; then
    if ! cmp -s "$out/$name.svg" "$img/$name.svg"; then
      echo "docs/img/$name.svg is not what 'qmm layout $args' draws now: run scripts/gen-layout-docs.sh" >&2
      exit 1
    fi
  else
    echo "wrote docs/img/$name.svg"
  fi
done || status=1
exit $status
