#include "kernels/ref/rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0.h"

#include "kernels/ref/channel_pack.h"

namespace qmm {
namespace {

size_t packed_size(size_t n, size_t k, size_t nr, size_t, size_t) { return (n + nr - 1) / nr * layout::qsi4cxp_panel_bytes(nr, k); }

size_t packed_offset(size_t n_idx, size_t k, size_t nr, size_t, size_t) { return n_idx / nr * layout::qsi4cxp_panel_bytes(nr, k); }

void run(size_t n, size_t k, size_t nr, size_t kr, size_t, const void* rhs, void* rhs_packed) {
  const layout::QcRows<true> src{static_cast<const uint8_t*>(rhs), qc4_row_bytes(k)};
  layout::pack_qsi4cxps1s0(n, k, nr, kr, src, rhs_packed);
}

}  // namespace

void pack_nxk_qsi4cxps1s0_qsu4cxs1s0(size_t n, size_t k, size_t nr, size_t kr, const uint8_t* rhs, const float* bias,
                                     const float* scale, int rhs_zero_point, void* rhs_packed) {
  layout::pack_qsi4cxps1s0(n, k, nr, kr, layout::Qs4cxArrays{rhs, k, scale, bias, rhs_zero_point}, rhs_packed);
}

const RhsPacker rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0 = {"rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0", WeightType::qc4, packed_size,
                                                       packed_offset, run};

}  // namespace qmm
