#!/usr/bin/env bash
# Set up the Arm (aarch64) cross-build + emulation environment for qmm on Debian 12 (x86-64).
#
#   1. apt-get installs clang-19, lld-19 and Debian's arm64 cross sysroot
#      (libc6-dev-arm64-cross, libstdc++-12-dev-arm64-cross) if they are missing.
#   2. Fetches, WITHOUT touching the system's apt configuration (private sources list,
#      lists, cache and dpkg status under the cache directory):
#        - qemu-aarch64 from Debian trixie-backports' qemu-user (a static binary that runs
#          on Debian 12 and emulates SME2 correctly; Debian 12's own qemu 7.2 does not);
#        - libclang-rt-19-dev:arm64 from bookworm, for libclang_rt.builtins-aarch64.a,
#          which holds the SME ABI support routines (__arm_tpidr2_save, __arm_sme_state,
#          __arm_za_disable, __arm_get_current_vg) that GCC 12's libgcc lacks;
#        - libutf8proc-dev:arm64 from bookworm (utf8proc.h, libutf8proc.a: the tokenizers'
#          Unicode categories), unpacked into the cache's utf8proc/ (include/, lib/).
#      The Debian mirror is read at run time from the system's own apt sources
#      (override with QMM_DEBIAN_MIRROR=<url>); no mirror is written in this repository.
#   3. Prints where everything is (and, with --env, shell assignments to eval).
#
# Idempotent and fast once done.  Cache: $QMM_ARM_CACHE (default $HOME/.cache/qmm-arm).
#
# Usage: scripts/setup-arm.sh [--no-install] [--refetch] [--env] [--help]
#   --no-install  never run apt-get install (fail if a package is missing)
#   --refetch     download qemu and clang-rt again even if cached
#   --env         print only `export QMM_...=...` lines (for eval)
set -euo pipefail

APT_PACKAGES=(clang-19 lld-19 llvm-19 libc6-dev-arm64-cross libstdc++-12-dev-arm64-cross
              ca-certificates debian-archive-keyring)
QEMU_SUITE=trixie-backports        # qemu-user >= 10 with SME2; validated with 11.1.3
QEMU_MIN_MAJOR=10
CLANG_RT_SUITE=bookworm            # must match clang-19's version (19.1.x)
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

CACHE=${QMM_ARM_CACHE:-${HOME:?HOME is not set}/.cache/qmm-arm}
do_install=1 refetch=0 env_only=0
for a in "$@"; do
  case $a in
    --no-install) do_install=0 ;;
    --refetch) refetch=1 ;;
    --env) env_only=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup-arm: unknown option '$a' (try --help)" >&2; exit 2 ;;
  esac
done

log() { if [ "$env_only" = 0 ]; then echo "setup-arm: $*"; else echo "setup-arm: $*" >&2; fi; }
die() { echo "setup-arm: error: $*" >&2; exit 1; }
trap 'die "failed at line $LINENO: $BASH_COMMAND"' ERR

[ "$(uname -m)" = x86_64 ] || log "warning: this script targets x86-64 Debian 12 hosts (found $(uname -m))"
command -v dpkg-query >/dev/null && command -v apt-get >/dev/null || die "needs a Debian system (apt-get, dpkg)"

# ---- 1. system packages -------------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$do_install" = 1 ] || die "missing packages: ${missing[*]} (run without --no-install, as root)"
  SUDO=
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || die "missing packages ${missing[*]}: run as root or install sudo"
    SUDO=sudo
  fi
  log "installing: ${missing[*]}"
  $SUDO apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
fi
for t in clang-19 clang++-19 ld.lld-19 dpkg-deb; do
  command -v "$t" >/dev/null || die "'$t' not found after installing packages"
done
GCC_DIR=$(ls -d /usr/lib/gcc-cross/aarch64-linux-gnu/*/ 2>/dev/null | sort -V | tail -n1)
[ -n "$GCC_DIR" ] && [ -f /usr/aarch64-linux-gnu/lib/libc.a ] \
  || die "arm64 cross sysroot incomplete (/usr/lib/gcc-cross/aarch64-linux-gnu, /usr/aarch64-linux-gnu/lib/libc.a)"

# ---- 2. private apt fetches -------------------------------------------------------------
QEMU=$CACHE/bin/qemu-aarch64
RT_DIR=$CACHE/clang-rt-19
BUILTINS=$RT_DIR/lib/linux/libclang_rt.builtins-aarch64.a
U8_DIR=$CACHE/utf8proc
U8_LIB=$U8_DIR/lib/libutf8proc.a

qemu_version() { "$1" --version 2>/dev/null | sed -n '1s/^qemu-aarch64 version \([0-9][0-9.]*\).*/\1/p'; }
qemu_ok() { local v; [ -x "$QEMU" ] && v=$(qemu_version "$QEMU") && [ -n "$v" ] && [ "${v%%.*}" -ge "$QEMU_MIN_MAJOR" ]; }

# debian_mirror, private_apt and fetch_deb: shared with scripts/llamacpp_native.sh.
. "$(dirname "${BASH_SOURCE[0]}")/lib/private_apt.sh"

need_qemu=0 need_rt=0 need_u8=0
{ [ "$refetch" = 1 ] || ! qemu_ok; } && need_qemu=1
{ [ "$refetch" = 1 ] || [ ! -f "$BUILTINS" ]; } && need_rt=1
{ [ "$refetch" = 1 ] || [ ! -f "$U8_LIB" ]; } && need_u8=1

if [ $need_qemu = 1 ] || [ $need_rt = 1 ] || [ $need_u8 = 1 ]; then
  MIRROR=${QMM_DEBIAN_MIRROR:-$(debian_mirror || true)}
  [ -n "$MIRROR" ] || die "could not find a Debian mirror in /etc/apt/sources.list* (set QMM_DEBIAN_MIRROR=<url>)"
  [ -f "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
  MIRROR=${MIRROR%/}
  mkdir -p "$CACHE"
  tmp=$(mktemp -d "$CACHE/.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT

  if [ $need_qemu = 1 ]; then
    fetch_deb qemu "$QEMU_SUITE" amd64 qemu-user "$tmp/qemu-deb"
    deb=$(ls "$tmp"/qemu-deb/*.deb | head -n1)
    log "extracting usr/bin/qemu-aarch64 from $(basename "$deb")"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" ./usr/bin/qemu-aarch64 \
      || die "usr/bin/qemu-aarch64 not found in $deb"
    v=$(qemu_version "$tmp/usr/bin/qemu-aarch64")
    [ -n "$v" ] && [ "${v%%.*}" -ge "$QEMU_MIN_MAJOR" ] \
      || die "fetched qemu-aarch64 is version '${v:-unknown}', need >= $QEMU_MIN_MAJOR (SME2); the mirror's $QEMU_SUITE may be too old"
    mkdir -p "$CACHE/bin"
    mv -f "$tmp/usr/bin/qemu-aarch64" "$QEMU"
    dpkg-deb -f "$deb" Version >"$CACHE/bin/qemu-aarch64.debversion"
  fi

  if [ $need_rt = 1 ]; then
    fetch_deb clang-rt "$CLANG_RT_SUITE" arm64 libclang-rt-19-dev "$tmp/rt-deb"
    deb=$(ls "$tmp"/rt-deb/*.deb | head -n1)
    log "extracting compiler-rt (aarch64) from $(basename "$deb")"
    dpkg-deb -x "$deb" "$tmp/rt"
    src=$(ls -d "$tmp"/rt/usr/lib/llvm-19/lib/clang/*/lib/linux 2>/dev/null | head -n1)
    [ -n "$src" ] && [ -f "$src/libclang_rt.builtins-aarch64.a" ] \
      || die "libclang_rt.builtins-aarch64.a not found in $deb"
    rm -rf "$RT_DIR"; mkdir -p "$RT_DIR/lib"
    mv "$src" "$RT_DIR/lib/linux"
    dpkg-deb -f "$deb" Version >"$RT_DIR/debversion"
  fi

  if [ $need_u8 = 1 ]; then
    fetch_deb utf8proc "$CLANG_RT_SUITE" arm64 libutf8proc-dev "$tmp/u8-deb"
    deb=$(ls "$tmp"/u8-deb/*.deb | head -n1)
    log "extracting utf8proc.h and libutf8proc.a (aarch64) from $(basename "$deb")"
    dpkg-deb -x "$deb" "$tmp/u8"
    [ -f "$tmp/u8/usr/include/utf8proc.h" ] && [ -f "$tmp/u8/usr/lib/aarch64-linux-gnu/libutf8proc.a" ] \
      || die "utf8proc.h or libutf8proc.a not found in $deb"
    rm -rf "$U8_DIR"; mkdir -p "$U8_DIR/include" "$U8_DIR/lib"
    mv "$tmp/u8/usr/include/utf8proc.h" "$U8_DIR/include/"
    mv "$tmp/u8/usr/lib/aarch64-linux-gnu/libutf8proc.a" "$U8_DIR/lib/"
  fi
  rm -rf "$tmp" "$CACHE/apt"; trap - EXIT
fi

qemu_ok || die "$QEMU is missing or too old"
[ -f "$BUILTINS" ] || die "$BUILTINS is missing"
[ -f "$U8_LIB" ] || die "$U8_LIB is missing"
clang_major=$(clang-19 -dumpversion | cut -d. -f1)
rt_major=$(sed -n 's/^\([0-9]*:\)\{0,1\}\([0-9]*\).*/\2/p' "$RT_DIR/debversion" 2>/dev/null || true)
[ "$clang_major" = "${rt_major:-$clang_major}" ] || log "warning: clang-19 is $clang_major but compiler-rt is $rt_major"

# ---- 3. report ------------------------------------------------------------------------------
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "$env_only" = 1 ]; then
  printf 'export QMM_ARM_CACHE=%q\nexport QMM_QEMU_AARCH64=%q\nexport QMM_CLANG_RT_BUILTINS=%q\n' "$CACHE" "$QEMU" "$BUILTINS"
else
  log "ready"
  echo "  qemu-aarch64     $QEMU  ($(qemu_version "$QEMU"), Debian $(cat "$CACHE/bin/qemu-aarch64.debversion" 2>/dev/null || echo '?'))"
  echo "  clang-rt builtin $BUILTINS"
  echo "  utf8proc         $U8_DIR"
  echo "  gcc cross dir    ${GCC_DIR%/}"
  echo "  compilers        $(command -v clang-19) $(command -v clang++-19) ($(clang-19 -dumpversion)), $(command -v ld.lld-19)"
  echo "  configure        cmake -S $REPO -B build-arm -DCMAKE_TOOLCHAIN_FILE=$REPO/cmake/toolchain-aarch64-clang.cmake"
  echo "  run by hand      $QEMU -cpu max,sme_fa64=off,sme-default-vector-length=64 ./prog   (16/32/64 = SVL 128/256/512)"
fi
