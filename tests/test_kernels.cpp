// Every kernel of the list against the scalar reference kernel of its weight type, over
// shapes below, at and above every tile size, sub-matrix starts and clamps. Generated from
// the kernel list: a new variant is tested by adding its line to the list.
//
// Tolerance (stated): S = Σ_k |a_k|·|w_k| over the unquantized activations and the weights
// as stored. Quantized kernels: |got − ref| ≤ 4e-3·S (the LHS scale may be kept as f32 or
// f16: 2^-11 relative per block, plus F32 accumulation order). Float kernels, and kernels
// with a reference of their own (Ukernel::reference: the same rounded inputs, e.g. the
// AMX-BF16 GEMMs): |got − ref| ≤ k·2^-22·S (F32 accumulation in any order).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "core/buffer.h"
#include "core/fp16.h"
#include "core/kquants.h"
#include "matmul/select.h"
#include "test_util.h"

namespace qmm {
namespace {

const Ukernel& scalar_gemm(WeightType t) {
  for (const Ukernel* u : kernel_list()) {
    if (u->isa == Isa::scalar && !u->gemv && u->type == t) return *u;
  }
  throw std::logic_error("no scalar kernel");
}

// One problem: activations [M, k], weights [N, k], the reference product and S.
struct Problem {
  size_t M, N, k;
  WeightType type;
  std::vector<float> lhs;
  std::vector<uint8_t> rows;
  std::vector<float> ref, mag;  // [M, N]

  bool own_reference = false;  // the kernel's Ukernel::reference (same inputs: F32 tolerance)

  // `kernel`: the kernel under test, whose reference computes `ref` (nullptr: the scalar GEMM).
  Problem(WeightType t, size_t m, size_t n, size_t kk, uint64_t seed, const Ukernel* kernel = nullptr)
      : M(m), N(n), k(kk), type(t), own_reference(kernel && kernel->reference) {
    lhs = test::random_floats(M * k, seed);
    for (size_t i = 0; i < M; i += 5) lhs[i * k] *= 30.0f;  // a large value per some rows
    rows = test::random_weights(type, N, k, seed + 1);
    reference(kernel);
  }
  // Given activations [m, kk] and GGUF rows [n] (hand-made inputs), against the scalar GEMM.
  Problem(WeightType t, size_t m, size_t n, size_t kk, std::vector<float> a, std::vector<uint8_t> w)
      : M(m), N(n), k(kk), type(t), lhs(std::move(a)), rows(std::move(w)) {
    reference(nullptr);
  }

  void reference(const Ukernel* kernel) {
    const Ukernel& s = own_reference ? *kernel->reference : scalar_gemm(type);
    ref = run(s, M, N, -INFINITY, INFINITY);
    const std::vector<float> w = test::dequantized(type, rows, N, k);
    mag.assign(M * N, 0.0f);
    for (size_t i = 0; i < M; ++i) {
      for (size_t j = 0; j < N; ++j) {
        double acc = 0;
        for (size_t c = 0; c < k; ++c) acc += std::fabs(lhs[i * k + c]) * std::fabs(w[j * k + c]);
        mag[i * N + j] = static_cast<float>(acc);
      }
    }
  }

  // Runs u on the first m rows and n columns, whole (tile = 0) or in tiles of tm x tn.
  std::vector<float> run(const Ukernel& u, size_t m, size_t n, float lo, float hi, size_t tm = 0, size_t tn = 0) const {
    const TileParams p = kernel_params(u);
    AlignedBuffer lp(lhs_packed_size(u, p, m, k)), rp(rhs_packed_size(u, p, n, k));
    u.lhs->run(m, k, p.mr, p.kr, p.sr, lhs.data(), k * 4, lp.data());
    u.rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), rp.data());
    std::vector<float> dst(m * n, NAN);
    if (tm == 0) tm = m;
    if (tn == 0) tn = n;
    for (size_t m0 = 0; m0 < m; m0 += tm) {
      for (size_t n0 = 0; n0 < n; n0 += tn) {
        u.run(std::min(tm, m - m0), std::min(tn, n - n0), k, lp.data() + lhs_packed_offset(u, p, m0, k),
              rp.data() + rhs_packed_offset(u, p, n0, k), dst.data() + m0 * n + n0, n * 4, lo, hi);
      }
    }
    return dst;
  }

  double tolerance(size_t i, size_t j) const {
    const bool quantized = (is_block_type(type) || is_channel_type(type)) && !own_reference;
    const double rel = quantized ? 4e-3 : static_cast<double>(k) * std::ldexp(1.0, -22);
    return rel * mag[i * N + j] + 1e-30;
  }

  // Checks dst [m, n] against clamp(ref).
  void check(const std::vector<float>& dst, size_t m, size_t n, float lo, float hi, const std::string& what) const {
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        const float want = std::min(std::max(ref[i * N + j], lo), hi);
        const float got = dst[i * n + j];
        ASSERT_LE(std::fabs(static_cast<double>(got) - want), tolerance(i, j))
            << what << " at (" << i << ", " << j << "): got " << got << ", want " << want;
      }
    }
  }
};

std::vector<size_t> m_values(const Ukernel& u, const TileParams& p) {
  if (u.gemv) return {1};
  std::vector<size_t> v;
  const size_t top = test::emulated() ? 9 : 17;
  for (size_t m = 1; m <= top; ++m) v.push_back(m);
  for (size_t m : {p.mr - 1, p.mr, p.mr + 1, 2 * p.mr + 3, p.m_step + 1}) v.push_back(m);
  if (!test::emulated()) v.insert(v.end(), {64, 129});
  v.erase(std::remove(v.begin(), v.end(), size_t{0}), v.end());
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<size_t> n_values(const TileParams& p) {
  std::vector<size_t> v{1, p.nr - 1, p.nr, p.nr + 1, 3 * p.nr + 5, p.n_step + 1};
  if (!test::emulated()) v.push_back(257);
  v.erase(std::remove(v.begin(), v.end(), size_t{0}), v.end());
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<size_t> k_values(WeightType t) {
  if (block_len(t) == kSuperBlock) return test::emulated() ? std::vector<size_t>{256, 512} : std::vector<size_t>{256, 512, 768};
  if (is_block_type(t)) return {32, 64, 96, 160};
  return {1, 7, 32, 96, 172};
}

class KernelTest : public ::testing::TestWithParam<const Ukernel*> {
 protected:
  void SetUp() override {
    const Ukernel& u = *GetParam();
    if (auto why = test::why_unavailable(u); !why.empty()) GTEST_SKIP() << u.name << " skipped: " << why;
  }
};

TEST_P(KernelTest, MatchesScalarReferenceOnAllShapes) {
  const Ukernel& u = *GetParam();
  const TileParams p = kernel_params(u);
  const std::vector<size_t> ms = m_values(u, p), ns = n_values(p);
  for (size_t k : k_values(u.type)) {
    const Problem prob(u.type, ms.back(), ns.back(), k, k, &u);
    for (size_t m : ms) {
      for (size_t n : ns) {
        const std::vector<float> dst = prob.run(u, m, n, -INFINITY, INFINITY);
        prob.check(dst, m, n, -INFINITY, INFINITY, "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(KernelTest, LongK) {
  const Ukernel& u = *GetParam();
  const TileParams p = kernel_params(u);
  const size_t m = u.gemv ? 1 : p.mr + 1, n = p.nr + 1, k = test::emulated() ? 1024 : 4096;
  const Problem prob(u.type, m, n, k, 99, &u);
  prob.check(prob.run(u, m, n, -INFINITY, INFINITY), m, n, -INFINITY, INFINITY, "k=" + std::to_string(k));
}

// Sub-matrices started at m_step / n_step multiples give the same bits as one whole call.
TEST_P(KernelTest, SubMatrixStartsAreBitwiseIdentical) {
  const Ukernel& u = *GetParam();
  const TileParams p = kernel_params(u);
  const size_t m = u.gemv ? 1 : 2 * p.m_step + 3, n = 3 * p.n_step + 5, k = 3 * std::max<size_t>(32, block_len(u.type));
  const Problem prob(u.type, m, n, k, 5, &u);
  const std::vector<float> whole = prob.run(u, m, n, -INFINITY, INFINITY);
  prob.check(whole, m, n, -INFINITY, INFINITY, "whole");
  for (auto [tm, tn] : {std::pair{p.m_step, p.n_step}, std::pair{2 * p.m_step, p.n_step}, std::pair{p.m_step, 2 * p.n_step}}) {
    const std::vector<float> tiled = prob.run(u, m, n, -INFINITY, INFINITY, tm, tn);
    ASSERT_EQ(0, std::memcmp(whole.data(), tiled.data(), whole.size() * 4)) << "tiles " << tm << "x" << tn;
  }
}

TEST_P(KernelTest, Clamps) {
  const Ukernel& u = *GetParam();
  const TileParams p = kernel_params(u);
  const size_t m = u.gemv ? 1 : p.mr + 3, n = 2 * p.nr + 1, k = 2 * std::max<size_t>(32, block_len(u.type));
  const Problem prob(u.type, m, n, k, 17, &u);
  std::vector<float> sorted(prob.ref.begin(), prob.ref.end());
  std::sort(sorted.begin(), sorted.end());
  const float lo = sorted[sorted.size() / 3], hi = sorted[2 * sorted.size() / 3];
  for (auto [l, h] : {std::pair{lo, hi}, std::pair{lo, INFINITY}, std::pair{-INFINITY, hi}, std::pair{-INFINITY, INFINITY}}) {
    prob.check(prob.run(u, m, n, l, h), m, n, l, h, "clamp [" + std::to_string(l) + ", " + std::to_string(h) + "]");
  }
}

// The NaN policy (kernels/ukernel.h, include/qmm/qmm.h) for NaN, +Inf and -Inf in one
// activation, one weight value, and (block types) one weight block's scale d, under an open
// and a finite clamp: the outputs the policy names are NaN (block types: the poisoned row or
// column, whole; float types: what F32 arithmetic gives, NaN or ±Inf before the clamp), and
// every other output keeps the bits of the same kernel on the clean input.
enum class Poison { activation, weight, weight_scale };

// Float types: the class F32 arithmetic gives Σ_c x[c]·w[c] whatever the summation order.
float f32_class(const float* x, const float* w, size_t k, float clean) {
  bool nan = false, pos = false, neg = false;
  for (size_t c = 0; c < k; ++c) {
    const float p = x[c] * w[c];
    nan |= std::isnan(p);
    pos |= p == INFINITY;
    neg |= p == -INFINITY;
  }
  if (nan || (pos && neg)) return NAN;
  return pos ? INFINITY : neg ? -INFINITY : clean;
}

TEST_P(KernelTest, NonFiniteInputsFollowTheNaNPolicy) {
  const Ukernel& u = *GetParam();
  const TileParams p = kernel_params(u);
  const size_t m = u.gemv ? 1 : p.mr + 2, n = 2 * p.nr + 3, k = 3 * std::max<size_t>(32, block_len(u.type));
  const Problem clean(u.type, m, n, k, 23);
  const bool blocks = is_block_type(u.type) || is_channel_type(u.type);  // per-row / per-column poison
  for (float lo : {-INFINITY, -1.0f}) {
    const float hi = -lo;
    const std::vector<float> base = clean.run(u, m, n, lo, hi);
    for (Poison where : {Poison::activation, Poison::weight, Poison::weight_scale}) {
      if (where == Poison::weight_scale && !blocks) continue;
      for (float poison : {NAN, INFINITY, -INFINITY}) {
        Problem bad = clean;
        const size_t i = m - 1, j = p.nr + 1, c = 37;  // the poisoned row, column, element
        const size_t rb = row_bytes(u.type, k);
        if (where == Poison::activation) {
          bad.lhs[i * k + c] = poison;
        } else if (where == Poison::weight) {  // through the GGUF quantizer (quantize_rows)
          std::vector<float> w = test::dequantized(u.type, bad.rows, n, k);
          w[j * k + c] = poison;
          quantize_rows(u.type, w.data() + j * k, bad.rows.data() + j * rb, 1, k);
        } else if (is_channel_type(u.type)) {  // a row whose f32 scale is not finite
          std::memcpy(bad.rows.data() + j * rb, &poison, 4);
        } else {  // a GGUF block whose d itself is not finite
          const uint16_t d = fp32_to_fp16(poison);
          const size_t bl = block_len(u.type), d_at = u.type == WeightType::q6_k ? 208 : 0;  // d's byte in the block
          std::memcpy(bad.rows.data() + j * rb + c / bl * (rb / (k / bl)) + d_at, &d, 2);
        }
        const std::vector<float> got = bad.run(u, m, n, lo, hi);
        const std::vector<float> x = bad.lhs, w = test::dequantized(u.type, bad.rows, n, k);
        const std::string what = std::string(where == Poison::activation ? "activation" : where == Poison::weight ? "weight" : "weight scale") +
                                 " " + std::to_string(poison) + ", clamp [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
        for (size_t r = 0; r < m; ++r) {
          for (size_t col = 0; col < n; ++col) {
            const float b = base[r * n + col], g = got[r * n + col];
            float want = b;
            if (blocks) {
              if ((where == Poison::activation && r == i) || (where != Poison::activation && col == j)) want = NAN;
            } else {
              want = std::min(std::max(f32_class(&x[r * k], &w[col * k], k, b), lo), hi);
            }
            if (std::isnan(want)) {
              ASSERT_TRUE(std::isnan(g)) << what << " at (" << r << ", " << col << "): got " << g << ", want NaN";
            } else {
              ASSERT_EQ(std::bit_cast<uint32_t>(g), std::bit_cast<uint32_t>(want))
                  << what << " at (" << r << ", " << col << "): got " << g << ", want " << want;
            }
          }
        }
      }
    }
  }
}

std::string kernel_name(const ::testing::TestParamInfo<const Ukernel*>& info) { return info.param->name; }

INSTANTIATE_TEST_SUITE_P(KernelList, KernelTest, ::testing::ValuesIn(kernel_list().begin(), kernel_list().end()),
                         kernel_name);

// A GEMV over several column groups (x86: 4 panels each) with 1-3 panels left over and a
// partial last panel, with K long enough that the weight prefetch runs ahead within each
// panel before it moves on to the next group (x86_qloops.h): right, and the same bits whole
// as in tiles of one or three n_step column tiles (other groupings, other leftovers).
// Instantiated over the GEMVs only.
class GemvTest : public KernelTest {};

TEST_P(GemvTest, GroupsAndLeftoverPanelsKeepTheBits) {
  const Ukernel& u = *GetParam();
  const TileParams p = kernel_params(u);
  const size_t k = 12 * std::max<size_t>(32, block_len(u.type));
  const std::vector<size_t> ns = test::emulated() ? std::vector<size_t>{8 * p.nr + 3 * p.nr + 5}  // (groups, leftovers, a partial panel)
                                         : std::vector<size_t>{4 * p.nr + 2 * p.nr, 8 * p.nr + 3 * p.nr + 5, 12 * p.nr + p.nr - 1};
  for (size_t n : ns) {
    const Problem prob(u.type, 1, n, k, 23 + n);
    const std::vector<float> whole = prob.run(u, 1, n, -INFINITY, INFINITY);
    prob.check(whole, 1, n, -INFINITY, INFINITY, "n " + std::to_string(n));
    for (size_t tn : {p.n_step, 3 * p.n_step}) {
      const std::vector<float> tiled = prob.run(u, 1, n, -INFINITY, INFINITY, 1, tn);
      ASSERT_EQ(0, std::memcmp(whole.data(), tiled.data(), n * 4)) << "n " << n << " tiles of " << tn;
    }
  }
}

std::vector<const Ukernel*> gemv_kernels() {
  std::vector<const Ukernel*> out;
  for (const Ukernel* u : kernel_list()) {
    if (u->gemv) out.push_back(u);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(KernelList, GemvTest, ::testing::ValuesIn(gemv_kernels()), kernel_name);

// A GEMM of a few rows (batched decode of 1-4 sequences: x86's stream_rows, which reads each
// weight block once for all the rows) gives each row the bits that row gets in a call of more
// rows (whole row tiles), over several column groups with 0-3 panels left over, a partial last
// panel and a K long enough that the weight prefetch runs ahead within each panel: a
// sequence's product does not depend on how many others share its decode step. Instantiated
// over the GEMMs.
class FewRowsTest : public KernelTest {};

TEST_P(FewRowsTest, RowsKeepTheirBitsInAnyBatch) {
  const Ukernel& u = *GetParam();
  const TileParams p = kernel_params(u);
  const size_t k = (block_len(u.type) == kSuperBlock ? 12 : 24) * std::max<size_t>(32, block_len(u.type));
  const size_t big = std::max<size_t>(p.mr + 1, 5);
  // Under an emulator (QMM_TEST_SHAPES=small) the middle case only, which has the others' traits:
  // the three made the K-quant SME2 GEMMs take 2-3 minutes each under qemu at SVL 256.
  const std::vector<size_t> ns = test::emulated() ? std::vector<size_t>{11 * p.nr + 5} : std::vector<size_t>{6 * p.nr, 11 * p.nr + 5, 13 * p.nr - 1};
  for (size_t n : ns) {
    const Problem prob(u.type, big, n, k, 41 + n, &u);
    const std::vector<float> all = prob.run(u, big, n, -INFINITY, INFINITY);
    prob.check(all, big, n, -INFINITY, INFINITY, "n " + std::to_string(n) + " m " + std::to_string(big));
    for (size_t m = 1; m <= 4; ++m) {
      const std::vector<float> few = prob.run(u, m, n, -INFINITY, INFINITY);
      ASSERT_EQ(0, std::memcmp(all.data(), few.data(), m * n * 4)) << "n " << n << ": " << m << " rows against " << big;
      const std::vector<float> tiled = prob.run(u, m, n, -INFINITY, INFINITY, 0, p.n_step);
      ASSERT_EQ(0, std::memcmp(few.data(), tiled.data(), m * n * 4)) << "n " << n << ", " << m << " rows in n_step tiles";
    }
  }
}

std::vector<const Ukernel*> gemm_kernels() {
  std::vector<const Ukernel*> out;
  for (const Ukernel* u : kernel_list()) {
    if (!u->gemv) out.push_back(u);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(KernelList, FewRowsTest, ::testing::ValuesIn(gemm_kernels()), kernel_name);

// A GEMV that reads the packed weights of an earlier GEMV of its ISA (the tuner's candidates:
// the ymm GEMVs over the zmm kernels' 16-column panels) gives that GEMV's bits, whole and in
// n_step tiles: choosing it changes speed, never output. (GEMVs of other ISAs over one layout,
// AVX2 and AVX-VNNI, may differ in the last bits within the reference tolerance.) Instantiated
// over those pairs only (a later GEMV and the first of its ISA and packed layout).
struct GemvTwins {
  const Ukernel* gemv;   // the later one
  const Ukernel* first;  // the first GEMV of its ISA and packed layout
};

std::vector<GemvTwins> gemv_twins() {
  std::vector<GemvTwins> out;
  for (const Ukernel* u : kernel_list()) {
    if (!u->gemv || !is_block_type(u->type)) continue;
    const Ukernel* first = nullptr;
    for (const Ukernel* v : kernel_list()) {
      if (!first && v->gemv && v->isa == u->isa && shares_packed_rhs(*v, *u)) first = v;
    }
    if (first != u) out.push_back({u, first});
  }
  return out;
}

class GemvTwinTest : public ::testing::TestWithParam<GemvTwins> {};

TEST_P(GemvTwinTest, GiveTheSameBits) {
  const Ukernel& u = *GetParam().gemv;
  const Ukernel& first = *GetParam().first;
  for (const Ukernel* k : {&u, &first}) {
    if (auto why = test::why_unavailable(*k); !why.empty()) GTEST_SKIP() << k->name << ": " << why;
  }
  const TileParams p = kernel_params(u);
  const size_t k = 3 * std::max<size_t>(32, block_len(u.type));
  for (size_t n : {size_t{1}, p.nr / 2 + 1, p.nr + 3, 2 * p.nr, 5 * p.nr + 7}) {
    const Problem prob(u.type, 1, n, k, 11 + n);
    const std::vector<float> want = prob.run(first, 1, n, -INFINITY, INFINITY);
    for (size_t tn : {n, p.n_step}) {
      const std::vector<float> got = prob.run(u, 1, n, -INFINITY, INFINITY, 1, tn);
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), n * 4)) << "n " << n << " tiles of " << tn << " vs " << first.name;
    }
  }
}

// The pairs exist on x86 (zmm / ymm GEMVs); an Arm build may have none.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GemvTwinTest);
std::string twin_name(const ::testing::TestParamInfo<GemvTwins>& p) { return p.param.gemv->name; }
INSTANTIATE_TEST_SUITE_P(KernelList, GemvTwinTest, ::testing::ValuesIn(gemv_twins()), twin_name);

// The K-quant GEMVs' own steps (kernels/x86/x86_kgemv.h) at the ends of their
// ranges, where the random weights above rarely go: every Q6_K level 63 or 0 under scales
// −128 / 127, Q4_K levels 15 / 0 under scales and mins 63, random bytes (any byte is a valid
// level or scale), and activations that quantize to ±127 in whole blocks (the Q6_K zero points
// at their largest, −32·16·127) or alternate in sign. The products these steps keep exact
// (|S − Z|·sc < 2^23, Σ·sc < 2^22) are at their largest here. Every GEMV of the type that runs
// here, against the scalar GEMM; 37 columns (two panels and a partial one), k = 1024.
TEST(KQuantGemvs, ExtremeLevelsScalesAndActivations) {
  const size_t n = 37, k = 1024, sb = k / 256;
  std::vector<float> a(k);
  for (size_t c = 0; c < k; ++c) {
    const size_t b = c / 32;
    a[c] = b % 3 == 0 ? 1.0f : b % 3 == 1 ? -1.0f : (c % 2 ? 0.75f : -1.0f);
  }
  size_t ran = 0;
  for (WeightType type : {WeightType::q6_k, WeightType::q4_k}) {
    std::vector<uint8_t> rows = test::random_weights(type, n, k, 77);  // rows 3.. stay random
    const size_t bytes = type == WeightType::q6_k ? sizeof(BlockQ6_K) : sizeof(BlockQ4_K);
    for (size_t j = 0; j < 3; ++j) {
      for (size_t b = 0; b < sb; ++b) {
        uint8_t* blk = rows.data() + (j * sb + b) * bytes;
        if (j == 2) {  // random bytes everywhere but d / dmin (finite)
          for (size_t i = 0; i < bytes; ++i) blk[i] = static_cast<uint8_t>((i * 131 + b * 71 + 17) * 2654435761u >> 13);
        }
        if (type == WeightType::q6_k) {
          auto* q = reinterpret_cast<BlockQ6_K*>(blk);
          if (j < 2) {
            std::memset(q->ql, j == 0 ? 0xff : 0x00, sizeof(q->ql) + sizeof(q->qh));
            for (size_t t = 0; t < 16; ++t) q->scales[t] = static_cast<int8_t>(j == 0 || t % 2 ? -128 : 127);
          }
          q->d = fp32_to_fp16(0.01f);
        } else {
          auto* q = reinterpret_cast<BlockQ4_K*>(blk);
          if (j < 2) {
            std::memset(q->qs, j == 0 ? 0xff : 0x00, sizeof(q->qs));
            std::memset(q->scales, 0xff, sizeof(q->scales));  // every 6-bit scale and min 63
          }
          q->d = fp32_to_fp16(0.01f);
          q->dmin = fp32_to_fp16(0.02f);
        }
      }
    }
    const Problem prob(type, 1, n, k, a, rows);
    for (const Ukernel* u : kernel_list()) {
      if (!u->gemv || u->type != type || !test::why_unavailable(*u).empty()) continue;
      prob.check(prob.run(*u, 1, n, -INFINITY, INFINITY), 1, n, -INFINITY, INFINITY, u->name);
      ++ran;
    }
  }
  if (ran == 0) GTEST_SKIP() << "no Q4_K / Q6_K GEMV runs here";
}

// Quantization error of the whole path against the unquantized F32 product stays within a
// stated bound: |y_q − y| ≤ 0.01·S (Q8_0 weights) and 0.08·S (Q4_0), S = Σ|a|·|w|, for the
// kernel this CPU selects.
TEST(QuantizationError, BoundedAgainstF32Product) {
  const size_t m = 7, n = 33, k = 256;
  for (auto [type, bound] : {std::pair{WeightType::q8_0, 0.01}, std::pair{WeightType::q4_0, 0.08}}) {
    const KernelPair pair = select_kernels(type, KernelFilter{}, cpu_info());
    std::vector<float> w;
    const std::vector<uint8_t> rows = test::random_weights(type, n, k, 3, &w);
    const std::vector<float> a = test::random_floats(m * k, 4);
    const Ukernel& u = *pair.gemm;
    const TileParams p = kernel_params(u);
    AlignedBuffer lp(lhs_packed_size(u, p, m, k)), rp(rhs_packed_size(u, p, n, k));
    u.lhs->run(m, k, p.mr, p.kr, p.sr, a.data(), k * 4, lp.data());
    u.rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), rp.data());
    std::vector<float> dst(m * n);
    u.run(m, n, k, lp.data(), rp.data(), dst.data(), n * 4, -INFINITY, INFINITY);
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double y = 0, s = 0;
        for (size_t c = 0; c < k; ++c) {
          y += static_cast<double>(a[i * k + c]) * w[j * k + c];
          s += std::fabs(a[i * k + c] * w[j * k + c]);
        }
        ASSERT_LE(std::fabs(dst[i * n + j] - y), bound * s) << type_name(type) << " (" << i << ", " << j << ")";
      }
    }
  }
}

// A GEMM that shares its packed RHS with another ISA's GEMM of the same integer sums and the
// same epilogue gives the same bits (the AMX GEMMs and the AVX-512 VNNI ones): the tuner or
// the CPU may pick either without changing a model's output.
TEST(KernelTwins, AmxGemmsAreTheAvx512VnniBits) {
  size_t compared = 0;
  for (const Ukernel* u : kernel_list()) {
    if (u->isa != Isa::amx) continue;
    if (auto why = test::why_unavailable(*u); !why.empty()) GTEST_SKIP() << u->name << ": " << why;
    const Ukernel* twin = nullptr;
    for (const Ukernel* v : kernel_list()) {
      if (v->isa == Isa::avx512vnni && !v->gemv && v->type == u->type && shares_packed_rhs(*u, *v)) twin = v;
    }
    ASSERT_NE(twin, nullptr) << u->name << " has no AVX-512 VNNI twin";
    for (auto [m, n, kb] : {std::array<size_t, 3>{2, 16, 1}, {17, 33, 3}, {64, 48, 128}, {129, 257, 5}}) {
      const size_t k = kb * block_len(u->type);  // 32-blocks or super-blocks
      const Problem prob(u->type, m, n, k, 7 + m);
      const std::vector<float> a = prob.run(*u, m, n, -INFINITY, INFINITY), b = prob.run(*twin, m, n, -INFINITY, INFINITY);
      ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << u->name << " vs " << twin->name << " at " << m
                                                                               << "x" << n << "x" << k;
      ++compared;
    }
  }
  if (compared == 0) GTEST_SKIP() << "no AMX kernel in this build";
}

// Where AMX is granted, every weight type with an AMX GEMM selects it for prefill, and the
// AVX-512 VNNI GEMV that reads its packed weights for decode (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K);
// where AMX-BF16 is granted too and its GEMM comes first, the AMX GEMM serves the rows below it.
TEST(KernelTwins, AmxCpusSelectTheAmxGemmsAndVnniGemvs) {
  size_t types = 0;
  for (const Ukernel* u : kernel_list()) {
    if (u->isa != Isa::amx) continue;
    if (auto why = test::why_unavailable(*u); !why.empty()) GTEST_SKIP() << u->name << ": " << why;
    const KernelPair pair = select_kernels(u->type, KernelFilter{}, cpu_info());
    EXPECT_EQ(pair.gemm->isa == Isa::amxbf16 ? pair.few[0].gemm : pair.gemm, u) << type_name(u->type);
    ASSERT_NE(pair.gemv, nullptr);
    EXPECT_EQ(pair.gemv->isa, Isa::avx512vnni) << type_name(u->type) << ": " << pair.gemv->name;
    EXPECT_TRUE(pair.gemv->gemv && shares_packed_rhs(*pair.gemv, *u)) << pair.gemv->name;
    ++types;
  }
  if (types == 0) GTEST_SKIP() << "no AMX kernel in this build";
  EXPECT_EQ(types, 5u);  // Q4_0, Q8_0, Q4_K, Q5_K, Q6_K
}

}  // namespace
}  // namespace qmm
