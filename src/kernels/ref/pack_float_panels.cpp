#include "kernels/ref/pack_float_panels.h"

#include <cstring>

#include "kernels/ref/layouts.h"

namespace qmm {
namespace {

template <class T>
size_t panel_bytes(size_t rows, size_t k, size_t kr) {
  return rows * layout::round_up(k, kr) * sizeof(T);
}

template <class T>
size_t packed_size(size_t n, size_t k, size_t nr, size_t kr, size_t) {
  return (n + nr - 1) / nr * panel_bytes<T>(nr, k, kr);
}

template <class T>
size_t packed_offset(size_t n_idx, size_t k, size_t nr, size_t kr, size_t) {
  return n_idx / nr * panel_bytes<T>(nr, k, kr);
}

// rows [n, k] of T with a row stride in bytes -> panels of R rows.
template <class T>
void pack(size_t n, size_t k, size_t R, size_t kr, const void* src, size_t stride, void* dst) {
  const size_t pb = panel_bytes<T>(R, k, kr);
  for (size_t row = 0; row < n; ++row) {
    const auto* in = reinterpret_cast<const T*>(static_cast<const uint8_t*>(src) + row * stride);
    T* panel = reinterpret_cast<T*>(static_cast<uint8_t*>(dst) + row / R * pb);
    for (size_t c = 0; c < k; ++c) panel[layout::panel_index(R, kr, row % R, c)] = in[c];
  }
}

void lhs_run(size_t m, size_t k, size_t mr, size_t kr, size_t, const float* lhs, size_t stride, void* out) {
  // Padding rows and columns must read as zero; the driver's scratch is not zeroed per call.
  std::memset(out, 0, packed_size<float>(m, k, mr, kr, 0));
  pack<float>(m, k, mr, kr, lhs, stride, out);
}

void rhs_f16_run(size_t n, size_t k, size_t nr, size_t kr, size_t, const void* rhs, void* out) {
  pack<uint16_t>(n, k, nr, kr, rhs, k * 2, out);
}

void rhs_f32_run(size_t n, size_t k, size_t nr, size_t kr, size_t, const void* rhs, void* out) {
  pack<float>(n, k, nr, kr, rhs, k * 4, out);
}

}  // namespace

const LhsPacker lhs_pack_f32p_f32 = {"lhs_pack_f32p_f32", packed_size<float>, packed_offset<float>, lhs_run};
const RhsPacker rhs_pack_nxk_f16p_f16 = {"rhs_pack_nxk_f16p_f16", WeightType::f16, packed_size<uint16_t>,
                                         packed_offset<uint16_t>, rhs_f16_run};
const RhsPacker rhs_pack_nxk_f32p_f32 = {"rhs_pack_nxk_f32p_f32", WeightType::f32, packed_size<float>,
                                         packed_offset<float>, rhs_f32_run};

}  // namespace qmm
