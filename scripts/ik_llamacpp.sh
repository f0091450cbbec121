#!/usr/bin/env bash
# ik_llama.cpp built for the CPU in front of you: qmm's second speed baseline (issue 28), the
# CPU-tuned fork of llama.cpp (github.com/ikawrakow/ik_llama.cpp). Nothing of it is committed or
# vendored: it is built from a source tree you give, in a scratch cache, as a Release build with
# GGML_NATIVE=ON (-march=native), at the lowest priority. There is no network here to clone it; a
# git directory of it (a bare repository or a mirror, e.g. one under /work/.mirror) or any
# checkout works as the source, and a git directory's HEAD is extracted with git archive.
#
# Usage: scripts/ik_llamacpp.sh [--print-bin] [--rebuild] [--help] [SRC]
#   SRC          ik_llama.cpp's source tree or git directory (default: $IK_LLAMA_SRC)
#   --print-bin  print only the directory of its llama-bench (for scripts); with no SRC, a
#                build already in the cache is used as it is
#   --rebuild    build again even if the cache holds a build of this source
# Environment: QMM_IK_CACHE (default ~/.cache/qmm-ik: src/, build/, bin/, stamp, cpu: the CPU it
# was built for), JOBS (default 2).
# Measure with its llama-bench as ik_llama.cpp's author does on CPUs: -rtr 1 (repack the weights
# at load) -fa 1 (its flash attention); scripts/bench_families.sh does with IK=1.
set -euo pipefail
CACHE=${QMM_IK_CACHE:-${HOME:?HOME is not set}/.cache/qmm-ik}
JOBS=${JOBS:-2}
print_bin=0 rebuild=0 src=${IK_LLAMA_SRC:-}
for a in "$@"; do
  case $a in
    --print-bin) print_bin=1 ;;
    --rebuild) rebuild=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "ik_llamacpp: unknown option '$a' (try --help)" >&2; exit 2 ;;
    *) src=$a ;;
  esac
done
log() { echo "ik_llamacpp: $*" >&2; }
die() { echo "ik_llamacpp: error: $*" >&2; exit 1; }
[[ $JOBS =~ ^[1-9][0-9]{0,2}$ ]] || die "JOBS must be a positive number, not '$JOBS'"
BIN=$CACHE/bin

if [ -z "$src" ]; then
  if [ -x "$BIN/llama-bench" ]; then
    [ "$print_bin" = 1 ] && { echo "$BIN"; exit 0; }
    log "built from $(cat "$CACHE/stamp" 2>/dev/null || echo '?'): $BIN"
    exit 0
  fi
  die "no source: give ik_llama.cpp's source tree or git directory (or set IK_LLAMA_SRC)"
fi
[ -d "$src" ] || die "'$src' is not a directory"
src=$(readlink -f "$src")
command -v cmake >/dev/null || die "needs cmake"

# What the source is (a git directory, a checkout or a plain tree), and what identifies it.
if [ -f "$src/HEAD" ] && [ -d "$src/objects" ]; then
  kind=gitdir
  stamp="git $(git --git-dir="$src" rev-parse HEAD)" || die "'$src' is not a readable git directory"
elif [ -f "$src/CMakeLists.txt" ] && [ -d "$src/ggml" ]; then
  kind=tree
  stamp="tree $src $(git -C "$src" rev-parse HEAD 2>/dev/null || stat -c %Y "$src/CMakeLists.txt")"
else
  die "'$src' is neither a git directory nor an ik_llama.cpp source tree (no CMakeLists.txt and ggml/)"
fi

if [ "$rebuild" = 0 ] && [ -x "$BIN/llama-bench" ] && [ "$(cat "$CACHE/stamp" 2>/dev/null)" = "$stamp" ]; then
  [ "$print_bin" = 1 ] && echo "$BIN" || log "already built from $stamp: $BIN"
  exit 0
fi

mkdir -p "$CACHE"
rm -f "$CACHE/stamp"
if [ "$kind" = gitdir ]; then
  log "extracting $stamp into $CACHE/src"
  rm -rf "$CACHE/src" "$CACHE/build"
  mkdir -p "$CACHE/src"
  # A partial mirror may lack some large blobs (web pages, vocabulary test files): leave those
  # files out, by name, rather than fail (the build needs none of them).
  git --git-dir="$src" ls-tree -r HEAD | awk -F'\t' '{ split($1, a, " "); if (a[2] == "blob") print a[3] "\t" $2 }' >"$CACHE/tree.txt"
  mapfile -t absent < <(cut -f1 "$CACHE/tree.txt" | git --git-dir="$src" cat-file --batch-check | paste - "$CACHE/tree.txt" |
                        awk -F'\t' '$1 ~ / missing$/ { print $3 }')
  excludes=()
  for f in "${absent[@]}"; do log "left out (not in the git directory): $f"; excludes+=(":(exclude)$f"); done
  git --git-dir="$src" archive HEAD -- . "${excludes[@]}" 2>"$CACHE/extract.log" | tar -x -C "$CACHE/src" ||
    die "could not extract HEAD of $src (see $CACHE/extract.log)"
  tree=$CACHE/src
else
  rm -rf "$CACHE/build"
  tree=$src
fi
log "building llama-bench and llama-cli for this CPU (Release, GGML_NATIVE=ON, -j $JOBS, nice 19): a long build"
# GGML_IQK_FA_ALL_QUANTS=OFF: its flash attention without the Q4_0, Q4_1 and IQ4_NL KV caches (the
# benchmarks use F16), which saves much of a build that takes hours on 2 cores.
cmake -S "$tree" -B "$CACHE/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF \
      -DGGML_IQK_FA_ALL_QUANTS=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
      >"$CACHE/cmake.log" 2>&1 ||
  die "cmake failed (see $CACHE/cmake.log)"
nice -n 19 cmake --build "$CACHE/build" --target llama-bench llama-cli -j "$JOBS" >"$CACHE/build.log" 2>&1 ||
  die "build failed (see $CACHE/build.log)"
mkdir -p "$BIN"
for t in llama-bench llama-cli; do
  [ -x "$CACHE/build/bin/$t" ] || die "the build made no $t (see $CACHE/build.log)"
  cp "$CACHE/build/bin/$t" "$BIN/$t"
done
echo "$stamp" >"$CACHE/stamp"
sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1 >"$CACHE/cpu"  # -march=native: for this CPU
[ "$print_bin" = 1 ] && echo "$BIN" || log "built from $stamp: $BIN"
