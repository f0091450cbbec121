#include "kernels/arm/matmul_clamp_f32_f32p1x1_f16p8x1_1x8_neon.h"

#include "kernels/arm/neon_float_loops.h"
#include "kernels/ref/pack_float_panels.h"

namespace qmm {
namespace {

TileParams params(size_t) { return {1, neon_float::kNr, 1, 1, 1, neon_float::kNr}; }

}  // namespace

const Ukernel matmul_clamp_f32_f32p1x1_f16p8x1_1x8_neon = {
    "matmul_clamp_f32_f32p1x1_f16p8x1_1x8_neon", Isa::neon, WeightType::f16, true, params,
    &lhs_pack_f32p_f32, &rhs_pack_nxk_f16p_f16, neon_float::gemv_1x8<uint16_t>};

}  // namespace qmm
