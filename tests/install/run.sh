#!/usr/bin/env bash
# Installs qmm into temporary prefixes and builds consumers there, as a user of the library would:
#   - the tree's own build (static by default) and a second build of the other kind, made with
#     -DQMM_BUILD_LLM=OFF (its qmm tool must link without the LLM path and say so);
#   - in each prefix: find_package(qmm) and pkg-config, each in C and C++, run;
#   - the shared library exports the C API and nothing else.
# Usage: run.sh SOURCE_DIR BUILD_DIR WORK_DIR C_COMPILER CXX_COMPILER SHARED(ON|OFF) [LAUNCHER]
set -euo pipefail
SRC=$1 BUILD=$2 WORK=$3 CC=$4 CXX=$5 SHARED=$6 LAUNCHER=${7:-}
rm -rf "$WORK"
mkdir -p "$WORK"
fail() { echo "install test: $*" >&2; exit 1; }
kind_name() { [ "$1" = ON ] && echo shared || echo static; }

# 1. The two prefixes.
other=$([ "$SHARED" = ON ] && echo OFF || echo ON)
cmake --install "$BUILD" --prefix "$WORK/prefix-$SHARED" >/dev/null
cmake -S "$SRC" -B "$WORK/build-$other" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=$other \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" ${LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$LAUNCHER} \
  ${LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER=$LAUNCHER} -DQMM_BUILD_LLM=OFF -DQMM_BUILD_TESTS=OFF \
  -DQMM_BUILD_BENCH=OFF -DQMM_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$WORK/build-$other" -j 2 >/dev/null
cmake --install "$WORK/build-$other" --prefix "$WORK/prefix-$other" >/dev/null
echo "ok: installed this $(kind_name "$SHARED") build and a $(kind_name $other) one"

# 2. -DQMM_BUILD_LLM=OFF: no LLM library on the tool's link line; the LLM verbs say why they are absent.
grep -qE "qmm_(llm|text|gguf)" "$WORK/build-$other/build.ninja" && fail "an LLM library is part of a -DQMM_BUILD_LLM=OFF build"
tool="$WORK/prefix-$other/bin/qmm"
[[ $("$tool" --version) == *"kernels only"* ]] || fail "qmm --version does not say 'kernels only'"
set +e
msg=$("$tool" run -m x.gguf 2>&1)
rc=$?
set -e
[ $rc = 2 ] && grep -q "built with -DQMM_BUILD_LLM=OFF" <<<"$msg" || fail "qmm run without the LLM path: rc $rc, '$msg'"
"$tool" info >/dev/null || fail "qmm info fails without the LLM path"
echo "ok: -DQMM_BUILD_LLM=OFF tool links without qmm_llm; 'qmm run' says: $msg"

# 3. The shared library exports exactly the functions of qmm.h.
so=$(find "$WORK/prefix-ON" -name 'libqmm.so' | head -1)
[ -n "$so" ] || fail "no libqmm.so installed"
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TWDBRV]$/ {print $3}' | sort -u)
declared=$(grep -oE '^QMM_API [^(]*\bqmm_[a-z0-9_]+\(' "$SRC/include/qmm/qmm.h" | sed -E 's/.*(qmm_[a-z0-9_]+)\($/\1/' | sort -u)
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
[ -z "$extra" ] || fail "libqmm.so exports more than the C API: $(echo $extra | head -c 300)"
[ -z "$missing" ] || fail "libqmm.so lacks C API functions: $missing"
echo "ok: libqmm.so exports the $(echo "$declared" | wc -l) functions of qmm.h and nothing else"

# 4. Consumers: find_package and pkg-config, C and C++, in both prefixes.
for kind in OFF ON; do
  prefix="$WORK/prefix-$kind"
  name=$(kind_name $kind)
  export LD_LIBRARY_PATH="$(dirname "$(find "$prefix" -name 'libqmm.*' | head -1)")"
  for lang in C CXX; do
    out="$WORK/cmake-$name-$lang"
    cmake -S "$SRC/tests/install/consumer" -B "$out" -G Ninja -DLANG=$lang -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" >/dev/null || fail "find_package($name, $lang) configure"
    cmake --build "$out" >/dev/null || fail "find_package($name, $lang) build"
    "$out/consumer" >"$out/out.txt" && grep -q ": ok" "$out/out.txt" || fail "find_package($name, $lang) consumer"
  done
  pc_dir=$(dirname "$(find "$prefix" -name qmm.pc | head -1)")
  static_flag=$([ $kind = OFF ] && echo --static || true)
  flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs $static_flag qmm)
  [ -f "$(PKG_CONFIG_PATH=$pc_dir pkg-config --variable=includedir qmm)/qmm/qmm.h" ] || fail "qmm.pc: wrong includedir"
  # shellcheck disable=SC2086
  "$CC" "$SRC/tests/install/consumer.c" -o "$WORK/pc-$name-c" $flags || fail "pkg-config $name, C: cc consumer.c $flags"
  # shellcheck disable=SC2086
  "$CXX" -x c++ "$SRC/tests/install/consumer.c" -x none -o "$WORK/pc-$name-cxx" $flags || fail "pkg-config $name, C++"
  for exe in "$WORK/pc-$name-c" "$WORK/pc-$name-cxx" "$WORK/cmake-$name-C/consumer"; do
    "$exe" >"$exe.txt" && grep -q ": ok" "$exe.txt" || fail "$exe"
    deps=$(ldd "$exe")
    if [ $kind = OFF ] && grep -q libqmm <<<"$deps"; then fail "$exe links a shared libqmm"; fi
    if [ $kind = ON ] && ! grep -q libqmm <<<"$deps"; then fail "$exe does not link libqmm.so"; fi
  done
  echo "ok: $name: find_package and pkg-config consumers in C and C++ (cc consumer.c $flags)"
done
