// CPU detection for the emulated build: this host's real AVX2 / FMA / F16C, plus the AVX-512
// VNNI and AVX-VNNI features whose kernels this build runs through SIMDe.
#include "core/cpu.h"

namespace qmm {

CpuInfo detect_cpu() {
  CpuInfo info;
  info.arch = "x86_64";
  info.brand = "emulated AVX-512 VNNI + AVX-VNNI (SIMDe)";
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) info.features |= kFeatAVX2;
  if (__builtin_cpu_supports("fma")) info.features |= kFeatFMA;
  if (__builtin_cpu_supports("f16c")) info.features |= kFeatF16C;
  if (info.has(kFeatAVX2 | kFeatFMA | kFeatF16C)) {
    info.features |= kFeatAVXVNNI | kFeatAVX512F | kFeatAVX512BW | kFeatAVX512VL | kFeatAVX512VNNI;
  }
  return info;
}

}  // namespace qmm
