#include "llm/attention/attend_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/blocks.h"
#include "core/cpu.h"
#include "core/error.h"
#include "llm/attention/attend_generic.h"
#include "llm/attention/attend_ref.h"
#if defined(__x86_64__)
#include "llm/attention/attend_avx2.h"
#include "llm/attention/attend_avx512.h"
#endif

namespace qmm::llm {
namespace {

constexpr AttendKernel kKernels[] = {
#if defined(__x86_64__)
    {"attend_avx512", kFeatAVX512F | kFeatAVX512BW | kFeatAVX512VL | kFeatAVX512VNNI | kFeatAVX2 | kFeatFMA | kFeatF16C, attend_chunk_avx512, true},
    {"attend_avx2", kFeatAVX2 | kFeatFMA | kFeatF16C, attend_chunk_avx2, false},
#endif
    {"attend_generic", 0, attend_chunk_generic, false},
    {"attend_ref", 0, attend_chunk_ref, false},
};

const AttendKernel& choose() {
  const CpuInfo& cpu = cpu_info();
  const char* want = std::getenv("QMM_ATTENTION");
  if (want && *want) {
    std::string names;
    for (const AttendKernel& k : kKernels) {
      if (want == std::string(k.name)) {
        check_arg(cpu.has(k.features), std::string("QMM_ATTENTION=") + want + ": this CPU lacks " + feature_names(k.features & ~cpu.features));
        return k;
      }
      names += names.empty() ? k.name : std::string(", ") + k.name;
    }
    check_arg(false, std::string("QMM_ATTENTION=") + want + ": unknown attention kernel (this build has " + names + ")");
  }
  for (const AttendKernel& k : kKernels) {
    if (cpu.has(k.features)) return k;
  }
  return kKernels[std::size(kKernels) - 1];
}

}  // namespace

std::span<const AttendKernel> attend_kernels() { return kKernels; }

const AttendKernel& attend_kernel() {
  static const AttendKernel& k = choose();
  return k;
}

// One function for every kernel, compiled with -ffp-contract=off (src/llm/CMakeLists.txt), so q·id
// is rounded to a float before it is rounded to an integer: the same int8 query everywhere.
void attend_quantize_query(const float* q, size_t hd, int8_t* qs, float* d) {
  for (size_t b = 0; b < hd / kBlock; ++b, q += kBlock, qs += kBlock) {
    float amax = 0;
    bool finite = true;
    for (size_t i = 0; i < kBlock; ++i) {
      finite = finite && std::isfinite(q[i]);
      amax = std::max(amax, std::fabs(q[i]));
    }
    d[b] = finite ? amax / 127.0f : NAN;
    const float id = finite && amax > 0 ? 127.0f / amax : 0.0f;
    // Adding and taking back 1.5·2^23 rounds |x| ≤ 127 to the nearest integer, ties to even.
    for (size_t i = 0; i < kBlock; ++i) qs[i] = finite ? static_cast<int8_t>(static_cast<int32_t>((q[i] * id + 12582912.0f) - 12582912.0f)) : 0;
  }
}

}  // namespace qmm::llm
