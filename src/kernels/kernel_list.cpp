#include "kernels/kernel_list.h"

#include <vector>

#include "core/cpu.h"
#include "kernels/kernel_headers.h"
#include "kernels/ref/pack_float_panels.h"
#include "kernels/sme2_params.h"

namespace qmm {
namespace {

// Priority order: the first available variant of a weight type wins. Each architecture's
// section is compiled only for that architecture.
const Ukernel* const kKernels[] = {
#if defined(__aarch64__)
#include "kernels/arm/kernel_list_arm.inc"
#endif
#if defined(__x86_64__)
#include "kernels/x86/kernel_list_x86.inc"
#endif
#include "kernels/ref/kernel_list_ref.inc"
};

#if defined(__aarch64__)
constexpr Isa kIsas[] = {Isa::sme2, Isa::i8mm, Isa::dotprod, Isa::neon, Isa::scalar};
#elif defined(__x86_64__)
constexpr Isa kIsas[] = {Isa::amxbf16, Isa::amx, Isa::avx512vnni, Isa::avxvnni, Isa::avx2, Isa::scalar};
#else
constexpr Isa kIsas[] = {Isa::scalar};
#endif

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avxvnni: return "avxvnni";
    case Isa::avx512vnni: return "avx512vnni";
    case Isa::amx: return "amx";
    case Isa::amxbf16: return "amxbf16";
    case Isa::dotprod: return "dotprod";
    case Isa::i8mm: return "i8mm";
    case Isa::sme2: return "sme2";
    case Isa::neon: return "neon";
  }
  return "?";
}

uint32_t isa_features(Isa isa) {
  switch (isa) {
    case Isa::scalar: return 0;
    case Isa::avx2: return kFeatAVX2 | kFeatFMA | kFeatF16C;
    case Isa::avxvnni: return kFeatAVX2 | kFeatFMA | kFeatF16C | kFeatAVXVNNI;
    case Isa::avx512vnni: return kFeatAVX512F | kFeatAVX512BW | kFeatAVX512VL | kFeatAVX512VNNI | kFeatFMA | kFeatF16C;
    case Isa::amx: return kFeatAMXINT8 | kFeatAVX512F | kFeatAVX512BW | kFeatAVX512VL | kFeatFMA | kFeatF16C;
    case Isa::amxbf16:
      return kFeatAMXBF16 | kFeatAVX512BF16 | kFeatAVX512F | kFeatAVX512BW | kFeatAVX512VL | kFeatFMA | kFeatF16C;
    case Isa::dotprod: return kFeatNEON | kFeatDotProd;
    case Isa::i8mm: return kFeatNEON | kFeatDotProd | kFeatI8MM;
    case Isa::sme2: return kFeatSME | kFeatSME2;
    case Isa::neon: return kFeatNEON;
  }
  return 0;
}

std::span<const Ukernel* const> kernel_list() { return kKernels; }

TileParams kernel_params(const Ukernel& u) { return u.params(cpu_info().svl_bytes); }

MatmulFn neon_twin(const Ukernel& sme2_gemm) {
#if defined(__aarch64__) && QMM_HAVE_SME2
  const CpuInfo& cpu = cpu_info();
  if (&sme2_gemm == &matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa && cpu.has(isa_features(Isa::sme2)) &&
      cpu.has(isa_features(Isa::dotprod))) {
    return q4_0_sme2_layout_gemm_neon_dotprod(cpu.svl_bytes);
  }
#endif
  (void)sme2_gemm;
  return nullptr;
}

const Ukernel* find_kernel(std::string_view name) {
  for (const Ukernel* u : kKernels) {
    if (name == u->name) return u;
  }
  return nullptr;
}

const char* retired_kernel_name(std::string_view name) {
  struct Retired {
    const char* name;
    const char* message;
  };
  static constexpr Retired kRetired[] = {
      {"matmul_clamp_f32_qsi8d32p1x4_qsi4c32p8x4_1x8_scalar",
       "names the operands of KleidiAI's SVE Q4_0 GEMV (kr 8 / sr 2); qmm's scalar Q4_0 GEMV (kr 4 / sr 2) is "
       "matmul_clamp_f32_qsi8d32p1x4s2_qsi4c32p8x4s2_1x8_scalar"},
  };
  for (const Retired& r : kRetired) {
    if (name == r.name) return r.message;
  }
  return nullptr;
}

std::span<const Isa> isa_list() { return kIsas; }

bool parse_isa(std::string_view name, Isa* out) {
  for (Isa isa : kIsas) {
    if (name == isa_name(isa)) {
      *out = isa;
      return true;
    }
  }
  return false;
}

std::span<const PackerPreset> packer_presets() {
  static const std::vector<PackerPreset> list = [] {
    // The SME2 variants, described portably; where this build has the kernel, its own entry
    // is used instead. Then the rest of this build's list.
    std::vector<PackerPreset> out = {
        {"matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0, sme2_q4_gemm_params},
        {"matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0, sme2_q4_gemv_params},
        {"matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_pack_f16pmrx2_f32,
         &rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0, sme2_q4_gemm_params},
        {"matmul_clamp_f32_qsi8d32p1vlx4_qsi8c32p4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, sme2_q8_gemm_params},
        {"matmul_clamp_f32_qsi8d32p1x4_qsi8c32p4vlx4_1x4vl_sme2_sdot", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_qsi8c32pscalef16_qsi8c32, sme2_q8_gemv_params},
        {"matmul_clamp_f32_f32p1vlx1_f16p4vlx1_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_pack_f32p_f32,
         &rhs_pack_nxk_f16p_f16, sme2_f16_gemm_params},
        {"matmul_clamp_f32_f32p1x1_f16p4vlx1_1x4vl_sme2_fmla", Isa::sme2, &lhs_pack_f32p_f32, &rhs_pack_nxk_f16p_f16,
         sme2_f16_gemv_params},
        {"matmul_clamp_f32_qai8dxp1vlx4_qsi4cxp4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_quant_pack_qai8dxp_f32,
         &rhs_pack_nxk_qsi4cxp_qs4cxs1s0, sme2_qc4_gemm_params},
        {"matmul_clamp_f32_qai8dxp1x8s2_qsi4cxp4vlx8s2_1x4vl_sme2_sdot", Isa::sme2, &lhs_quant_pack_qai8dxp_f32,
         &rhs_pack_nxk_qsi4cxp_qs4cxs1s0, sme2_qc4_gemv_params},
        {"matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot", Isa::sme2, &lhs_quant_pack_qai8dxp_f32,
         &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, sme2_qc4_kai_gemv_params},
        {"matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_quant_pack_qai8dxp_f32,
         &rhs_pack_nxk_qsi4cxps1s0_qsu4cxs1s0, sme2_qc4_kai_gemm_params},
        {"matmul_clamp_f32_qai8dxp1vlx4_qsi8cxp4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_quant_pack_qai8dxp_f32,
         &rhs_pack_nxk_qsi8cxp_qsi8cx, sme2_qc8_gemm_params},
        {"matmul_clamp_f32_qai8dxp1x4_qsi8cxp4vlx4_1x4vl_sme2_dot", Isa::sme2, &lhs_quant_pack_qai8dxp_f32,
         &rhs_pack_nxk_qsi8cxp_qsi8cx, sme2_qc8_gemv_params},
        {"matmul_clamp_f32_f16p1vlx2_q4kp4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_pack_f16pmrx2_f32,
         &rhs_pack_nxk_q4kp_q4k, sme2_q4_gemm_params},
        {"matmul_clamp_f32_qsi8d32p1vlx4_q4kp4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_q4kp_q4k, sme2_q4_gemm_params},
        {"matmul_clamp_f32_qsi8d32p1x4_q4kp4vlx4_1x4vl_sme2_sdot", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_q4kp_q4k, sme2_q4_gemv_params},
        {"matmul_clamp_f32_f16p1vlx2_q5kp4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_pack_f16pmrx2_f32,
         &rhs_pack_nxk_q5kp_q5k, sme2_q4_gemm_params},
        {"matmul_clamp_f32_qsi8d32p1vlx4_q5kp4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_q5kp_q5k, sme2_q4_gemm_params},
        {"matmul_clamp_f32_qsi8d32p1x4_q5kp4vlx4_1x4vl_sme2_sdot", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_q5kp_q5k, sme2_q4_gemv_params},
        {"matmul_clamp_f32_f16p1vlx2_q6kp4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_pack_f16pmrx2_f32,
         &rhs_pack_nxk_q6kp_q6k, sme2_q4_gemm_params},
        {"matmul_clamp_f32_qsi8d32p1vlx4_q6kp4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_q6kp_q6k, sme2_q4_gemm_params},
        {"matmul_clamp_f32_qsi8d32p1x4_q6kp4vlx4_1x4vl_sme2_sdot", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_q6kp_q6k, sme2_q4_gemv_params},
        {"matmul_clamp_f32_qsi8d32p1vlx4_iq4nlp4vlx4_1vlx4vl_sme2_mopa", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_iq4nlp_iq4nl, sme2_q4_gemm_params},
        {"matmul_clamp_f32_qsi8d32p1x4_iq4nlp4vlx4_1x4vl_sme2_sdot", Isa::sme2, &lhs_quant_pack_qsi8d32p_f32,
         &rhs_pack_nxk_iq4nlp_iq4nl, sme2_q4_gemv_params},
    };
    for (PackerPreset& p : out) {
      if (const Ukernel* u = find_kernel(p.kernel)) p = {u->name, u->isa, u->lhs, u->rhs, u->params};
    }
    for (const Ukernel* u : kKernels) {
      bool seen = false;
      for (const PackerPreset& p : out) seen = seen || std::string_view(p.kernel) == u->name;
      if (!seen) out.push_back({u->name, u->isa, u->lhs, u->rhs, u->params});
    }
    return out;
  }();
  return list;
}

}  // namespace qmm
