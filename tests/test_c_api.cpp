// The C API: a full round trip, the microkernel-level calls, and every misuse reported as an
// error code plus a message (never an abort).
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "core/buffer.h"
#include "matmul/matmul.h"

#include "qmm/qmm.h"
#include "test_util.h"

extern "C" qmm_status qmm_test_c_pack_bad_type(void);  // test_c_header.c

namespace {

std::string last() { return qmm_last_error(); }

TEST(CApi, PackAndMatmul) {
  const size_t n = 40, k = 64, m = 3;
  const std::vector<uint8_t> rows = qmm::test::random_weights(qmm::WeightType::q4_0, n, k, 1);
  qmm_weights* w = nullptr;
  ASSERT_EQ(qmm_weights_pack(QMM_TYPE_Q4_0, n, k, rows.data(), nullptr, &w), QMM_OK) << last();
  EXPECT_NE(qmm_weights_kernel(w, 0), nullptr);
  EXPECT_NE(qmm_weights_kernel(w, 1), nullptr);
  EXPECT_GT(qmm_weights_packed_bytes(w), 0u);
  qmm_context* c = nullptr;
  ASSERT_EQ(qmm_context_create(2, &c), QMM_OK);
  const std::vector<float> x = qmm::test::random_floats(m * k, 2);
  std::vector<float> y(m * n), y1(m * n);
  ASSERT_EQ(qmm_matmul(w, m, x.data(), k * 4, y.data(), n * 4, -INFINITY, INFINITY, c), QMM_OK) << last();
  ASSERT_EQ(qmm_matmul(w, m, x.data(), k * 4, y1.data(), n * 4, -INFINITY, INFINITY, nullptr), QMM_OK) << last();
  EXPECT_EQ(0, std::memcmp(y.data(), y1.data(), y.size() * 4));
  qmm_pack_options opt{"scalar", nullptr, c};
  qmm_weights* ws = nullptr;
  ASSERT_EQ(qmm_weights_pack(QMM_TYPE_Q4_0, n, k, rows.data(), &opt, &ws), QMM_OK) << last();
  EXPECT_NE(std::string(qmm_weights_kernel(ws, 0)).find("scalar"), std::string::npos);
  qmm_weights_free(ws);
  qmm_weights_free(w);
  qmm_context_free(c);
  EXPECT_NE(std::string(qmm_version()), "");
  EXPECT_NE(std::string(qmm_cpu_info()), "");
}

// qmm_weights_pack_f32: per-channel QC8 / QC4 from F32 weights and a bias, any k; the result
// within the stated bound of the F32 product + bias: 0.02·S (QC8), 0.15·S (QC4), S = Σ|x|·|w|.
TEST(CApi, PackF32PerChannel) {
  const size_t n = 21, k = 45, m = 4;
  const std::vector<float> wf = qmm::test::random_floats(n * k, 5), x = qmm::test::random_floats(m * k, 6);
  std::vector<float> bias(n);
  for (size_t j = 0; j < n; ++j) bias[j] = 0.25f * static_cast<float>(j);
  for (auto [type, bound] : {std::pair{QMM_TYPE_QC8, 0.02}, std::pair{QMM_TYPE_QC4, 0.15}}) {
    qmm_weights* w = nullptr;
    ASSERT_EQ(qmm_weights_pack_f32(type, n, k, wf.data(), bias.data(), nullptr, &w), QMM_OK) << last();
    for (size_t rows : {m, size_t{1}}) {
      std::vector<float> y(rows * n);
      ASSERT_EQ(qmm_matmul(w, rows, x.data(), k * 4, y.data(), n * 4, -INFINITY, 4.0f, nullptr), QMM_OK) << last();
      for (size_t i = 0; i < rows; ++i) {
        for (size_t j = 0; j < n; ++j) {
          double ref = bias[j], s = 0;
          for (size_t c = 0; c < k; ++c) {
            ref += static_cast<double>(x[i * k + c]) * wf[j * k + c];
            s += std::fabs(static_cast<double>(x[i * k + c]) * wf[j * k + c]);
          }
          ASSERT_LE(std::fabs(y[i * n + j] - std::min(ref, 4.0)), bound * s + 1e-6) << type << " (" << i << ", " << j << ")";
        }
      }
    }
    qmm_weights_free(w);
  }
  qmm_weights* w = nullptr;
  EXPECT_EQ(qmm_weights_pack_f32(QMM_TYPE_QC8, n, k, wf.data(), nullptr, nullptr, &w), QMM_OK) << last();  // no bias
  qmm_weights_free(w);
  EXPECT_EQ(qmm_weights_pack_f32(QMM_TYPE_Q4_0, n, 64, wf.data(), nullptr, nullptr, &w), QMM_ERR_UNSUPPORTED);
  EXPECT_EQ(last(), "qmm_weights_pack_f32 takes QMM_TYPE_QC8 or QMM_TYPE_QC4, not q4_0");
  EXPECT_EQ(qmm_weights_pack_f32(77, n, k, wf.data(), nullptr, nullptr, &w), QMM_ERR_UNSUPPORTED);
  EXPECT_EQ(qmm_weights_pack_f32(QMM_TYPE_QC4, n, k, nullptr, nullptr, nullptr, &w), QMM_ERR_INVALID_ARGUMENT);
  // Misaligned floats (as qmm_matmul refuses them): an error, not undefined behaviour.
  const float* odd = reinterpret_cast<const float*>(reinterpret_cast<const char*>(wf.data()) + 1);
  EXPECT_EQ(qmm_weights_pack_f32(QMM_TYPE_QC8, 1, 32, odd, nullptr, nullptr, &w), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "qmm_weights_pack_f32: weights and bias must be aligned to 4 bytes");
  EXPECT_EQ(qmm_weights_pack_f32(QMM_TYPE_QC8, 1, 32, wf.data(), odd, nullptr, &w), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_weights_pack_f32(QMM_TYPE_QC4, 0, k, wf.data(), nullptr, nullptr, &w), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_weights_pack_f32(QMM_TYPE_QC4, SIZE_MAX / 2, SIZE_MAX / 2, wf.data(), nullptr, nullptr, &w),
            QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_weights_pack_f32(QMM_TYPE_QC4, n, k, wf.data(), nullptr, nullptr, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(w, nullptr);
}

TEST(CApi, MisuseIsReported) {
  const std::vector<uint8_t> rows(4096);
  qmm_weights* w = nullptr;
  EXPECT_EQ(qmm_weights_pack(QMM_TYPE_Q4_0, 4, 48, rows.data(), nullptr, &w), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("multiple of 32"), std::string::npos) << last();
  EXPECT_EQ(w, nullptr);
  EXPECT_EQ(qmm_weights_pack(QMM_TYPE_Q4_0, 4, 64, nullptr, nullptr, &w), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_weights_pack(QMM_TYPE_Q4_0, 4, 64, rows.data(), nullptr, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_weights_pack(QMM_TYPE_Q4_0, 0, 64, rows.data(), nullptr, &w), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_weights_pack(static_cast<qmm_type>(77), 4, 64, rows.data(), nullptr, &w), QMM_ERR_UNSUPPORTED);
  EXPECT_NE(last().find("unknown weight type"), std::string::npos) << last();
  EXPECT_EQ(qmm_weights_pack(QMM_TYPE_F32, SIZE_MAX / 2, SIZE_MAX / 2, rows.data(), nullptr, &w),
            QMM_ERR_INVALID_ARGUMENT);
  qmm_pack_options bad{"nonsense", nullptr, nullptr};
  EXPECT_EQ(qmm_weights_pack(QMM_TYPE_Q8_0, 4, 64, rows.data(), &bad, &w), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("did you mean"), std::string::npos) << last();
  // Another architecture's ISA is no error: one option string serves every machine.
  qmm_pack_options other_arch{nullptr, "sme2,avx512vnni", nullptr};
  EXPECT_EQ(qmm_weights_pack(QMM_TYPE_Q8_0, 4, 64, rows.data(), &other_arch, &w), QMM_OK) << last();
  qmm_weights_free(w);
  w = nullptr;

  ASSERT_EQ(qmm_weights_pack(QMM_TYPE_Q8_0, 4, 64, rows.data(), nullptr, &w), QMM_OK) << last();
  std::vector<float> x(64 * 2), y(8);
  EXPECT_EQ(qmm_matmul(nullptr, 1, x.data(), 256, y.data(), 16, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_matmul(w, 0, x.data(), 256, y.data(), 16, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_matmul(w, 1, nullptr, 256, y.data(), 16, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_matmul(w, 1, x.data(), 100, y.data(), 16, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_matmul(w, 1, x.data(), 256, y.data(), 8, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_matmul(w, 1, x.data(), 256, y.data(), 16, 2, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_matmul(w, SIZE_MAX / 8, x.data(), 256, y.data(), 16, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  qmm_weights_free(w);
  qmm_weights_free(nullptr);
  EXPECT_EQ(qmm_weights_kernel(nullptr, 0), nullptr);

  qmm_context* c = nullptr;
  EXPECT_EQ(qmm_context_create(0, &c), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_context_create(2, nullptr), QMM_ERR_INVALID_ARGUMENT);
  qmm_context_free(nullptr);
}

TEST(CApi, MicrokernelLevel) {
  const size_t count = qmm_ukernel_count();
  ASSERT_GT(count, 0u);
  qmm_ukernel_info info;
  EXPECT_EQ(qmm_ukernel_get(count, &info), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_ukernel_get(0, nullptr), QMM_ERR_INVALID_ARGUMENT);
  size_t idx = 0;
  EXPECT_EQ(qmm_ukernel_find("no_such_kernel", &idx), QMM_ERR_INVALID_ARGUMENT);
  // A name KleidiAI gives to another layout is refused with qmm's new name, on every architecture.
  EXPECT_EQ(qmm_ukernel_find("matmul_clamp_f32_qsi8d32p1x4_qsi4c32p8x4_1x8_scalar", &idx), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qmm_last_error()).find("qsi8d32p1x4s2_qsi4c32p8x4s2_1x8_scalar"), std::string::npos);
  EXPECT_EQ(qmm_ukernel_lhs_packed_size(count, 1, 32), 0u);
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(qmm_ukernel_get(i, &info), QMM_OK);
    ASSERT_EQ(qmm_ukernel_find(info.name, &idx), QMM_OK);
    EXPECT_EQ(idx, i);
    if (!info.available) {
      EXPECT_EQ(qmm_ukernel_run(i, 1, 1, 32, &info, &info, nullptr, 4, 0, 1), QMM_ERR_UNSUPPORTED);
      continue;
    }
    // A whole matmul through the microkernel calls equals the scalar path within tolerance.
    const size_t m = info.is_gemv ? 1 : 3, n = info.nr + 1;
    const size_t k = std::max<size_t>(64, qmm::block_len(static_cast<qmm::WeightType>(info.type)));
    const std::vector<uint8_t> rows = qmm::test::random_weights(static_cast<qmm::WeightType>(info.type), n, k, i);
    const std::vector<float> x = qmm::test::random_floats(m * k, i + 1);
    std::vector<uint8_t> lp(qmm_ukernel_lhs_packed_size(i, m, k)), rp(qmm_ukernel_rhs_packed_size(i, n, k));
    ASSERT_EQ(qmm_ukernel_pack_lhs(i, m, k, x.data(), k * 4, lp.data()), QMM_OK) << last();
    ASSERT_EQ(qmm_ukernel_pack_rhs(i, n, k, rows.data(), rp.data()), QMM_OK) << last();
    std::vector<float> y(m * n);
    ASSERT_EQ(qmm_ukernel_run(i, m, n, k, lp.data(), rp.data(), y.data(), n * 4, -INFINITY, INFINITY), QMM_OK);
    for (float v : y) EXPECT_TRUE(std::isfinite(v)) << info.name;
    EXPECT_EQ(qmm_ukernel_run(i, m, n, 48, lp.data(), rp.data(), y.data(), n * 4, 0, 1),
              qmm::is_block_type(static_cast<qmm::WeightType>(info.type)) ? QMM_ERR_INVALID_ARGUMENT : QMM_OK);
    if (info.is_gemv) {
      EXPECT_EQ(qmm_ukernel_run(i, 2, n, k, lp.data(), rp.data(), y.data(), n * 4, 0, 1), QMM_ERR_INVALID_ARGUMENT);
    }
    EXPECT_EQ(qmm_ukernel_run(i, m, n, k, nullptr, rp.data(), y.data(), n * 4, 0, 1), QMM_ERR_INVALID_ARGUMENT);
  }
}

// ---- The misuse suite (runs under ASan + UBSan in the sanitize stage): every case is an
// error code plus a message, never a crash, a hang, undefined behaviour or a write. ----

// Sizes that overflow size_t anywhere in the packed-size arithmetic are invalid arguments.
TEST(CApiMisuse, OverflowingSizes) {
  const std::vector<uint8_t> rows(4096);
  qmm_weights* w = nullptr;
  for (int t : {QMM_TYPE_F32, QMM_TYPE_F16, QMM_TYPE_Q4_0, QMM_TYPE_Q8_0}) {
    EXPECT_EQ(qmm_weights_pack(t, size_t{1} << 31, size_t{1} << 31, rows.data(), nullptr, &w), QMM_ERR_INVALID_ARGUMENT) << t;
    EXPECT_NE(last().find("too large"), std::string::npos) << last();
    EXPECT_EQ(qmm_weights_pack(t, size_t{1} << 32, 32, rows.data(), nullptr, &w), QMM_ERR_INVALID_ARGUMENT) << t;
    EXPECT_EQ(qmm_weights_pack(t, 32, SIZE_MAX - 31, rows.data(), nullptr, &w), QMM_ERR_INVALID_ARGUMENT) << t;
    EXPECT_EQ(w, nullptr);
  }
  const size_t huge[][2] = {{SIZE_MAX, 32}, {32, SIZE_MAX - 31}, {size_t{1} << 31, size_t{1} << 31},
                            {SIZE_MAX / 34 + 1, 32}, {0, 32}, {1, 0}};
  std::vector<float> x(64);
  std::vector<uint8_t> buf(4096);
  float y[64];
  for (size_t i = 0; i < qmm_ukernel_count(); ++i) {
    qmm_ukernel_info info;
    ASSERT_EQ(qmm_ukernel_get(i, &info), QMM_OK);
    if (!info.available) continue;
    for (const auto& s : huge) {
      EXPECT_EQ(qmm_ukernel_lhs_packed_size(i, s[0], s[1]), 0u) << info.name << " m=" << s[0] << " k=" << s[1];
      EXPECT_NE(last(), "");
      EXPECT_EQ(qmm_ukernel_rhs_packed_size(i, s[0], s[1]), 0u) << info.name << " n=" << s[0] << " k=" << s[1];
      EXPECT_NE(last(), "");
      EXPECT_EQ(qmm_ukernel_pack_lhs(i, s[0], s[1], x.data(), 256, buf.data()), QMM_ERR_INVALID_ARGUMENT) << info.name;
      EXPECT_EQ(qmm_ukernel_pack_rhs(i, s[0], s[1], buf.data(), buf.data()), QMM_ERR_INVALID_ARGUMENT) << info.name;
      EXPECT_EQ(qmm_ukernel_run(i, 1, s[0], s[1], buf.data(), buf.data(), y, 256, 0, 1), QMM_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(qmm_ukernel_run(i, s[0], 1, s[1], buf.data(), buf.data(), y, 256, 0, 1), QMM_ERR_INVALID_ARGUMENT);
    }
    EXPECT_EQ(qmm_ukernel_lhs_packed_offset(i, SIZE_MAX - 63, 64), 0u) << info.name;
    EXPECT_NE(last(), "");
    EXPECT_EQ(qmm_ukernel_rhs_packed_offset(i, SIZE_MAX - 63, 64), 0u) << info.name;
    EXPECT_EQ(qmm_ukernel_rhs_packed_offset(i, size_t{1} << 31, size_t{1} << 31), 0u) << info.name;
    EXPECT_EQ(qmm_ukernel_lhs_packed_offset(i, 0, 0), 0u) << info.name;  // k = 0
    const size_t kv = std::max<size_t>(64, qmm::block_len(static_cast<qmm::WeightType>(info.type)));
    EXPECT_EQ(qmm_ukernel_lhs_packed_offset(i, 0, kv), 0u);               // valid: the first panel
    EXPECT_EQ(last(), "");
    EXPECT_GT(qmm_ukernel_rhs_packed_size(i, 1, kv), 0u);
  }
  // m x stride that overflows, and m beyond the limit.
  ASSERT_EQ(qmm_weights_pack(QMM_TYPE_Q8_0, 4, 64, buf.data(), nullptr, &w), QMM_OK) << last();
  EXPECT_EQ(qmm_matmul(w, SIZE_MAX / 256 + 1, x.data(), 256, y, 16, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_matmul(w, (size_t{1} << 31) + 1, x.data(), 256, y, 16, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  qmm_weights_free(w);
  qmm::AlignedBuffer b;
  EXPECT_THROW(b.resize(SIZE_MAX - 1), std::bad_alloc);  // its rounding must not wrap
}

// QC8 / QC4 sum in int32, exact only for k <= 2^16 (core/channels.h): larger k is refused with
// a clear error at every entry point, and k = 2^16 itself works.
TEST(CApiMisuse, ChannelTypesRefuseKBeyondExactSums) {
  const size_t kmax = size_t{1} << 16;
  std::vector<float> wf(kmax + 1, 0.5f), x(kmax + 1, 1.0f);
  qmm_weights* w = nullptr;
  for (int t : {QMM_TYPE_QC8, QMM_TYPE_QC4}) {
    EXPECT_EQ(qmm_weights_pack_f32(t, 1, kmax + 1, wf.data(), nullptr, nullptr, &w), QMM_ERR_INVALID_ARGUMENT) << t;
    EXPECT_NE(last().find("needs k <= 65536"), std::string::npos) << last();
    EXPECT_EQ(w, nullptr);
    std::vector<uint8_t> rows(8 + kmax + 1);
    EXPECT_EQ(qmm_weights_pack(t, 1, kmax + 1, rows.data(), nullptr, &w), QMM_ERR_INVALID_ARGUMENT) << t;
    EXPECT_NE(last().find("needs k <= 65536"), std::string::npos) << last();
    ASSERT_EQ(qmm_weights_pack_f32(t, 1, kmax, wf.data(), nullptr, nullptr, &w), QMM_OK) << last();
    float y = 0;
    ASSERT_EQ(qmm_matmul(w, 1, x.data(), kmax * 4, &y, 4, -INFINITY, INFINITY, nullptr), QMM_OK) << last();
    EXPECT_NEAR(y, 0.5f * kmax, 0.01f * kmax) << t;  // exact sums: no int32 wrap-around
    qmm_weights_free(w);
    w = nullptr;
  }
  for (size_t i = 0; i < qmm_ukernel_count(); ++i) {
    qmm_ukernel_info info;
    ASSERT_EQ(qmm_ukernel_get(i, &info), QMM_OK);
    // Kernels this CPU cannot run are refused before the shape is looked at.
    if ((info.type != QMM_TYPE_QC8 && info.type != QMM_TYPE_QC4) || !info.available) continue;
    EXPECT_EQ(qmm_ukernel_rhs_packed_size(i, 8, kmax + 1), 0u) << info.name;
    EXPECT_NE(last().find("needs k <= 65536"), std::string::npos) << last();
    EXPECT_EQ(qmm_ukernel_lhs_packed_size(i, 1, kmax + 1), 0u) << info.name;
    EXPECT_GT(qmm_ukernel_rhs_packed_size(i, 8, kmax), 0u) << info.name;
  }
}

// Null pointers, zero sizes, bad strides and misaligned pointers, bad clamps: errors.
TEST(CApiMisuse, PointersStridesAndClamps) {
  const std::vector<uint8_t> rows(4096);
  qmm_weights* w = nullptr;
  ASSERT_EQ(qmm_weights_pack(QMM_TYPE_Q8_0, 4, 64, rows.data(), nullptr, &w), QMM_OK) << last();
  alignas(16) float x[2 * 64 + 4] = {}, y[16] = {};
  const auto* misaligned = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(x) + 2);
  EXPECT_EQ(qmm_matmul(w, 1, x, 256, nullptr, 16, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_matmul(w, 2, x, 258, y, 16, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("multiples of 4"), std::string::npos) << last();
  EXPECT_EQ(qmm_matmul(w, 2, x, 256, y, 18, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qmm_matmul(w, 1, misaligned, 256, y, 16, 0, 1, nullptr), QMM_ERR_INVALID_ARGUMENT);
  const float nan = NAN;
  for (auto [lo, hi] : {std::pair{nan, 1.0f}, std::pair{0.0f, nan}, std::pair{nan, nan}, std::pair{2.0f, 1.0f},
                        std::pair{INFINITY, -INFINITY}}) {
    EXPECT_EQ(qmm_matmul(w, 1, x, 256, y, 16, lo, hi, nullptr), QMM_ERR_INVALID_ARGUMENT) << lo << " " << hi;
    EXPECT_NE(last().find("clamp"), std::string::npos) << last();
  }
  EXPECT_EQ(qmm_matmul(w, 1, x, 256, y, 16, 1.0f, 1.0f, nullptr), QMM_OK) << last();  // min == max is fine
  for (float v : {y[0], y[3]}) EXPECT_EQ(v, 1.0f);
  qmm_weights_free(w);
  EXPECT_EQ(qmm_weights_packed_bytes(nullptr), 0u);

  for (size_t i = 0; i < qmm_ukernel_count(); ++i) {
    qmm_ukernel_info info;
    ASSERT_EQ(qmm_ukernel_get(i, &info), QMM_OK);
    // The buffers above hold k = 64; the checks do not depend on the type (K-quants need 256).
    if (!info.available || qmm::block_len(static_cast<qmm::WeightType>(info.type)) > 64) continue;
    const size_t n = info.nr, k = 64;
    std::vector<uint8_t> lp(qmm_ukernel_lhs_packed_size(i, 1, k)), rp(qmm_ukernel_rhs_packed_size(i, n, k));
    std::vector<float> out(n);
    EXPECT_EQ(qmm_ukernel_pack_lhs(i, 1, k, nullptr, 256, lp.data()), QMM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(qmm_ukernel_pack_lhs(i, 1, k, x, 256, nullptr), QMM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(qmm_ukernel_pack_lhs(i, 1, k, x, 200, lp.data()), QMM_ERR_INVALID_ARGUMENT);   // < k floats
    EXPECT_EQ(qmm_ukernel_pack_lhs(i, 2, k, x, 258, lp.data()), QMM_ERR_INVALID_ARGUMENT);   // not a float stride
    EXPECT_EQ(qmm_ukernel_pack_lhs(i, 1, k, misaligned, 256, lp.data()), QMM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(qmm_ukernel_pack_rhs(i, n, k, nullptr, rp.data()), QMM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(qmm_ukernel_pack_rhs(i, n, k, rows.data(), nullptr), QMM_ERR_INVALID_ARGUMENT);
    ASSERT_EQ(qmm_ukernel_pack_lhs(i, 1, k, x, 256, lp.data()), QMM_OK) << last();
    ASSERT_EQ(qmm_ukernel_pack_rhs(i, n, k, rows.data(), rp.data()), QMM_OK) << last();
    for (auto [lo, hi] : {std::pair{nan, 1.0f}, std::pair{0.0f, nan}, std::pair{2.0f, 1.0f}}) {
      EXPECT_EQ(qmm_ukernel_run(i, 1, n, k, lp.data(), rp.data(), out.data(), n * 4, lo, hi), QMM_ERR_INVALID_ARGUMENT)
          << info.name << " clamp " << lo << " " << hi;
    }
    EXPECT_EQ(qmm_ukernel_run(i, 1, n, k, lp.data(), rp.data(), out.data(), n * 4 + 2, 0, 1), QMM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(qmm_ukernel_run(i, 1, n, k, lp.data(), rp.data(), nullptr, n * 4, 0, 1), QMM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(qmm_ukernel_run(i, 1, 0, k, lp.data(), rp.data(), out.data(), n * 4, 0, 1), QMM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(qmm_ukernel_run(i, 0, n, k, lp.data(), rp.data(), out.data(), n * 4, 0, 1), QMM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(qmm_ukernel_run(i, 1, n, k, lp.data(), rp.data(), out.data(), n * 4, 0, 1), QMM_OK) << last();
  }
  EXPECT_EQ(qmm_ukernel_find(nullptr, nullptr), QMM_ERR_INVALID_ARGUMENT);
}

// qmm_ukernel_run checks a valid call with a per-kernel table of limits (no message built) and
// only a failing one with the checks that say why: every limit of that table is an error with a
// message, right at its edge, never a kernel run, on every kernel this CPU runs.
TEST(CApiMisuse, PerTileChecksHoldEveryLimit) {
  for (size_t i = 0; i < qmm_ukernel_count(); ++i) {
    qmm_ukernel_info info;
    ASSERT_EQ(qmm_ukernel_get(i, &info), QMM_OK);
    if (!info.available) continue;
    const auto type = static_cast<qmm::WeightType>(info.type);
    const size_t n = info.nr, k = std::max<size_t>(64, qmm::block_len(type)), m = info.is_gemv ? 1 : 2;
    const std::vector<uint8_t> rows = qmm::test::random_weights(type, n, k, i);
    const std::vector<float> x = qmm::test::random_floats(m * k, i);
    std::vector<uint8_t> lp(qmm_ukernel_lhs_packed_size(i, m, k)), rp(qmm_ukernel_rhs_packed_size(i, n, k));
    ASSERT_EQ(qmm_ukernel_pack_lhs(i, m, k, x.data(), k * 4, lp.data()), QMM_OK) << last();
    ASSERT_EQ(qmm_ukernel_pack_rhs(i, n, k, rows.data(), rp.data()), QMM_OK) << last();
    std::vector<float> out(m * n + 1, -7.0f);
    auto run = [&](size_t mm, size_t nn, size_t kk, float* dst, size_t stride) {
      return qmm_ukernel_run(i, mm, nn, kk, lp.data(), rp.data(), dst, stride, -INFINITY, INFINITY);
    };
    const size_t big = size_t{1} << 31, block = qmm::block_len(type);
    struct Case {
      size_t m, n, k, stride;
      float* dst;
      const char* why;
    };
    const Case bad[] = {
        {big + 1, n, k, n * 4, out.data(), "m beyond 2^31"},
        {m, big + 1, k, big * 8, out.data(), "n beyond 2^31"},
        {m, n, qmm::is_channel_type(type) ? (size_t{1} << 16) + 1 : big + block, n * 4, out.data(), "k beyond its limit"},
        {m, n, block > 1 ? k + block / 2 : 0, n * 4, out.data(), "k not a multiple of the block"},
        {m, big, 1024, big * 8, out.data(), "n x k beyond 2^40"},
        {info.is_gemv ? 2 : big, n, k, info.is_gemv ? n * 4 : size_t{1} << 34, out.data(),
         info.is_gemv ? "a GEMV with m = 2" : "m x dst_stride overflows"},
        {m, n, k, n * 4 - 4, out.data(), "dst_stride below n floats"},
        {m, n, k, n * 4 + 2, out.data(), "dst_stride not a float stride"},
        {m, n, k, n * 4, reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(out.data()) + 2), "dst misaligned"},
    };
    for (const Case& c : bad) {
      EXPECT_EQ(run(c.m, c.n, c.k, c.dst, c.stride), QMM_ERR_INVALID_ARGUMENT) << info.name << ": " << c.why;
      EXPECT_NE(last(), "") << info.name << ": " << c.why;
    }
    EXPECT_EQ(out, std::vector<float>(m * n + 1, -7.0f)) << info.name << ": a refused call wrote its output";
    EXPECT_EQ(qmm_ukernel_run(qmm_ukernel_count(), m, n, k, lp.data(), rp.data(), out.data(), n * 4, 0, 1),
              QMM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last().find("out of range"), std::string::npos) << last();
    ASSERT_EQ(run(m, n, k, out.data(), n * 4), QMM_OK) << info.name << ": " << last();
    EXPECT_EQ(last(), "") << "a valid call clears the last error";
    for (size_t j = 0; j < m * n; ++j) EXPECT_TRUE(std::isfinite(out[j])) << info.name;
  }
}

// Any int is a type: unknown ones are reported (no undefined enum conversion on the way).
TEST(CApiMisuse, UnknownTypes) {
  const std::vector<uint8_t> rows(4096);
  qmm_weights* w = nullptr;
  for (int t : {-1, 3, 7, 9, 77, INT_MIN, INT_MAX}) {
    EXPECT_EQ(qmm_weights_pack(t, 4, 64, rows.data(), nullptr, &w), QMM_ERR_UNSUPPORTED) << t;
    EXPECT_EQ(last(), "unknown weight type " + std::to_string(t));
    EXPECT_EQ(w, nullptr);
  }
  EXPECT_EQ(qmm_weights_pack(static_cast<qmm_type>(-1), 4, 64, rows.data(), nullptr, &w), QMM_ERR_UNSUPPORTED);
  EXPECT_EQ(qmm_test_c_pack_bad_type(), QMM_ERR_UNSUPPORTED);  // from C
}

// Two threads on one context: the second call, made while the first is inside qmm_matmul
// (held there by the trace hook), is an error and leaves the context to the first.
struct Rendezvous {
  std::atomic<int> stage{0};  // 1: the first call is inside; 2: the second call is done
};

void hold_inside(void* user, const qmm::PackedWeights&, size_t, double) {
  auto* r = static_cast<Rendezvous*>(user);
  if (r->stage.load() != 0) return;
  r->stage.store(1);
  while (r->stage.load() != 2) std::this_thread::yield();
}

TEST(CApiMisuse, ConcurrentUseOfOneContext) {
  const size_t n = 64, k = 64, m = 4;
  const std::vector<uint8_t> rows = qmm::test::random_weights(qmm::WeightType::q8_0, n, k, 3);
  const std::vector<float> x = qmm::test::random_floats(m * k, 4);
  qmm_weights* w = nullptr;
  ASSERT_EQ(qmm_weights_pack(QMM_TYPE_Q8_0, n, k, rows.data(), nullptr, &w), QMM_OK) << last();
  std::vector<float> want(m * n), y(m * n), y2(m * n, -1.0f);
  ASSERT_EQ(qmm_matmul(w, m, x.data(), k * 4, want.data(), n * 4, -INFINITY, INFINITY, nullptr), QMM_OK);
  qmm_context* c = nullptr;
  ASSERT_EQ(qmm_context_create(2, &c), QMM_OK);

  Rendezvous r;
  qmm::set_matmul_trace(hold_inside, &r);
  qmm_status first = QMM_ERR_INTERNAL;
  std::thread t([&] { first = qmm_matmul(w, m, x.data(), k * 4, y.data(), n * 4, -INFINITY, INFINITY, c); });
  while (r.stage.load() != 1) std::this_thread::yield();
  const qmm_status second = qmm_matmul(w, m, x.data(), k * 4, y2.data(), n * 4, -INFINITY, INFINITY, c);
  const std::string msg = last();
  qmm_pack_options opt{nullptr, nullptr, c};
  qmm_weights* w2 = nullptr;
  const qmm_status pack = qmm_weights_pack(QMM_TYPE_Q8_0, n, k, rows.data(), &opt, &w2);
  r.stage.store(2);
  t.join();
  qmm::set_matmul_trace(nullptr, nullptr);
  EXPECT_EQ(second, QMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("in use"), std::string::npos) << msg;
  EXPECT_EQ(pack, QMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(w2, nullptr);
  EXPECT_EQ(y2, std::vector<float>(m * n, -1.0f)) << "the refused call wrote its output";
  EXPECT_EQ(first, QMM_OK);
  EXPECT_EQ(y, want);

  // Free-running: every call either succeeds with the right answer or is refused.
  std::atomic<int> ok{0}, refused{0}, wrong{0};
  auto hammer = [&] {
    std::vector<float> out(m * n);
    for (int i = 0; i < 200; ++i) {
      const qmm_status s = qmm_matmul(w, m, x.data(), k * 4, out.data(), n * 4, -INFINITY, INFINITY, c);
      if (s == QMM_OK) {
        ++ok;
        if (out != want) ++wrong;
      } else if (s == QMM_ERR_INVALID_ARGUMENT) {
        ++refused;
      } else {
        ++wrong;
      }
    }
  };
  std::thread a(hammer), b(hammer);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(ok.load() + refused.load(), 400);
  EXPECT_GT(ok.load(), 0);
  qmm_context_free(c);
  qmm_weights_free(w);
}

}  // namespace
