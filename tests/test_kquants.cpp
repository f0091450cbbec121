// Q4_K, Q5_K, Q6_K, IQ4_NL (and the mixes' Q5_0 / Q5_1 fallbacks): the quantizers byte for
// byte against llama.cpp, the dequantizers and the packed layouts against each other, every
// kernel of these types against the product with the dequantized weights.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/buffer.h"
#include "core/kquants.h"
#include "test_util.h"

namespace qmm {
namespace {

constexpr WeightType kTypes[] = {WeightType::q4_k, WeightType::q5_k, WeightType::q6_k, WeightType::iq4_nl};

// Inputs exact in binary32: hashed integers / 256, row r scaled by 2^(r%5 − 2); rows 3 (mod 6)
// all >= 0 (the min-free branch of Q4_K / Q5_K), rows 4 (mod 6) zero.
std::vector<float> known_inputs(size_t n, size_t k) {
  std::vector<float> x(n * k);
  for (size_t r = 0; r < n; ++r) {
    for (size_t c = 0; c < k; ++c) {
      uint32_t h = static_cast<uint32_t>(r * k + c) * 2654435761u;
      h ^= h >> 13;
      h *= 0x5bd1e995u;
      h ^= h >> 15;
      float v = static_cast<float>(static_cast<int>(h % 2001) - 1000) / 256.0f * std::ldexp(1.0f, static_cast<int>(r % 5) - 2);
      if (r % 6 == 3) v = std::fabs(v);
      if (r % 6 == 4) v = 0.0f;
      x[r * k + c] = v;
    }
  }
  return x;
}

uint64_t fnv1a(const std::vector<uint8_t>& b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t v : b) h = (h ^ v) * 0x100000001b3ull;
  return h;
}

// The FNV-1a hashes of llama.cpp's own output on known_inputs(6, 512): ggml_quantize_chunk
// (no importance matrix) of libggml-base.so from the node-llama-cpp 3 npm package (the one
// scripts/llamacpp_check.sh installs), called through Python ctypes on the same inputs.
TEST(KQuants, QuantizersAreByteIdenticalToLlamaCpp) {
  const size_t n = 6, k = 512;
  const std::vector<float> x = known_inputs(n, k);
  const std::pair<WeightType, uint64_t> want[] = {{WeightType::q4_k, 0xb63735b1a59179ddull},
                                                  {WeightType::q5_k, 0x20e6204934411519ull},
                                                  {WeightType::q6_k, 0x048c5d4c0819c596ull},
                                                  {WeightType::iq4_nl, 0x8ff4df0275e1900eull}};
  for (auto [type, hash] : want) {
    std::vector<uint8_t> rows(n * row_bytes(type, k));
    quantize_rows(type, x.data(), rows.data(), n, k);
    EXPECT_EQ(fnv1a(rows), hash) << type_name(type);
  }
  // Q5_0 / Q5_1 (GGML types 6, 7: the mixes' fallbacks, no WeightType), the same way.
  std::vector<uint8_t> q5_0(n * k / kBlock * sizeof(BlockQ5_0)), q5_1(n * k / kBlock * sizeof(BlockQ5_1));
  for (size_t r = 0; r < n; ++r) {
    quantize_row_q5_0(x.data() + r * k, reinterpret_cast<BlockQ5_0*>(q5_0.data()) + r * k / kBlock, k);
    quantize_row_q5_1(x.data() + r * k, reinterpret_cast<BlockQ5_1*>(q5_1.data()) + r * k / kBlock, k);
  }
  EXPECT_EQ(fnv1a(q5_0), 0x389f651af4aec965ull) << "q5_0";
  EXPECT_EQ(fnv1a(q5_1), 0x8a462517c5fb40a8ull) << "q5_1";
}

// Round trip: |dequantize(quantize(x)) − x| within a per-type fraction of each row's max |x|.
TEST(KQuants, RoundTripErrorIsBounded) {
  const size_t n = 12, k = 512;
  const std::vector<float> x = test::random_floats(n * k, 7);
  for (auto [type, bound] : {std::pair{WeightType::q4_k, 0.15}, std::pair{WeightType::q5_k, 0.07},
                             std::pair{WeightType::q6_k, 0.03}, std::pair{WeightType::iq4_nl, 0.15}}) {
    std::vector<uint8_t> rows(n * row_bytes(type, k));
    quantize_rows(type, x.data(), rows.data(), n, k);
    const std::vector<float> y = test::dequantized(type, rows, n, k);
    for (size_t r = 0; r < n; ++r) {
      float amax = 0;
      for (size_t c = 0; c < k; ++c) amax = std::max(amax, std::fabs(x[r * k + c]));
      for (size_t c = 0; c < k; ++c) {
        ASSERT_LE(std::fabs(y[r * k + c] - x[r * k + c]), bound * amax) << type_name(type) << " row " << r << " col " << c;
      }
    }
  }
}

// Every kernel of these types (the scalar reference included, whose packed-layout accessors
// are so checked against the GGUF dequantizers): |y − Σ a·w_deq| ≤ 0.01·Σ|a|·|w_deq| (only the
// activations' int8 rounding remains).
TEST(KQuants, KernelsMatchTheDequantizedProduct) {
  const size_t m = 5, n = 19, k = 512;
  const std::vector<float> a = test::random_floats(m * k, 4);
  for (const Ukernel* u : kernel_list()) {
    if (std::find(std::begin(kTypes), std::end(kTypes), u->type) == std::end(kTypes)) continue;
    if (!test::why_unavailable(*u).empty()) continue;
    const size_t rows_m = u->gemv ? 1 : m;
    const std::vector<uint8_t> rows = test::random_weights(u->type, n, k, 3);
    const std::vector<float> w = test::dequantized(u->type, rows, n, k);
    const TileParams p = kernel_params(*u);
    AlignedBuffer lp(lhs_packed_size(*u, p, rows_m, k)), rp(rhs_packed_size(*u, p, n, k));
    u->lhs->run(rows_m, k, p.mr, p.kr, p.sr, a.data(), k * 4, lp.data());
    u->rhs->run(n, k, p.nr, p.kr, p.sr, rows.data(), rp.data());
    std::vector<float> dst(rows_m * n);
    u->run(rows_m, n, k, lp.data(), rp.data(), dst.data(), n * 4, -INFINITY, INFINITY);
    for (size_t i = 0; i < rows_m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double y = 0, s = 0;
        for (size_t c = 0; c < k; ++c) {
          y += static_cast<double>(a[i * k + c]) * w[j * k + c];
          s += std::fabs(static_cast<double>(a[i * k + c]) * w[j * k + c]);
        }
        ASSERT_LE(std::fabs(dst[i * n + j] - y), 0.01 * s + 1e-30) << u->name << " (" << i << ", " << j << ")";
      }
    }
  }
}

// The packed RHS keeps the file's bits: at most 5% above the GGUF bytes.
TEST(KQuants, PackedSizeWithinFivePercentOfGguf) {
  const size_t n = 64, k = 1024;
  for (const Ukernel* u : kernel_list()) {
    if (std::find(std::begin(kTypes), std::end(kTypes), u->type) == std::end(kTypes)) continue;
    const TileParams p = kernel_params(*u);
    EXPECT_LE(static_cast<double>(rhs_packed_size(*u, p, n, k)), 1.05 * static_cast<double>(n * row_bytes(u->type, k)))
        << u->name;
  }
}

}  // namespace
}  // namespace qmm
