// The KleidiAI kernels count_kernel can count (count_kleidiai.h). Each reads the packed buffers
// of the qmm kernel of the same layout (qmm's packers write KleidiAI's bytes: the names test and
// KleidiAIBits.*); the F16-activation Q4_0 GEMM packs its LHS with KleidiAI's own packer.
#include "count_kleidiai.h"

#if QMM_HAVE_KLEIDIAI
extern "C" {
void kai_run_matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa(size_t m, size_t n, size_t k, const void* lhs, const void* rhs,
    float* dst, size_t stride_row, size_t stride_col, float lo, float hi);
void kai_run_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot(size_t m, size_t n, size_t k, const void* lhs, const void* rhs,
    float* dst, size_t stride_row, size_t stride_col, float lo, float hi);
void kai_run_matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa(size_t m, size_t n, size_t k, size_t bl, const void* lhs,
    const void* rhs, float* dst, size_t stride_row, size_t stride_col, float lo, float hi);
void kai_run_matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot(size_t m, size_t n, size_t k, size_t bl, const void* lhs,
    const void* rhs, float* dst, size_t stride_row, size_t stride_col, float lo, float hi);
void kai_run_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa(size_t m, size_t n, size_t k, size_t bl, const void* lhs,
    const void* rhs, float* dst, size_t stride_row, size_t stride_col, float lo, float hi);
size_t kai_get_mr_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa(void);
size_t kai_get_kr_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa(void);
size_t kai_get_sr_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa(void);
size_t kai_get_lhs_packed_size_lhs_pack_f16pmrx2_f32_neon(size_t m, size_t k, size_t bl, size_t mr, size_t kr,
                                                          size_t sr);
void kai_run_lhs_pack_f16pmrx2_f32_neon(size_t m, size_t k, size_t bl, size_t mr, size_t kr, size_t sr,
                                        size_t m_idx_start, const void* lhs, size_t lhs_stride, void* lhs_packed);
}

namespace qmm::armtest {
namespace {

constexpr size_t kBl = 32;  // the Q4_0 kernels' block length argument

void pack_f16p(size_t m, size_t k, const float* lhs, std::vector<uint8_t>& out) {
  const size_t mr = kai_get_mr_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa();
  const size_t kr = kai_get_kr_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa();
  const size_t sr = kai_get_sr_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa();
  out.assign(kai_get_lhs_packed_size_lhs_pack_f16pmrx2_f32_neon(m, k, kBl, mr, kr, sr), 0);
  kai_run_lhs_pack_f16pmrx2_f32_neon(m, k, kBl, mr, kr, sr, 0, lhs, k * sizeof(float), out.data());
}

const KaiKernel kKernels[] = {
    {"kai_matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa", nullptr,
     [](size_t m, size_t n, size_t k, const void* l, const void* r, float* d, size_t s, float lo, float hi) {
       kai_run_matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa(m, n, k, l, r, d, s, 4, lo, hi);
     }},
    {"kai_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot",
     "matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot", nullptr,
     [](size_t m, size_t n, size_t k, const void* l, const void* r, float* d, size_t s, float lo, float hi) {
       kai_run_matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot(m, n, k, l, r, d, s, 4, lo, hi);
     }},
    {"kai_matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa", nullptr,
     [](size_t m, size_t n, size_t k, const void* l, const void* r, float* d, size_t s, float lo, float hi) {
       kai_run_matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa(m, n, k, kBl, l, r, d, s, 4, lo, hi);
     }},
    {"kai_matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot",
     "matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot", nullptr,
     [](size_t m, size_t n, size_t k, const void* l, const void* r, float* d, size_t s, float lo, float hi) {
       kai_run_matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot(m, n, k, kBl, l, r, d, s, 4, lo, hi);
     }},
    {"kai_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa",
     "matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa", pack_f16p,
     [](size_t m, size_t n, size_t k, const void* l, const void* r, float* d, size_t s, float lo, float hi) {
       kai_run_matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa(m, n, k, kBl, l, r, d, s, 4, lo, hi);
     }},
};

}  // namespace

std::span<const KaiKernel> kleidiai_kernels() { return kKernels; }

}  // namespace qmm::armtest
#else
namespace qmm::armtest {
std::span<const KaiKernel> kleidiai_kernels() { return {}; }
}  // namespace qmm::armtest
#endif
