#!/usr/bin/env bash
# CTest driver of openai_client.mjs: installs the official `openai` npm package once into
# ~/.cache/qmm-npm (QMM_NPM_DIR), then runs the client tests against `qmm serve`.
#   openai_check.sh QMM_BINARY MODEL.gguf
# Exits 77 (CTest: skipped) with the reason only when the npm registry cannot be reached.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] || { echo "usage: $0 QMM_BINARY MODEL.gguf" >&2; exit 2; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "openai_check: needs node and npm (apt-get install nodejs npm)" >&2; exit 1; }
dir=${QMM_NPM_DIR:-$HOME/.cache/qmm-npm}
if [ ! -f "$dir/node_modules/openai/package.json" ]; then
  if ! timeout 60 npm ping >/dev/null 2>&1; then
    echo "SKIP: the npm registry cannot be reached (npm ping failed), so the openai client cannot be installed"
    exit 77
  fi
  echo "openai_check: installing the openai npm package into $dir"
  mkdir -p "$dir"
  (cd "$dir" && { [ -f package.json ] || npm init -y >/dev/null; } && timeout 300 npm install --no-audit --no-fund openai@4 >&2)
fi
exec node "$here/openai_client.mjs" "$dir" "$1" "$2"
