// The C API: a full round trip, the microkernel-level calls, and every misuse reported as an
// error code plus a message (never an abort).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "qmm/qmm.h"
#include "test_util.h"

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

}  // namespace
