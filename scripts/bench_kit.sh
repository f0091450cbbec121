#!/usr/bin/env bash
# Packs qmm and llama.cpp built for the CPU (scripts/llamacpp_native.sh) into one self-contained
# archive, so that scripts/bench_families.sh can run on another x86-64 Linux host that has no
# network, no compiler and another distribution: each program travels with the runtime libraries
# and the loader it was linked against. qmm picks its kernels per CPU at run time and Debian's
# ggml its CPU variant, so both run as built for the host they land on.
#
# Usage: scripts/bench_kit.sh [OUT.tar.xz]        (default: .cache/bench-kit.tar.xz, ~16 MB)
# On the other host:
#   tar xJf bench-kit.tar.xz -C /tmp && /tmp/bench-kit/run.sh [bench_families.sh arguments]
#   (/tmp/bench-kit/run-depth.sh [bench_depth.sh arguments]: the depth curves)
#   (environment as bench_families.sh: TYPES, THREADS, ROUNDS, PP, TG, CACHE, OUT; IK=1 where the
#   kit holds ik_llama.cpp: it does when scripts/ik_llamacpp.sh built it here first)
# then, back here: node scripts/bench_table.mjs OUT/raw.jsonl...
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUTFILE=${1:-$ROOT/.cache/bench-kit.tar.xz}
scripts/deps.sh
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DQMM_BUILD_TESTS=OFF \
      -DQMM_BUILD_BENCH=OFF -DQMM_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-bench --target qmm_cli -j "$(nproc)" >/dev/null
NATIVE=$(dirname "$(scripts/llamacpp_native.sh --print-bin)")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kit=$tmp/bench-kit
mkdir -p "$kit/qmm/lib" "$kit/scripts/lib"
cp build-bench/tools/qmm "$kit/qmm/"
for lib in $(ldd build-bench/tools/qmm | awk '/=>/ { print $3 }'); do cp -L "$lib" "$kit/qmm/lib/"; done
cp -L "$(ldd build-bench/tools/qmm | awk '/ld-linux/ { print $1 }')" "$kit/qmm/lib/ld.so"
cat >"$kit/qmm/run" <<'EOF'
#!/usr/bin/env bash
here=$(dirname "$(readlink -f "$0")")
exec "$here/lib/ld.so" --library-path "$here/lib" "$here/qmm" "$@"
EOF
chmod +x "$kit/qmm/run"
mkdir -p "$kit/llamacpp-native"
cp -a "$NATIVE/root" "$kit/llamacpp-native/"
# ik_llama.cpp too where scripts/ik_llamacpp.sh has built it (for run.sh's IK=1), with its runtime
# and loader as qmm; built with -march=native, it runs only on CPUs with the ISA of the one it was
# built on (its cpu file names that CPU).
IK_CACHE=${QMM_IK_CACHE:-$HOME/.cache/qmm-ik}
if [ -x "$IK_CACHE/bin/llama-bench" ]; then
  ik=$kit/ik-llamacpp
  mkdir -p "$ik/bin" "$ik/exe" "$ik/lib"
  cp "$IK_CACHE/stamp" "$IK_CACHE/cpu" "$ik/"
  for t in llama-bench llama-cli; do
    cp "$IK_CACHE/bin/$t" "$ik/exe/"
    for lib in $(ldd "$IK_CACHE/bin/$t" | awk '/=>/ { print $3 }'); do cp -L "$lib" "$ik/lib/"; done
    printf '#!/usr/bin/env bash\nhere=$(dirname "$(readlink -f "$0")")/..\nexec "$here/lib/ld.so" --library-path "$here/lib" "$here/exe/%s" "$@"\n' "$t" >"$ik/bin/$t"
    chmod +x "$ik/bin/$t"
  done
  cp -L "$(ldd "$IK_CACHE/bin/llama-bench" | awk '/ld-linux/ { print $1 }')" "$ik/lib/ld.so"
  echo "bench_kit: with ik_llama.cpp ($(cat "$IK_CACHE/stamp"), built for $(cat "$IK_CACHE/cpu"))"
fi
cp scripts/bench_families.sh scripts/bench_depth.sh scripts/depth_plot.py scripts/bench_table.mjs scripts/llamacpp_native.sh scripts/ik_llamacpp.sh scripts/deps.sh "$kit/scripts/"
cp scripts/lib/private_apt.sh "$kit/scripts/lib/"
cat >"$kit/run.sh" <<'EOF'
#!/usr/bin/env bash
# bench_families.sh with the packed qmm and llama.cpp (see scripts/bench_kit.sh; IK=1: and
# ik_llama.cpp, where the kit has it); prints the machine first.
here=$(dirname "$(readlink -f "$0")")
lscpu | sed -n 's/^\(Model name\|CPU(s)\|Flags\):/&/p'
export QMM=$here/qmm/run QMM_LLAMACPP_NATIVE=$here/llamacpp-native QMM_IK_CACHE=$here/ik-llamacpp
export CACHE=${CACHE:-/tmp/qmm-bench-models} OUT=${OUT:-/tmp/qmm-bench-out}
exec "$here/scripts/bench_families.sh" "$@"
EOF
chmod +x "$kit/run.sh"
sed 's|bench_families.sh|bench_depth.sh|; s|^# bench_families.sh with|# bench_depth.sh with|' "$kit/run.sh" >"$kit/run-depth.sh"
chmod +x "$kit/run-depth.sh"
mkdir -p "$(dirname "$OUTFILE")"
tar cJf "$OUTFILE" -C "$tmp" bench-kit
echo "bench_kit: $OUTFILE ($(du -h "$OUTFILE" | cut -f1))"
