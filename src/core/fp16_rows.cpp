// Portable row conversions (used where no conversion hardware path is compiled in).
#include "core/fp16.h"

namespace qmm {

void fp16_to_fp32_row_portable(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(src[i]);
}

void fp32_to_fp16_row_portable(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

}  // namespace qmm
