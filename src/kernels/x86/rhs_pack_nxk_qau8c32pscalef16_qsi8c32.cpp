#include "kernels/x86/rhs_pack_nxk_qau8c32pscalef16_qsi8c32.h"

#include <cstring>

#include "core/fp16.h"

namespace qmm {
namespace {

constexpr size_t kRowBlockBytes = 34;  // per row and block: 32 bytes + f16 d

size_t panel_bytes(size_t nr, size_t k) { return nr * (k / kBlock) * kRowBlockBytes; }
size_t packed_size(size_t n, size_t k, size_t nr, size_t, size_t) { return (n + nr - 1) / nr * panel_bytes(nr, k); }
size_t packed_offset(size_t n_idx, size_t k, size_t nr, size_t, size_t) { return n_idx / nr * panel_bytes(nr, k); }

void run(size_t n, size_t k, size_t nr, size_t, size_t, const void* rhs, void* rhs_packed) {
  const size_t blocks = k / kBlock;
  const auto* src = static_cast<const BlockQ8_0*>(rhs);
  for (size_t row = 0; row < n; ++row) {
    uint8_t* panel = static_cast<uint8_t*>(rhs_packed) + row / nr * panel_bytes(nr, k);
    const size_t r = row % nr;
    for (size_t b = 0; b < blocks; ++b) {
      const BlockQ8_0& blk = src[row * blocks + b];
      uint8_t* out = panel + b * nr * kRowBlockBytes;
      for (size_t j = 0; j < kBlock; ++j) {
        out[(j / 4) * 4 * nr + 4 * r + j % 4] = static_cast<uint8_t>(static_cast<uint8_t>(blk.qs[j]) ^ 0x80u);
      }
      const uint16_t d = fp16_scale_or_nan(blk.d);  // the NaN policy (ukernel.h)
      std::memcpy(out + 32 * nr + 2 * r, &d, 2);
    }
  }
}

}  // namespace

const RhsPacker rhs_pack_nxk_qau8c32pscalef16_qsi8c32 = {
    "rhs_pack_nxk_qau8c32pscalef16_qsi8c32", WeightType::q8_0, packed_size, packed_offset, run};

}  // namespace qmm
