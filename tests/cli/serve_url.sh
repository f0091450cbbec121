#!/usr/bin/env bash
# qmm serve prints a URL a browser or curl takes: an IPv6 host in brackets, http://[::1]:PORT.
# Usage: serve_url.sh QMM MODEL. Skips (exit 77) where this machine has no IPv6 loopback.
set -uo pipefail
qmm=$1 model=$2
out=$(mktemp)
trap 'rm -f "$out"; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null' EXIT
"$qmm" serve -m "$model" --host ::1 --port 0 -t 1 >"$out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "on http://\|cannot listen" "$out" && break; sleep 0.1; done
if grep -q "cannot listen" "$out"; then echo "SKIP: no IPv6 loopback here: $(cat "$out")"; exit 77; fi
url=$(grep -o 'http://[^ ]*' "$out")
[[ $url =~ ^http://\[::1\]:[0-9]+$ ]] || { echo "not a usable URL: '$url'"; cat "$out"; exit 1; }
command -v curl >/dev/null && { curl -sf -m 5 "$url/health" | grep -q '"status":"ok"' || { echo "no answer at $url"; exit 1; }; }
echo "ok: $url"
