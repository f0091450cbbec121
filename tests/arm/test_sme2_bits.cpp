// The output bits of SME2 kernels whose loops were rewritten to execute fewer instructions with
// the promise of the same bits, pinned per SVL: the K-quant / IQ4_NL GEMVs (issue 27: the IQ4_NL
// GEMV without UZP and register copies, chunk loads from one base, multi-vector scale
// conversion), the two kernels on KleidiAI's QC4 layout (moved onto sme2_channel.h's tile
// loop, chunk addresses as load immediates) and the Q4_0 / Q8_0 GEMVs (two quads per load, the
// F32 sums in ZA, the scales unpacked by one UUNPK). The K-quant / IQ4_NL GEMMs are pinned to the bits of
// their ZA-accumulated epilogue (the F32 sums stay in ZA2/ZA3 over all of k: a different rounding
// order from the dst-accumulated one before, within the reference tolerance). A change that
// means to change results updates the hashes (QMM_PRINT_BITS=1 prints the current values). The
// hashes were re-pinned, kernels unchanged, when the tests' random weights came to be drawn
// from a pool of quantized blocks (tests/random_rows.h). The F16-activation GEMMs and their
// scalar twins are pinned from the code after their shared pieces were folded into one
// (sme2_f16_panels.h, kernels/ref/f16p_scalar.h), which changed no output bit (their outputs
// hashed the same before and after, on other shapes); a twin is portable, so its bits are
// pinned once for every SVL (0).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "arm_test_util.h"
#include "core/cpu.h"
#include "matmul/select.h"

namespace qmm {
namespace {

struct Pinned {
  const char* kernel;
  size_t svl_bytes;  // 0: any SVL (a scalar kernel)
  uint64_t hash;  // FNV-1a of the output floats' bits over the shapes of kShapes
};

// Filled from the kernels before each rewrite (see the file comment).
constexpr Pinned kPinned[] = {
#include "sme2_bits.inc"
};

const char* const kKernels[] = {
    "matmul_clamp_f32_qsi8d32p1x4_iq4nlp4vlx4_1x4vl_sme2_sdot",
    "matmul_clamp_f32_qsi8d32p1vlx4_iq4nlp4vlx4_1vlx4vl_sme2_mopa",
    "matmul_clamp_f32_qsi8d32p1x4_q4kp4vlx4_1x4vl_sme2_sdot",
    "matmul_clamp_f32_qsi8d32p1vlx4_q4kp4vlx4_1vlx4vl_sme2_mopa",
    "matmul_clamp_f32_qsi8d32p1x4_q5kp4vlx4_1x4vl_sme2_sdot",
    "matmul_clamp_f32_qsi8d32p1vlx4_q5kp4vlx4_1vlx4vl_sme2_mopa",
    "matmul_clamp_f32_qsi8d32p1x4_q6kp4vlx4_1x4vl_sme2_sdot",
    "matmul_clamp_f32_qsi8d32p1vlx4_q6kp4vlx4_1vlx4vl_sme2_mopa",
    "matmul_clamp_f32_qai8dxp1vlx8_qsi4cxp4vlx8_1vlx4vl_sme2_mopa",
    "matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot",
    "matmul_clamp_f32_qsi8d32p1x4_qsi4c32p4vlx4_1x4vl_sme2_sdot",
    "matmul_clamp_f32_qsi8d32p1x4_qsi8c32p4vlx4_1x4vl_sme2_sdot",
    "matmul_clamp_f32_f16p1vlx2_qsi4c32p4vlx2_1vlx4vl_sme2_mopa",
    "matmul_clamp_f32_f16p1vlx2_q4kp4vlx4_1vlx4vl_sme2_mopa",
    "matmul_clamp_f32_f16p1vlx2_q5kp4vlx4_1vlx4vl_sme2_mopa",
    "matmul_clamp_f32_f16p1vlx2_q6kp4vlx4_1vlx4vl_sme2_mopa",
    "matmul_clamp_f32_f16p4x2_qsi4c32p8x4_4x8_scalar",
    "matmul_clamp_f32_f16p4x2_q4kp8x4_4x8_scalar",
    "matmul_clamp_f32_f16p4x2_q5kp8x4_4x8_scalar",
    "matmul_clamp_f32_f16p4x2_q6kp8x4_4x8_scalar",
};

uint64_t output_hash(const Ukernel& u) {
  const TileParams p = kernel_params(u);
  const size_t bl = is_block_type(u.type) ? block_len(u.type) : 40;  // per-channel: k 80, 40, 160 (k % 32 tails)
  struct Shape {
    size_t m, n, k;
    float lo, hi;
  };
  const Shape shapes[] = {{u.gemv ? 1 : p.mr + 3, p.nr + 5, 2 * bl, -INFINITY, INFINITY},
                          {u.gemv ? size_t{1} : size_t{2}, 3, bl, -0.5f, 0.75f},
                          {1, 2 * p.nr, 4 * bl, -INFINITY, INFINITY}};
  uint64_t h = 1469598103934665603ull;
  uint32_t seed = 7;
  for (const Shape& s : shapes) {
    const std::vector<float> lhs = armtest::random_floats(s.m * s.k, seed++);
    const std::vector<uint8_t> rows = armtest::random_weights(u.type, s.n, s.k, seed++);
    const std::vector<float> out =
        armtest::run_kernel(u, s.m, s.n, s.k, armtest::pack_for(u, s.m, s.n, s.k, lhs, rows), s.lo, s.hi);
    for (float f : out) {
      uint32_t b;
      std::memcpy(&b, &f, 4);
      for (int i = 0; i < 4; ++i) h = (h ^ ((b >> (8 * i)) & 0xff)) * 1099511628211ull;
    }
  }
  return h;
}

TEST(Sme2Bits, RewrittenLoopsKeepTheirBits) {
  const size_t svl = cpu_info().svl_bytes;
  const bool print = std::getenv("QMM_PRINT_BITS") != nullptr;
  const char* only = std::getenv("QMM_PRINT_BITS_ONLY");  // with QMM_PRINT_BITS: kernels containing this
  size_t checked = 0;
  for (const char* name : kKernels) {
    if (print && only != nullptr && std::string(name).find(only) == std::string::npos) continue;
    const Ukernel* u = nullptr;
    for (const Ukernel* k : kernel_list()) {
      if (std::string(k->name) == name) u = k;
    }
    if (u == nullptr || !unavailable_reason(*u, cpu_info()).empty()) continue;  // not built here (x86, no SME2)
    const uint64_t h = output_hash(*u);
    const size_t pin_svl = u->isa == Isa::scalar ? 0 : svl;
    if (print) std::printf("    {\"%s\", %zu, 0x%016llxull},\n", name, pin_svl, static_cast<unsigned long long>(h));
    for (const Pinned& p : kPinned) {
      if (p.svl_bytes == pin_svl && std::string(p.kernel) == name) {
        EXPECT_EQ(h, p.hash) << name << " at SVL " << 8 * svl << ": output bits changed";
        ++checked;
      }
    }
  }
  if (checked == 0 && !print) GTEST_SKIP() << "no SME2 kernels in this build or CPU, or no pinned hashes at SVL " << 8 * svl << " bits";
}

}  // namespace
}  // namespace qmm
