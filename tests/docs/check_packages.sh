#!/usr/bin/env bash
# Every Debian package scripts/deps.sh installs for the build is named in README.md's list.
# Usage: check_packages.sh REPO_ROOT
set -euo pipefail
root=$1
pkgs=$(sed -n 's/^need=(\(.*\) "\$@")$/\1/p' "$root/scripts/deps.sh")
[ -n "$pkgs" ] || { echo "no need=(...) list in scripts/deps.sh"; exit 1; }
missing=()
for p in $pkgs; do grep -q "[\` ]$p[\` ,;]" "$root/README.md" || missing+=("$p"); done
[ ${#missing[@]} = 0 ] || { echo "README.md does not name: ${missing[*]}"; exit 1; }
echo "ok: README.md names every package of scripts/deps.sh: $pkgs"
