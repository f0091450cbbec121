#include "kernels/ref/rhs_pack_nxk_qsi8cxp_qsi8cx.h"

#include "kernels/ref/channel_pack.h"

namespace qmm {
namespace {

struct Format {
  static size_t row_bytes(size_t k) { return qc8_row_bytes(k); }
  static size_t panel_bytes(size_t nr, size_t k) { return layout::qsi8cxp_panel_bytes(nr, k); }
  static size_t data_bytes(size_t nr, size_t k) { return layout::qsi8cxp_data_bytes(nr, k); }
  static int value(const uint8_t* row, size_t c) { return qc8_value(row, c); }
  static void put(uint8_t* p, size_t e, int q) { p[e] = static_cast<uint8_t>(q); }
};

size_t packed_size(size_t n, size_t k, size_t nr, size_t, size_t) { return (n + nr - 1) / nr * Format::panel_bytes(nr, k); }

size_t packed_offset(size_t n_idx, size_t k, size_t nr, size_t, size_t) { return n_idx / nr * Format::panel_bytes(nr, k); }

void run(size_t n, size_t k, size_t nr, size_t kr, size_t, const void* rhs, void* rhs_packed) {
  layout::pack_channel_rows<Format>(n, k, nr, kr, rhs, rhs_packed);
}

}  // namespace

const RhsPacker rhs_pack_nxk_qsi8cxp_qsi8cx = {"rhs_pack_nxk_qsi8cxp_qsi8cx", WeightType::qc8, packed_size, packed_offset, run};

}  // namespace qmm
