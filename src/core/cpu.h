// CPU feature detection, done once per process (docs/design.md §3 "Selection").
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace qmm {

enum Feature : uint32_t {
  kFeatAVX2 = 1u << 0,
  kFeatFMA = 1u << 1,
  kFeatF16C = 1u << 2,
  kFeatAVXVNNI = 1u << 3,
  kFeatAVX512F = 1u << 4,
  kFeatAVX512BW = 1u << 5,
  kFeatAVX512VL = 1u << 6,
  kFeatAVX512VNNI = 1u << 7,
  kFeatAMXINT8 = 1u << 8,   // AMX-TILE + AMX-INT8, with the OS's tile state granted to this process
  kFeatAMXBF16 = 1u << 9,   // AMX-TILE + AMX-BF16, likewise granted
  kFeatAVX512BF16 = 1u << 10,  // AVX512_BF16 (vcvtne2ps2bf16)
  kFeatNEON = 1u << 16,
  kFeatDotProd = 1u << 17,
  kFeatI8MM = 1u << 18,
  kFeatSVE = 1u << 19,
  kFeatSVE2 = 1u << 20,
  kFeatSME = 1u << 21,
  kFeatSME2 = 1u << 22,
  kFeatFP16 = 1u << 23,
  kFeatBF16 = 1u << 24,
};

struct CpuInfo {
  std::string arch;         // "x86_64" or "aarch64"
  std::string brand;        // model name where the platform says it
  uint32_t features = 0;    // Feature bits
  size_t svl_bytes = 0;     // SME streaming vector length in bytes (0 without SME)
  bool has(uint32_t f) const { return (features & f) == f; }
};

// Detected once (thread-safe), then cached.
const CpuInfo& cpu_info();
// Platform part: fills arch, brand, features, svl_bytes. One implementation per architecture.
CpuInfo detect_cpu();
// "avx2 fma f16c ..." for the set bits.
std::string feature_names(uint32_t features);

}  // namespace qmm
