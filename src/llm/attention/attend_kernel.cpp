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
#include "llm/attention/vec8.h"
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
// Eight lanes at a time (a decode step quantizes each head's query once per chunk of every
// layer): the same operations per element as one at a time, so the same bytes.
void attend_quantize_query(const float* q, size_t hd, int8_t* qs, float* d) {
  for (size_t b = 0; b < hd / kBlock; ++b, q += kBlock, qs += kBlock) {
    v8 x[kBlock / 8], amax8{};
    v8i bad{};  // lanes that met a NaN or an infinity (x − x is not 0 there)
    for (size_t i = 0; i < kBlock / 8; ++i) {
      x[i] = load8(q + 8 * i);
      bad |= (x[i] - x[i]) != 0.0f;
      const v8 a = std::bit_cast<v8>(std::bit_cast<v8i>(x[i]) & 0x7fffffff);  // |x|
      amax8 = a > amax8 ? a : amax8;
    }
    float amax = 0;
    bool finite = true;
    for (size_t l = 0; l < 8; ++l) finite = finite && bad[l] == 0, amax = std::max(amax, amax8[l]);
    d[b] = finite ? amax / 127.0f : NAN;
    if (!finite) {
      std::fill(qs, qs + kBlock, int8_t{0});
      continue;
    }
    const float id = amax > 0 ? 127.0f / amax : 0.0f;
    // Adding and taking back 1.5·2^23 rounds |x| ≤ 127 to the nearest integer, ties to even.
    for (size_t i = 0; i < kBlock / 8; ++i) {
      const v8i r = __builtin_convertvector((x[i] * id + 12582912.0f) - 12582912.0f, v8i);
      for (size_t l = 0; l < 8; ++l) qs[8 * i + l] = static_cast<int8_t>(r[l]);
    }
  }
}

}  // namespace qmm::llm
