// AArch64: FCVT is baseline, so __fp16 conversions are hardware instructions.
#include <cstring>

#include "core/fp16.h"

namespace qmm {

void fp16_to_fp32_row(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    __fp16 h;
    std::memcpy(&h, src + i, 2);
    dst[i] = static_cast<float>(h);
  }
}

void fp32_to_fp16_row(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const __fp16 h = static_cast<__fp16>(src[i]);
    std::memcpy(dst + i, &h, 2);
  }
}

}  // namespace qmm
