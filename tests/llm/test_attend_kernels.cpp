// The attention kernels (src/llm/attention/attend_kernel.h) against the scalar reference on
// generated cases: every key and value type, head sizes at and off the 8- and 16-float vectors and
// the passes of 32-128 columns, 1-6 query heads per K/V head (the 4-, 3-, 2- and 1-head paths and
// their mixes), rows that see all, part or none of the chunk, rings that wrap inside it,
// soft-capping; every kernel this CPU runs. The query rounding of int8 Q·K, the selection and
// the trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../emulated.h"
#include "core/cpu.h"
#include "core/random.h"
#include "llm/attention/attend_kernel.h"
#if defined(__x86_64__)
#include "llm/attention/attend_avx512.h"
#endif
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
#include "llm/ops.h"

namespace qmm::llm {
namespace {

constexpr KvType kAll[] = {KvType::f32, KvType::f16, KvType::q8_0, KvType::q4_0};

struct Case {
  KvType kt, vt;
  size_t hd, heads, pos0, rows, chunk, start, slots;
  float softcap;
};

std::string describe(const Case& c) {
  return std::string("K ") + kv_type_name(c.kt) + " V " + kv_type_name(c.vt) + " hd " + std::to_string(c.hd) + " heads " +
         std::to_string(c.heads) + " pos0 " + std::to_string(c.pos0) + " rows " + std::to_string(c.rows) + " chunk " +
         std::to_string(c.chunk) + " ring " + std::to_string(c.start) + "/" + std::to_string(c.slots) + " softcap " +
         std::to_string(c.softcap);
}

// Cases of 1 row mostly (min_rows == 1), or of min_rows to min_rows + 16 rows.
std::vector<Case> generated_cases(size_t count, size_t min_rows = 1) {
  std::mt19937 rng(29);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<Case> out;
  while (out.size() < count) {
    Case c{};
    c.kt = kAll[pick(4)];
    c.vt = kAll[pick(4)];
    constexpr size_t kDims[] = {8, 12, 40, 48, 80, 32, 64, 96, 128, 256};
    c.hd = kDims[pick(std::size(kDims))];
    if (!kv_fits(c.kt, c.hd) || !kv_fits(c.vt, c.hd)) continue;
    c.heads = 1 + pick(6);
    c.pos0 = pick(4) == 0 ? pick(8) : pick(700);
    c.rows = min_rows == 1 ? 1 + (pick(3) == 0 ? pick(17) : 0) : min_rows + pick(17);
    const size_t end = c.pos0 + c.rows;
    c.chunk = pick((end + kAttendChunk - 1) / kAttendChunk + 1);  // sometimes one past the last: all rows empty
    c.slots = end + pick(300);
    c.start = pick(3) == 0 ? 0 : pick(c.slots);
    c.softcap = pick(4) == 0 ? 2.5f : 0.0f;
    out.push_back(c);
  }
  return out;
}

// A case's cache and queries, and the partials a kernel computes for them.
struct Data {
  std::vector<uint8_t> k, v;
  std::vector<float> q;
  KvHead head;
  explicit Data(const Case& c) {
    const size_t kr = kv_row_bytes(c.kt, c.hd), vr = kv_row_bytes(c.vt, c.hd);
    const auto kx = random_floats(c.slots * c.hd, c.slots * 7 + c.hd), vx = random_floats(c.slots * c.hd, c.slots * 11 + c.hd);
    k.resize(c.slots * kr);
    v.resize(c.slots * vr);
    for (size_t p = 0; p < c.slots; ++p) {
      kv_store(c.kt, &kx[p * c.hd], &k[p * kr], c.hd);
      kv_store(c.vt, &vx[p * c.hd], &v[p * vr], c.hd);
    }
    q = random_floats(c.rows * c.heads * c.hd, c.pos0 + 3, -2.0f, 2.0f);  // scores of a few units: a peaked softmax
    head = {c.kt, c.vt, k.data(), v.data(), kr, vr, KvRing{c.start, c.slots}};
  }
};

// The partials of the case's rows [r0, r0 + rows) (all of them by default) as one call.
std::vector<float> partials(const AttendKernel& kernel, const Case& c, const Data& d, size_t r0 = 0, size_t rows = 0) {
  rows = rows ? rows : c.rows;
  const size_t ps = attend_partial_size(c.hd);
  std::vector<float> scratch(attend_chunk_scratch(c.hd), NAN), part(rows * c.heads * ps, NAN);
  kernel.chunk(d.q.data() + r0 * c.heads * c.hd, c.heads * c.hd, c.heads, d.head, c.hd, c.chunk, c.pos0 + r0, rows,
               1.0f / std::sqrt(static_cast<float>(c.hd)), c.softcap, scratch.data(), part.data());
  return part;
}

const AttendKernel& reference() { return attend_kernels().back(); }

TEST(AttendKernels, TheListEndsWithTheReferenceAndTheChosenOneRunsHere) {
  ASSERT_GE(attend_kernels().size(), 2u);
  EXPECT_STREQ(reference().name, "attend_ref");
  EXPECT_TRUE(cpu_info().has(attend_kernel().features)) << attend_kernel().name;
  if (std::getenv("QMM_ATTENTION") == nullptr) {  // the best this CPU runs
    for (const AttendKernel& k : attend_kernels()) {
      if (cpu_info().has(k.features)) {
        EXPECT_STREQ(attend_kernel().name, k.name);
        break;
      }
    }
  }
  const std::string trace = attention_trace({KvType::q8_0, KvType::f16});
  EXPECT_NE(trace.find(attend_kernel().name), std::string::npos) << trace;
  EXPECT_NE(trace.find("int8 Q·K"), std::string::npos) << trace;
  EXPECT_EQ(attention_trace({KvType::f16, KvType::f16}).find("int8"), std::string::npos);
  EXPECT_EQ(attention_trace({KvType::f16, KvType::f16}).find("key-major panel") != std::string::npos, attend_kernel().key_panel);
}

// Every kernel this CPU runs equals the reference up to the order of float additions: the
// partial's m and the normalized output o / l to 2e-5 (values are in [-1, 1]), l relatively.
// Int8 keys' scores are the reference's bits (attend_kernel.h), so their m is too.
TEST(AttendKernels, GeneratedCasesMatchTheReference) {
  const auto cases = generated_cases(test::emulated() ? 40 : 300);  // (qemu: 240 s for 300)
  for (const AttendKernel& kernel : attend_kernels()) {
    if (&kernel == &reference()) continue;
    if (!cpu_info().has(kernel.features)) {
      std::printf("%s: this CPU cannot run it, not tested\n", kernel.name);
      continue;
    }
    for (const Case& c : cases) {
      const Data d(c);
      const auto got = partials(kernel, c, d), want = partials(reference(), c, d);
      const size_t ps = attend_partial_size(c.hd);
      for (size_t i = 0; i < c.rows * c.heads; ++i) {
        const float* g = &got[i * ps];
        const float* w = &want[i * ps];
        if (w[1] == 0) {  // the row sees none of the chunk
          ASSERT_EQ(g[1], 0.0f) << kernel.name << " " << describe(c);
          ASSERT_EQ(g[0], -INFINITY) << kernel.name << " " << describe(c);
          continue;
        }
        ASSERT_NEAR(g[0], w[0], 2e-5 * (1 + std::fabs(w[0]))) << kernel.name << " " << describe(c);
        if (attend_int8_keys(c.kt) && c.softcap == 0 && !std::isnan(w[0])) {  // int8 scores: the reference's bits
          ASSERT_EQ(std::bit_cast<uint32_t>(g[0]), std::bit_cast<uint32_t>(w[0])) << kernel.name << " " << describe(c);
        }
        ASSERT_NEAR(g[1] / w[1], 1.0, 1e-4) << kernel.name << " " << describe(c);
        for (size_t j = 2; j < ps; ++j) ASSERT_NEAR(g[j] / g[1], w[j] / w[1], 2e-5) << kernel.name << " " << describe(c) << " d " << j - 2;
      }
    }
  }
}

// A row's partial does not depend on the rows it came with: scored alone (a decode step) it gets
// the bits it gets in a tile of 2-18 rows (prefill; the AVX-512 kernel's key-major panel there),
// with every kernel this CPU runs, every key type, rings that wrap inside a block of 16 keys.
TEST(AttendKernels, ARowAloneGetsTheBitsItGetsInATile) {
  const auto cases = generated_cases(test::emulated() ? 16 : 120, 2);
  for (const AttendKernel& kernel : attend_kernels()) {
    if (!cpu_info().has(kernel.features)) continue;
    for (const Case& c : cases) {
      const Data d(c);
      const auto tile = partials(kernel, c, d);
      const size_t ps = attend_partial_size(c.hd);
      for (size_t r = 0; r < c.rows; ++r) {
        const auto alone = partials(kernel, c, d, r, 1);
        for (size_t i = 0; i < c.heads * ps; ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(alone[i]), std::bit_cast<uint32_t>(tile[r * c.heads * ps + i]))
              << kernel.name << " " << describe(c) << " row " << r << " float " << i;
      }
    }
  }
}

// A GQA group of 3 query heads (Llama 3.2 3B: 24 query heads on 8 K/V heads) is served by one
// pass over the chunk's K and V rows, not a pass for 2 heads and another for 1, with the bits
// each head gets alone: every kernel this CPU runs, every key and value type, head sizes at and
// off the 16-float vectors, a lone decode row and tiles of rows (the AVX-512 kernel's key-major
// panel), rings that wrap inside the chunk.
TEST(AttendKernels, AGroupOfThreeHeadsGetsTheBitsOfEachHeadAlone) {
  std::vector<Case> cases;
  for (KvType kt : kAll) {
    for (KvType vt : kAll) {
      for (size_t hd : {32, 64, 80, 128}) {
        for (auto [pos0, rows] : {std::pair<size_t, size_t>{300, 1}, {700, 1}, {37, 1}, {250, 9}, {20, 3}}) {
          if (!kv_fits(kt, hd) || !kv_fits(vt, hd)) continue;
          if (test::emulated() && (kt != vt || pos0 == 700)) continue;  // (qemu: 160 s for all)
          const size_t chunk = pos0 / kAttendChunk, slots = pos0 + rows + 40;
          const size_t start = pos0 % 50 == 0 ? slots - (chunk * kAttendChunk + 7) : 0;  // the ring wraps 7 positions into the chunk
          cases.push_back({kt, vt, hd, 3, pos0, rows, chunk, start, slots, 0.0f});
        }
      }
    }
  }
  for (const AttendKernel& kernel : attend_kernels()) {
    if (!cpu_info().has(kernel.features)) continue;
    for (const Case& c : cases) {
      const Data d(c);
      const auto group = partials(kernel, c, d);
      const size_t ps = attend_partial_size(c.hd);
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.hd));
      for (size_t h = 0; h < c.heads; ++h) {
        std::vector<float> scratch(attend_chunk_scratch(c.hd), NAN), alone(c.rows * ps, NAN);
        kernel.chunk(d.q.data() + h * c.hd, c.heads * c.hd, 1, d.head, c.hd, c.chunk, c.pos0, c.rows, scale, c.softcap, scratch.data(),
                     alone.data());
        for (size_t r = 0; r < c.rows; ++r)
          for (size_t i = 0; i < ps; ++i)
            ASSERT_EQ(std::bit_cast<uint32_t>(alone[r * ps + i]), std::bit_cast<uint32_t>(group[(r * c.heads + h) * ps + i]))
                << kernel.name << " " << describe(c) << " head " << h << " row " << r << " float " << i;
      }
    }
  }
}

// Per block of 32: the largest magnitude becomes ±127, d = max / 127; a zero block is all zero
// with d = 0; a block holding a NaN or an infinity gets d = NaN (its scores are NaN) and zeros.
TEST(AttendKernels, QueriesRoundToInt8PerBlock) {
  std::vector<float> q(96);
  for (size_t i = 0; i < 32; ++i) q[i] = static_cast<float>(i) - 10.0f;  // block 0: -10..21
  q[40] = NAN;                                                           // block 1
  std::vector<int8_t> qs(96, 1);
  std::vector<float> d(3, 1.0f);
  attend_quantize_query(q.data(), 96, qs.data(), d.data());
  EXPECT_FLOAT_EQ(d[0], 21.0f / 127.0f);
  EXPECT_EQ(qs[31], 127);
  EXPECT_EQ(qs[0], static_cast<int8_t>(std::lround(-10.0f * 127.0f / 21.0f)));
  EXPECT_EQ(qs[10], 0);
  EXPECT_TRUE(std::isnan(d[1]));
  for (size_t i = 32; i < 96; ++i) EXPECT_EQ(qs[i], 0) << i;
  EXPECT_EQ(d[2], 0.0f);
  // Ties to even: with max |q| = 127 the scale is 1, so q itself is rounded.
  std::vector<float> t(32, 0.0f);
  const float halves[] = {127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, -126.5f, 3.49f, INFINITY};
  std::copy(halves, halves + 8, t.begin());
  attend_quantize_query(t.data(), 32, qs.data(), d.data());
  const int8_t want[] = {127, 0, 2, 2, 0, -2, -126, 3};
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(qs[i], want[i]) << i;
  t[20] = halves[8];  // an infinity: d NaN, every value 0
  attend_quantize_query(t.data(), 32, qs.data(), d.data());
  EXPECT_TRUE(std::isnan(d[0]));
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(qs[i], 0) << i;
}

// The AVX-512 kernel's own query rounding gives attend_quantize_query's bytes: random blocks
// of every magnitude, ties, zeros, a NaN and an infinity.
TEST(AttendKernels, Avx512QueryRoundingIsTheReferences) {
#if defined(__x86_64__)
  const AttendKernel& k = attend_kernels().front();
  if (!cpu_info().has(k.features)) GTEST_SKIP() << "this CPU cannot run " << k.name;
  std::mt19937 rng(11);
  for (size_t trial = 0; trial < 400; ++trial) {
    const size_t hd = 32 * (1 + trial % 8);
    const float mag = std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20);
    std::vector<float> q = random_floats(hd, trial, -mag, mag);
    if (trial % 7 == 0) q[rng() % hd] = 0.5f * std::round(2.0f * q[0]);  // halves
    if (trial % 11 == 0) std::fill(q.begin(), q.begin() + 32, 0.0f);
    if (trial % 13 == 0) q[rng() % hd] = NAN;
    if (trial % 17 == 0) q[rng() % hd] = -INFINITY;
    if (trial % 5 == 0) {  // max 127: the values themselves rounded, ties included
      for (size_t i = 0; i < hd; ++i) q[i] = static_cast<float>(static_cast<int>(rng() % 255) - 127) + (rng() % 2 ? 0.5f : 0.0f);
      q[0] = 127.0f;
    }
    std::vector<int8_t> a(hd), b(hd);
    std::vector<float> da(hd / 32), db(hd / 32);
    attend_quantize_query(q.data(), hd, a.data(), da.data());
    attend_quantize_query_avx512(q.data(), hd, b.data(), db.data());
    ASSERT_EQ(a, b) << "trial " << trial;
    for (size_t i = 0; i < da.size(); ++i) ASSERT_EQ(std::bit_cast<uint32_t>(da[i]), std::bit_cast<uint32_t>(db[i])) << "trial " << trial;
  }
#else
  GTEST_SKIP() << "an x86 kernel";
#endif
}

// A weight e^(s − m) of a score 100 below the chunk's maximum times a value of 0.5 is a subnormal
// sum (~8e-39), whose every later operation cost a microcode assist (a row whose scores spread
// that wide decoded ~16× slower): every kernel flushes it to zero (attend_kernel.h), for every
// cache type, and leaves the caller's floating-point mode as it found it.
TEST(AttendKernels, SubnormalSumsAreFlushedToZero) {
#if defined(__SSE__)
  for (const AttendKernel& kernel : attend_kernels()) {
    if (!cpu_info().has(kernel.features)) continue;
    for (KvType kt : {KvType::f32, KvType::f16, KvType::q8_0}) {
      for (KvType vt : kAll) {
        const size_t hd = 64, ps = attend_partial_size(hd), kr = kv_row_bytes(kt, hd), vr = kv_row_bytes(vt, hd);
        std::vector<float> q(hd, 0.0f), k0(hd, 0.0f), k1(hd, 0.0f), v0(hd, 0.5f), v1(hd, 0.0f);
        q[0] = 100.0f;
        k0[0] = -1.0f;  // position 0 scores −100, position 1 (all zero) 0: the maximum, with a zero value
        std::vector<uint8_t> k(2 * kr), v(2 * vr);
        kv_store(kt, k0.data(), k.data(), hd);
        kv_store(kt, k1.data(), k.data() + kr, hd);
        kv_store(vt, v0.data(), v.data(), hd);
        kv_store(vt, v1.data(), v.data() + vr, hd);
        const KvHead head{kt, vt, k.data(), v.data(), kr, vr, KvRing{0, 2}};
        std::vector<float> scratch(attend_chunk_scratch(hd)), part(ps, NAN);
        const unsigned mode = _mm_getcsr();
        kernel.chunk(q.data(), hd, 1, head, hd, 0, 1, 1, 1.0f, 0.0f, scratch.data(), part.data());
        EXPECT_EQ(_mm_getcsr(), mode) << kernel.name;
        const std::string what = std::string(kernel.name) + " K " + kv_type_name(kt) + " V " + kv_type_name(vt);
        ASSERT_NEAR(part[0], 0.0f, 1e-3) << what;  // m: the zero key's score
        ASSERT_EQ(part[1], 1.0f) << what;           // l = 1 + e^(−100)
        for (size_t d = 0; d < hd; ++d) ASSERT_EQ(part[2 + d], 0.0f) << what << " d " << d;
      }
    }
  }
#else
  GTEST_SKIP() << "flushing is x86's (MXCSR); other CPUs take subnormals at full speed";
#endif
}

// Folding two partials whose maxima lie 100 apart scales the lower one by e^−100 (a subnormal
// float): its products are flushed to zero as in the kernels, whichever side holds it, and the
// caller's floating-point mode is left as it was. The exact fold, 0.5·e^−100 / (1 + e^−100) ≈
// 2e−44 of a zero value, is a subnormal the flush makes exactly 0 (kept, it would be nonzero).
TEST(AttendKernels, CombiningFlushesSubnormalProducts) {
#if defined(__SSE__)
  const size_t hd = 64, ps = attend_partial_size(hd);
  std::vector<float> high(ps, 0.0f), low(ps, 0.5f);
  high[0] = 0.0f, high[1] = 1.0f;  // m = 0, l = 1, o = 0
  low[0] = -100.0f, low[1] = 1.0f;  // m = −100, l = 1, o = 0.5
  for (bool low_first : {false, true}) {
    std::vector<float> acc(ps, 0.0f);
    const unsigned mode = _mm_getcsr();
    attend_combine(acc.data(), (low_first ? low : high).data(), 1, hd);
    attend_combine(acc.data(), (low_first ? high : low).data(), 1, hd);
    EXPECT_EQ(_mm_getcsr(), mode);
    EXPECT_EQ(acc[0], 0.0f) << "low first " << low_first;
    EXPECT_EQ(acc[1], 1.0f) << "low first " << low_first;
    for (size_t d = 0; d < hd; ++d) {
      ASSERT_NEAR(acc[2 + d], 0.5 * std::exp(-100.0), 1e-30) << "low first " << low_first << " d " << d;
      ASSERT_EQ(acc[2 + d], 0.0f) << "low first " << low_first << " d " << d << ": a subnormal product was kept";
    }
  }
#else
  GTEST_SKIP() << "flushing is x86's (MXCSR); other CPUs take subnormals at full speed";
#endif
}

}  // namespace
}  // namespace qmm::llm
