#!/usr/bin/env bash
# CTest driver of chat_page_browser.mjs: the chat page in headless Chromium.
#   chat_page_check.sh QMM_BINARY MODEL.gguf
# Exits 77 (CTest: skipped) with the reason when there is no browser (scripts/test.sh installs
# Debian's chromium) or no node with a WebSocket client.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] || { echo "usage: $0 QMM_BINARY MODEL.gguf" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: no chromium to run the chat page in (scripts/deps.sh chromium)"; exit 77; }
command -v node >/dev/null || { echo "SKIP: no node to drive the browser"; exit 77; }
# node 22 has WebSocket; node 20.10+ behind --experimental-websocket.
flag=--experimental-websocket
node "$flag" -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null || flag=
node $flag -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null ||
  { echo "SKIP: node $(node --version) has no WebSocket client (node >= 20.10)"; exit 77; }
exec timeout 300 node $flag "$here/chat_page_browser.mjs" "$browser" "$1" "$2"
