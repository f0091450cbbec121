#!/usr/bin/env bash
# Installs llama.cpp's prebuilt CPU build (the node-llama-cpp npm package) into
# ${QMM_LLAMACPP_DIR:-~/.cache/qmm-llamacpp}, once: the oracle of scripts/llamacpp_check.sh and
# of the llamacpp_oracle test. Exits non-zero (with the reason) when node/npm are missing or the
# npm registry cannot be reached; the test then skips and says so.
set -euo pipefail
dir=${QMM_LLAMACPP_DIR:-$HOME/.cache/qmm-llamacpp}
[ -d "$dir/node_modules/node-llama-cpp" ] && exit 0
command -v npm >/dev/null || { echo "llamacpp_setup.sh: needs node and npm (apt-get install nodejs npm)" >&2; exit 1; }
echo "llamacpp_setup.sh: installing node-llama-cpp into $dir" >&2
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || npm init -y >/dev/null
npm install --no-audit --no-fund node-llama-cpp@3 >&2 || { echo "llamacpp_setup.sh: npm install failed (is the registry reachable?)" >&2; exit 1; }
