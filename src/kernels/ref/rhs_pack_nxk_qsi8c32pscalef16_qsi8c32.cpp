#include "kernels/ref/rhs_pack_nxk_qsi8c32pscalef16_qsi8c32.h"

#include <cstring>

#include "core/fp16.h"

#include "kernels/ref/layouts.h"

namespace qmm {
namespace {

size_t packed_size(size_t n, size_t k, size_t nr, size_t, size_t) {
  return (n + nr - 1) / nr * layout::qsi8c32p_panel_bytes(nr, k);
}

size_t packed_offset(size_t n_idx, size_t k, size_t nr, size_t, size_t) {
  return n_idx / nr * layout::qsi8c32p_panel_bytes(nr, k);
}

void run(size_t n, size_t k, size_t nr, size_t kr, size_t, const void* rhs, void* rhs_packed) {
  const size_t blocks = k / kBlock;
  const size_t panel_bytes = layout::qsi8c32p_panel_bytes(nr, k);
  const auto* src = static_cast<const BlockQ8_0*>(rhs);
  for (size_t row = 0; row < n; ++row) {
    uint8_t* panel = static_cast<uint8_t*>(rhs_packed) + row / nr * panel_bytes;
    const size_t r = row % nr;
    for (size_t b = 0; b < blocks; ++b) {
      const BlockQ8_0& blk = src[row * blocks + b];
      for (size_t j = 0; j < kBlock; ++j) {
        panel[layout::panel_index(nr, kr, r, b * kBlock + j)] = static_cast<uint8_t>(blk.qs[j]);
      }
      const uint16_t d = fp16_scale_or_nan(blk.d);  // the NaN policy (ukernel.h)
      std::memcpy(panel + nr * k + (b * nr + r) * 2, &d, 2);
    }
  }
}

}  // namespace

const RhsPacker rhs_pack_nxk_qsi8c32pscalef16_qsi8c32 = {
    "rhs_pack_nxk_qsi8c32pscalef16_qsi8c32", WeightType::q8_0, packed_size, packed_offset, run};

}  // namespace qmm
