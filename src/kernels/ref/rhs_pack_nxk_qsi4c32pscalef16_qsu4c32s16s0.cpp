#include "kernels/ref/rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0.h"

#include <cstring>

#include "core/fp16.h"

#include "kernels/ref/layouts.h"

namespace qmm {
namespace {

size_t packed_size(size_t n, size_t k, size_t nr, size_t, size_t) {
  return (n + nr - 1) / nr * layout::qsi4c32pscalef16_panel_bytes(nr, k);
}

size_t packed_offset(size_t n_idx, size_t k, size_t nr, size_t, size_t) {
  return n_idx / nr * layout::qsi4c32pscalef16_panel_bytes(nr, k);
}

void run(size_t n, size_t k, size_t nr, size_t kr, size_t, const void* rhs, void* rhs_packed) {
  const size_t blocks = k / kBlock;
  const size_t panel_bytes = layout::qsi4c32pscalef16_panel_bytes(nr, k);
  const size_t block_bytes = nr * (kBlock / 2 + 2);
  const size_t seg_bytes = kr / 2;
  const auto* src = static_cast<const BlockQ4_0*>(rhs);
  for (size_t row = 0; row < n; ++row) {
    uint8_t* panel = static_cast<uint8_t*>(rhs_packed) + row / nr * panel_bytes;
    const size_t r = row % nr;
    for (size_t b = 0; b < blocks; ++b) {
      const BlockQ4_0& blk = src[row * blocks + b];
      uint8_t* out = panel + b * block_bytes;
      const uint16_t d = fp16_scale_or_nan(blk.d);  // the NaN policy (ukernel.h)
      std::memcpy(out + r * 2, &d, 2);
      for (size_t i = 0; i < kBlock / 2; ++i) {
        out[nr * 2 + (i / seg_bytes * nr + r) * seg_bytes + i % seg_bytes] = static_cast<uint8_t>(blk.qs[i] ^ 0x88);
      }
    }
  }
}

}  // namespace

const RhsPacker rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0 = {
    "rhs_pack_nxk_qsi4c32pscalef16_qsu4c32s16s0", WeightType::q4_0, packed_size, packed_offset, run};

}  // namespace qmm
