#!/usr/bin/env bash
# Builds, outside the repository, the KleidiAI kernels that qmm's tests compare bit for bit
# (tests/arm/test_kleidiai_bits.cpp), for aarch64 with clang-19, from a git directory of
# ARM-software/kleidiai (a clone or a bare mirror; nothing of KleidiAI enters this repository).
#
#   scripts/kleidiai_build.sh [--print-lib] [GIT_DIR [COMMIT]]
#
# GIT_DIR defaults to $QMM_KLEIDIAI_GIT, then /work/.mirror/ARM-software+kleidiai/repo; COMMIT
# to HEAD. The sources of that commit are read with `git show` into
# ${QMM_KLEIDIAI_CACHE:-$HOME/.cache/qmm-kleidiai}/<commit>-<list>/src (<list>: a hash of the
# file list below) and compiled into .../libkai_qmm.a (idempotent: an existing library is kept). The last line printed is
# the library's path; configure the Arm build with -DQMM_KLEIDIAI_LIB=<that path> to run the
# comparison (without it the test skips, saying so).
#
# Kernels built (the KleidiAI kernels whose layouts qmm implements under the same name):
#   kai_matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa (SME2 QC4 GEMM)
#   kai_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot      (SME2 QC4 GEMV, same RHS)
# and, for the instruction counts of docs/arm.md (tests/arm/count_kleidiai.cpp), KleidiAI's Q4_0
# kernels (the RHS layout of qmm's Q4_0 SME2 kernels, which have their names):
#   kai_matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa (int8 activations, SMOPA)
#   kai_matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot     (its GEMV)
#   kai_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa     (F16 activations, FMOPA: what
#     llama.cpp runs for Q4_0 prefill on SME2), with its LHS packer kai_lhs_pack_f16pmrx2_f32_neon;
#     qmm has a kernel and a packer of those names, compared bit for bit and byte for byte too
set -euo pipefail

print_lib=0
if [[ "${1:-}" == "--print-lib" ]]; then print_lib=1; shift; fi
git_dir="${1:-${QMM_KLEIDIAI_GIT:-/work/.mirror/ARM-software+kleidiai/repo}}"
rev="${2:-HEAD}"
cache="${QMM_KLEIDIAI_CACHE:-$HOME/.cache/qmm-kleidiai}"
CC="${QMM_KLEIDIAI_CC:-clang-19}"
AR="${QMM_KLEIDIAI_AR:-llvm-ar-19}"

[[ -d "$git_dir" ]] || { echo "kleidiai_build: no git directory at $git_dir (give one, or set QMM_KLEIDIAI_GIT)" >&2; exit 1; }
commit=$(git --git-dir="$git_dir" rev-parse --verify "$rev^{commit}" 2>/dev/null) ||
  { echo "kleidiai_build: $git_dir has no commit '$rev'" >&2; exit 1; }
command -v "$CC" >/dev/null || { echo "kleidiai_build: $CC not found (scripts/setup-arm.sh installs it)" >&2; exit 1; }
command -v "$AR" >/dev/null || { echo "kleidiai_build: $AR not found (scripts/setup-arm.sh installs llvm-19)" >&2; exit 1; }

kdir=kai/ukernels/matmul/matmul_clamp_f32_qai8dxp_qsi4cxp
q4dir=kai/ukernels/matmul/matmul_clamp_f32_qsi8d32p_qsi4c32p
f16dir=kai/ukernels/matmul/matmul_clamp_f32_f16p_qsi4c32p
sources=(
  kai/kai_common.h
  kai/kai_common_sme_asm.S
  $kdir/kai_matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa.h
  $kdir/kai_matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa.c
  $kdir/kai_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot.h
  $kdir/kai_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot.c
  $q4dir/kai_matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa.h
  $q4dir/kai_matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa.c
  $q4dir/kai_matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot.h
  $q4dir/kai_matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot.c
  $f16dir/kai_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa.h
  $f16dir/kai_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa.c
  $f16dir/kai_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa_asm.S
  kai/ukernels/matmul/pack/kai_lhs_pack_f16pmrx2_f32_neon.h
  kai/ukernels/matmul/pack/kai_lhs_pack_f16pmrx2_f32_neon.c
)
out="$cache/$commit-$(printf '%s\n' "${sources[@]}" | sha1sum | cut -c1-8)"
lib="$out/libkai_qmm.a"
if [[ ! -f "$lib" ]]; then
  rm -rf "$out.tmp" && mkdir -p "$out.tmp/src" "$out.tmp/obj"
  for f in "${sources[@]}"; do
    mkdir -p "$out.tmp/src/$(dirname "$f")"
    git --git-dir="$git_dir" show "$commit:$f" >"$out.tmp/src/$f" ||
      { echo "kleidiai_build: $commit has no $f" >&2; exit 1; }
  done
  flags=(--target=aarch64-linux-gnu -march=armv9.2-a+sme2 -O2 -fPIC -I "$out.tmp/src")
  for f in "${sources[@]}"; do
    case "$f" in *.c | *.S) "$CC" "${flags[@]}" -c "$out.tmp/src/$f" -o "$out.tmp/obj/$(basename "$f").o" ;; esac
  done
  "$AR" rcs "$out.tmp/libkai_qmm.a" "$out.tmp"/obj/*.o
  rm -rf "$out" && mv "$out.tmp" "$out"
fi
if [[ $print_lib == 0 ]]; then echo "KleidiAI $commit built in $out"; fi
echo "$lib"
