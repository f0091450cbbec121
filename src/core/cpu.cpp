#include "core/cpu.h"

namespace qmm {

const CpuInfo& cpu_info() {
  static const CpuInfo info = detect_cpu();
  return info;
}

std::string feature_names(uint32_t features) {
  static const struct {
    uint32_t bit;
    const char* name;
  } kNames[] = {
      {kFeatAVX2, "avx2"},         {kFeatFMA, "fma"},           {kFeatF16C, "f16c"},
      {kFeatAVXVNNI, "avxvnni"},   {kFeatAVX512F, "avx512f"},   {kFeatAVX512BW, "avx512bw"},
      {kFeatAVX512VL, "avx512vl"}, {kFeatAVX512VNNI, "avx512vnni"}, {kFeatAMXINT8, "amx-int8"}, {kFeatAMXBF16, "amx-bf16"}, {kFeatAVX512BF16, "avx512bf16"}, {kFeatNEON, "neon"},
      {kFeatDotProd, "dotprod"},   {kFeatI8MM, "i8mm"},         {kFeatSVE, "sve"},
      {kFeatSVE2, "sve2"},         {kFeatSME, "sme"},           {kFeatSME2, "sme2"},
      {kFeatFP16, "fp16"},         {kFeatBF16, "bf16"},
  };
  std::string out;
  for (const auto& n : kNames) {
    if (features & n.bit) {
      if (!out.empty()) out += ' ';
      out += n.name;
    }
  }
  return out;
}

}  // namespace qmm
