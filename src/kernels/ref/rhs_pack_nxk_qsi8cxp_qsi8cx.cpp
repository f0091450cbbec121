#include "kernels/ref/rhs_pack_nxk_qsi8cxp_qsi8cx.h"

#include "kernels/ref/channel_pack.h"

namespace qmm {
namespace {


size_t packed_size(size_t n, size_t k, size_t nr, size_t, size_t) { return (n + nr - 1) / nr * layout::qsi8cxp_panel_bytes(nr, k); }

size_t packed_offset(size_t n_idx, size_t k, size_t nr, size_t, size_t) { return n_idx / nr * layout::qsi8cxp_panel_bytes(nr, k); }

void run(size_t n, size_t k, size_t nr, size_t kr, size_t, const void* rhs, void* rhs_packed) {
  layout::pack_qsi8cxp(n, k, nr, kr, layout::QcRows<false>{static_cast<const uint8_t*>(rhs), qc8_row_bytes(k)}, rhs_packed);
}

}  // namespace

const RhsPacker rhs_pack_nxk_qsi8cxp_qsi8cx = {"rhs_pack_nxk_qsi8cxp_qsi8cx", WeightType::qc8, packed_size, packed_offset, run};

}  // namespace qmm
