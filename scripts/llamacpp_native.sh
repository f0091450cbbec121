#!/usr/bin/env bash
# llama.cpp built for the CPU in front of you: qmm's speed baseline.
#
# Fetches Debian's llama.cpp binaries (llama.cpp-tools, llama.cpp-tests, libllama0, libggml0 from unstable) and the
# unstable C/C++ runtime they need into a private cache, WITHOUT touching the system's apt
# configuration (the same private apt as scripts/setup-arm.sh). Debian builds ggml's CPU backend
# once per x86 ISA level (haswell, skylakex, icelake, sapphirerapids, zen4, ... with
# GGML_CPU_ALL_VARIANTS) and picks the best one for the CPU at run time, so this is llama.cpp
# compiled for this CPU, with its CPU_REPACK path (weights repacked at load), not a generic build.
# (Debian's llama.cpp and ggml source packages are not reachable from this workplace's mirror, so
# the per-ISA binaries are the way to the native build here.)
#
# The binaries run through the fetched runtime's own loader, so they work on Debian 12 although
# they need unstable's glibc. Wrappers are written to $CACHE/bin: llama-bench, llama-cli,
# llama-completion, llama-server, llama-quantize, and llama.cpp's test-llama-archs, which writes its
# random-weight model of each architecture (`-o DIR`; the llamacpp_archs test runs qmm on them)
# (each runs from the backends directory, where ggml looks for its CPU variants, and drops
# ggml's "failed to enumerate" notice). QMM_LLAMACPP_VARIANT=haswell (or any variant's name)
# makes a wrapper run from a directory holding only that variant: llama.cpp as ggml runs it on a
# CPU without the wider ISAs, e.g. AVX2 only (AMD Zen 3), to compare with qmm's AVX2 path.
#
# Usage: scripts/llamacpp_native.sh [--refetch] [--print-bin] [--help]
#   --print-bin  print only the wrappers' directory (for scripts)
#   --refetch    download again even if cached
# Cache: $QMM_LLAMACPP_NATIVE (default ~/.cache/qmm-llamacpp-native); mirror: QMM_DEBIAN_MIRROR.
set -euo pipefail
SUITE=sid
PACKAGES=(llama.cpp-tools llama.cpp-tests libllama0 libggml0 libc6 libstdc++6 libgcc-s1 libgomp1 libssl3t64 libzstd1 zlib1g)
TOOLS=(llama-bench llama-cli llama-completion llama-server llama-quantize test-llama-archs)
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
CACHE=${QMM_LLAMACPP_NATIVE:-${HOME:?HOME is not set}/.cache/qmm-llamacpp-native}
refetch=0 print_bin=0
for a in "$@"; do
  case $a in
    --refetch) refetch=1 ;;
    --print-bin) print_bin=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "llamacpp_native: unknown option '$a' (try --help)" >&2; exit 2 ;;
  esac
done
log() { echo "llamacpp_native: $*" >&2; }
die() { echo "llamacpp_native: error: $*" >&2; exit 1; }
. "$(dirname "${BASH_SOURCE[0]}")/lib/private_apt.sh"

ROOT=$CACHE/root
LOADER=$ROOT/usr/lib64/ld-linux-x86-64.so.2
BACKENDS=$ROOT/usr/lib/x86_64-linux-gnu/ggml/backends0
[ "$(uname -m)" = x86_64 ] || die "fetches Debian's amd64 binaries; this is $(uname -m)"

if [ "$refetch" = 1 ] || [ ! -x "$LOADER" ] || [ ! -x "$ROOT/usr/bin/llama-bench" ] || [ ! -x "$ROOT/usr/bin/test-llama-archs" ]; then
  command -v dpkg-deb >/dev/null && command -v apt-get >/dev/null || die "needs a Debian system (apt-get, dpkg-deb)"
  [ -f "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
  MIRROR=${QMM_DEBIAN_MIRROR:-$(debian_mirror || true)}
  [ -n "$MIRROR" ] || die "could not find a Debian mirror in /etc/apt/sources.list* (set QMM_DEBIAN_MIRROR=<url>)"
  MIRROR=${MIRROR%/}
  mkdir -p "$CACHE"
  tmp=$(mktemp -d "$CACHE/.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  fetch_debs llamacpp "$SUITE" amd64 "$tmp/debs" "${PACKAGES[@]}"
  mkdir -p "$tmp/root"
  for d in "$tmp"/debs/*.deb; do dpkg-deb -x "$d" "$tmp/root"; done
  dpkg-deb -f "$(ls "$tmp"/debs/llama.cpp-tools_*.deb)" Version >"$tmp/root/llama.cpp.debversion"
  dpkg-deb -f "$(ls "$tmp"/debs/libggml0_*.deb)" Version >"$tmp/root/ggml.debversion"
  # What the benchmarks and tests never read: documentation, locales, the server's web pages,
  # converters, llama.cpp's other tests (test-llama-archs writes its random-weight model files).
  mv "$tmp"/root/usr/libexec/*/llama.cpp-tests/test-llama-archs "$tmp/root/usr/bin/"
  rm -rf "$tmp"/root/usr/share "$tmp"/root/usr/lib/x86_64-linux-gnu/gconv "$tmp"/root/usr/libexec
  rm -rf "$ROOT"; mv "$tmp/root" "$ROOT"
  rm -rf "$tmp" "$CACHE/apt"; trap - EXIT
fi
[ -x "$LOADER" ] && [ -d "$BACKENDS" ] || die "$ROOT is incomplete (run with --refetch)"

mkdir -p "$CACHE/bin"
for t in "${TOOLS[@]}"; do
  cat >"$CACHE/bin/$t" <<EOF
#!/usr/bin/env bash
# Debian's $t ($(cat "$ROOT/llama.cpp.debversion"), ggml $(cat "$ROOT/ggml.debversion")) on its own runtime; see scripts/llamacpp_native.sh.
# Paths given to it are resolved from the caller's directory; it runs from ggml's backends directory.
args=()
for a in "\$@"; do
  if [ -e "\$a" ] && [[ \$a != /* ]]; then args+=("\$PWD/\$a"); else args+=("\$a"); fi
done
dir="$BACKENDS"
if [ -n "\${QMM_LLAMACPP_VARIANT:-}" ]; then  # one CPU variant only: what ggml picks on a CPU without the others
  lib="$BACKENDS/libggml-cpu-\$QMM_LLAMACPP_VARIANT.so"
  [ -f "\$lib" ] || { echo "$t: QMM_LLAMACPP_VARIANT=\$QMM_LLAMACPP_VARIANT: no such CPU variant in $BACKENDS" >&2; exit 2; }
  dir="$CACHE/variant-\$QMM_LLAMACPP_VARIANT"
  mkdir -p "\$dir" && ln -sfn "\$lib" "\$dir/"
fi
cd "\$dir"
exec "$LOADER" --library-path "$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/usr/lib/x86_64-linux-gnu/llama" \\
  "$ROOT/usr/bin/$t" "\${args[@]}" 2> >(grep --line-buffered -v 'failed to enumerate' >&2)
EOF
  chmod +x "$CACHE/bin/$t"
done

if [ "$print_bin" = 1 ]; then echo "$CACHE/bin"; exit 0; fi
variant=$("$CACHE/bin/llama-bench" --list-devices 2>&1 | sed -n 's|.*loaded CPU backend from .*/libggml-cpu-\(.*\)\.so|\1|p' | head -1)
log "ready: Debian llama.cpp $(cat "$ROOT/llama.cpp.debversion"), ggml $(cat "$ROOT/ggml.debversion")"
echo "  CPU variant ggml picks here: ${variant:-unknown} ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1))"
echo "  tools: $CACHE/bin/{$(IFS=,; echo "${TOOLS[*]}")}"
