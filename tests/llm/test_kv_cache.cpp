// The KV cache types (kv_type.h) and the chunked attention over them (attend_chunk): the
// rotation is orthogonal, rows round-trip as ggml's blocks, the chunked attention equals the
// definition over the dequantized rows (and, for int8 keys, the int8-rounded queries) for every
// type, ring layout, head count and row count, and a row's bits do not depend on the rows
// computed beside it nor on how its chunks are split over tasks. The forward pass with each type: bit-identical for any thread count, the
// sliding-window rings equal a full cache, and the cache bytes are those of the type.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include <unistd.h>

#include "../emulated.h"
#include "core/blocks.h"
#include "core/buffer.h"
#include "core/error.h"
#include "core/fp16.h"
#include "core/random.h"
#include "llm/attention/attend_kernel.h"
#include "llm/model.h"
#include "llm/ops.h"
#include "llm/synth.h"
#include "matmul/select.h"

namespace qmm::llm {
namespace {

constexpr KvType kAll[] = {KvType::f32, KvType::f16, KvType::q8_0, KvType::q4_0};

TEST(KvType, NamesParseAndRowBytes) {
  for (KvType t : kAll) EXPECT_EQ(parse_kv_type(kv_type_name(t)), t);
  EXPECT_EQ(parse_kv_type("Q8_0"), KvType::q8_0);
  EXPECT_FALSE(parse_kv_type("q4_1"));
  EXPECT_FALSE(parse_kv_type(""));
  EXPECT_EQ(kv_row_bytes(KvType::f32, 128), 512u);
  EXPECT_EQ(kv_row_bytes(KvType::f16, 128), 256u);
  EXPECT_EQ(kv_row_bytes(KvType::q8_0, 128), 4 * 34u);
  EXPECT_EQ(kv_row_bytes(KvType::q4_0, 128), 4 * 18u);
  EXPECT_TRUE(kv_fits(KvType::f16, 8));
  EXPECT_FALSE(kv_fits(KvType::q8_0, 80));
  EXPECT_EQ(kv_rotation_len(128), 128u);
  EXPECT_EQ(kv_rotation_len(96), 32u);
  EXPECT_EQ(kv_rotation_len(512), 256u);
}

// H is orthogonal (dot products kept) and its own inverse.
TEST(KvType, RotationKeepsDotProductsAndIsItsOwnInverse) {
  for (size_t n : {32, 64, 96, 128, 256, 512}) {
    const auto a = random_floats(n, 1), b = random_floats(n, 2);
    auto ra = a, rb = b;
    kv_rotate(ra.data(), n);
    kv_rotate(rb.data(), n);
    double d0 = 0, d1 = 0;
    for (size_t i = 0; i < n; ++i) d0 += double{a[i]} * b[i], d1 += double{ra[i]} * rb[i];
    EXPECT_NEAR(d0, d1, 1e-4 * std::sqrt(static_cast<double>(n))) << n;
    kv_rotate(ra.data(), n);
    for (size_t i = 0; i < n; ++i) ASSERT_NEAR(ra[i], a[i], 1e-5) << n << " " << i;
  }
}

// kv_store then kv_load gives ggml's dequantized row (F32 exact, F16 rounded once).
TEST(KvType, RowsRoundTripAsTheirBlocks) {
  const size_t n = 96;
  const auto x = random_floats(n, 3);
  for (KvType t : kAll) {
    std::vector<uint8_t> row(kv_row_bytes(t, n));
    kv_store(t, x.data(), row.data(), n);
    std::vector<float> got(n), want(n);
    kv_load(t, row.data(), row.size(), 1, got.data(), n);
    const WeightType w = t == KvType::f32 ? WeightType::f32 : t == KvType::f16 ? WeightType::f16 : t == KvType::q8_0 ? WeightType::q8_0 : WeightType::q4_0;
    dequantize_row(w, row.data(), want.data(), n);
    EXPECT_EQ(got, want) << kv_type_name(t);
  }
}

// A cache of `slots` rows of type t for one K/V head, and its rows as F32.
struct Cache {
  KvType k_type, v_type;
  size_t hd, slots;
  std::vector<uint8_t> k, v;
  std::vector<float> kf, vf;  // dequantized, row-major [slots, hd]
  Cache(KvType kt, KvType vt, size_t hd_, size_t slots_, uint32_t seed) : k_type(kt), v_type(vt), hd(hd_), slots(slots_) {
    const auto kx = random_floats(slots * hd, seed), vx = random_floats(slots * hd, seed + 1);
    k.resize(slots * kv_row_bytes(kt, hd));
    v.resize(slots * kv_row_bytes(vt, hd));
    kf.resize(slots * hd);
    vf.resize(slots * hd);
    for (size_t p = 0; p < slots; ++p) {
      kv_store(kt, kx.data() + p * hd, k.data() + p * kv_row_bytes(kt, hd), hd);
      kv_store(vt, vx.data() + p * hd, v.data() + p * kv_row_bytes(vt, hd), hd);
    }
    kv_load(kt, k.data(), kv_row_bytes(kt, hd), slots, kf.data(), hd);
    kv_load(vt, v.data(), kv_row_bytes(vt, hd), slots, vf.data(), hd);
  }
  KvHead head(size_t start) const {
    return {k_type, v_type, k.data(), v.data(), kv_row_bytes(k_type, hd), kv_row_bytes(v_type, hd), KvRing{start, slots}};
  }
};

// attend_chunk over every chunk, folded, finished: out [rows, heads·hd].
std::vector<float> chunked(const std::vector<float>& q, size_t heads, const KvHead& kv, size_t hd, size_t pos0, size_t rows, float scale,
                           float softcap) {
  const size_t ps = attend_partial_size(hd);
  std::vector<float> scratch(attend_chunk_scratch(hd)), part(rows * heads * ps), acc(rows * heads * ps), out(rows * heads * hd);
  for (size_t c = 0; c * kAttendChunk < pos0 + rows; ++c) {
    attend_chunk(q.data(), heads * hd, heads, kv, hd, c, pos0, rows, scale, softcap, scratch.data(), part.data());
    attend_combine(acc.data(), part.data(), rows * heads, hd);
  }
  attend_finish(acc.data(), rows, heads, hd, out.data(), heads * hd);
  return out;
}

TEST(ChunkedAttention, MatchesTheDefinitionForEveryType) {
  for (KvType kt : kAll) {
    for (size_t hd : {8, 12, 64, 96}) {
      if (!kv_fits(kt, hd)) continue;
      const KvType vt = kt == KvType::q4_0 ? KvType::q8_0 : kt;
      for (size_t heads : {1, 3, 4, 5}) {
        for (auto [pos0, rows, start] : {std::tuple<size_t, size_t, size_t>{0, 1, 0}, {5, 3, 2}, {300, 1, 0}, {250, 16, 100}, {600, 2, 599}}) {
          const size_t len = pos0 + rows;
          const Cache cache(kt, vt, hd, len + 1, 7);
          const auto q = random_floats(rows * heads * hd, 9);
          // Int8 keys meet the query as attend_quantize_query rounds it (attend_kernel.h).
          auto qd = q;
          if (attend_int8_keys(kt)) {
            std::vector<int8_t> qs(hd);
            std::vector<float> d(hd / 32);
            for (size_t i = 0; i < qd.size(); i += hd) {
              attend_quantize_query(&q[i], hd, qs.data(), d.data());
              for (size_t j = 0; j < hd; ++j) qd[i + j] = d[j / 32] * qs[j];
            }
          }
          const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
          for (float softcap : {0.0f, 1.5f}) {
            const auto got = chunked(q, heads, cache.head(start), hd, pos0, rows, scale, softcap);
            for (size_t r = 0; r < rows; ++r) {
              for (size_t h = 0; h < heads; ++h) {
                const size_t n = pos0 + r + 1;
                std::vector<double> s(n);
                double mx = -INFINITY, sum = 0;
                for (size_t p = 0; p < n; ++p) {
                  const size_t at = (start + p) % cache.slots * hd;
                  double d = 0;
                  for (size_t i = 0; i < hd; ++i) d += double{qd[(r * heads + h) * hd + i]} * cache.kf[at + i];
                  s[p] = d * scale;
                  if (softcap > 0) s[p] = softcap * std::tanh(s[p] / softcap);
                  mx = std::max(mx, s[p]);
                }
                for (double& x : s) sum += (x = std::exp(x - mx));
                for (size_t i = 0; i < hd; ++i) {
                  double o = 0;
                  for (size_t p = 0; p < n; ++p) o += s[p] * cache.vf[(start + p) % cache.slots * hd + i];
                  ASSERT_NEAR(got[(r * heads + h) * hd + i], o / sum, 2e-5)
                      << kv_type_name(kt) << " hd " << hd << " heads " << heads << " pos0 " << pos0 << " row " << r;
                }
              }
            }
          }
        }
      }
    }
  }
}

// Row r computed among `rows` rows (a prefill task) has the bits of row r computed alone (a
// decode step), for every chunk.
TEST(ChunkedAttention, ARowsBitsDoNotDependOnItsNeighbours) {
  for (KvType t : kAll) {
    const size_t hd = 64, heads = 4, pos0 = 530, rows = 9;
    const Cache cache(t, t, hd, pos0 + rows, 11);
    const auto q = random_floats(rows * heads * hd, 12);
    const auto all = chunked(q, heads, cache.head(0), hd, pos0, rows, 0.1f, 0.0f);
    for (size_t r = 0; r < rows; ++r) {
      const std::vector<float> qr(q.begin() + static_cast<ptrdiff_t>(r * heads * hd), q.begin() + static_cast<ptrdiff_t>((r + 1) * heads * hd));
      const auto one = chunked(qr, heads, cache.head(0), hd, pos0 + r, 1, 0.1f, 0.0f);
      for (size_t i = 0; i < heads * hd; ++i) ASSERT_EQ(one[i], all[r * heads * hd + i]) << kv_type_name(t) << " row " << r;
    }
  }
}

// Synthetic model helpers.
// One file per shape, weight type and process: ctest runs tests as processes in parallel, and two
// tests that synthesized one shape with other weight types into one path loaded each other's
// model (CI's KvCache thread-count failures: a 1-thread run on the F32 file, the others on Q8_0).
std::string synth(const char* shape, WeightType w) {
  const std::string path = ::testing::TempDir() + "kv_" + shape + "_" + type_name(w) + "_" + std::to_string(getpid()) + ".gguf";
  gguf::synth_model(*gguf::find_synth_shape(shape), w, 3, path, 1);
  return path;
}

std::vector<int32_t> tokens(size_t n, uint32_t seed) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>(10 + (seed * 7919u + i * 104729u) % 500u);
  return t;
}

// Prefill of 600 positions in batches of 128 (attention tasks of the full kAttendTaskRows rows,
// the last ones past the chunks' first rows), then 3 decode steps (split over chunks), with
// `threads` threads: the logits of every step.
static_assert(128 / 4 >= kAttendTaskRows, "the prefill batches below give tasks of kAttendTaskRows rows");
std::vector<float> run(const std::string& path, KvTypes kv, int threads) {
  Context ctx(threads);
  const Model m = Model::load(path, {}, ctx.pool());
  State s(m, 640, 128, ctx, 1, kv);
  const auto t = tokens(603, 5);
  std::vector<float> all;
  const size_t nv = m.config().n_vocab;
  for (size_t p = 0; p < t.size();) {
    const size_t n = p < 600 ? std::min<size_t>(128, 600 - p) : 1;
    const float* l = forward(m, s, &t[p], n);
    all.insert(all.end(), l, l + nv);
    p += n;
  }
  return all;
}

TEST(KvCache, BitwiseIdenticalForAnyThreadCountPerType) {
  if (test::emulated()) GTEST_SKIP() << test::kTooSlowEmulated;
  const std::string path = synth("tiny-k", WeightType::q8_0);
  for (KvType t : kAll) {
    const auto one = run(path, {t, t}, 1);
    for (int threads : {2, 3}) EXPECT_EQ(run(path, {t, t}, threads), one) << kv_type_name(t) << ", " << threads << " threads";
  }
}

// The cache is asked for 2 MiB pages (as the packed weights): a decode at depth streams it. Linux
// marks such a mapping "hg" in /proc/self/smaps' VmFlags, whatever pages it got.
TEST(KvCache, AskedForHugePages) {
#if !defined(__linux__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "MADV_HUGEPAGE is asked on Linux builds without ASan only (core/buffer.cpp)";
#else
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "MADV_HUGEPAGE is asked on Linux builds without ASan only (core/buffer.cpp)";
#endif
#endif
  // Whether the mapping holding each address has the "hg" flag (MADV_HUGEPAGE) in smaps.
  auto advised = [](std::initializer_list<uintptr_t> at) {
    std::vector<bool> hg(at.size(), false), in(at.size(), false);
    FILE* f = std::fopen("/proc/self/smaps", "r");
    if (!f) return hg;
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      unsigned long lo = 0, hi = 0;
      if (std::sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && std::strchr(line, '-') && std::strchr(line, ' ') > std::strchr(line, '-')) {
        size_t i = 0;
        for (uintptr_t a : at) in[i++] = a >= lo && a < hi;
      } else if (std::strncmp(line, "VmFlags:", 8) == 0 && std::strstr(line, " hg") != nullptr) {
        for (size_t i = 0; i < hg.size(); ++i) hg[i] = hg[i] || in[i];
      }
    }
    std::fclose(f);
    return hg;
  };
  // A probe first: qemu-user (the Arm stage) runs madvise without passing it on, and its smaps
  // shows no such flag; there the cache's request cannot be seen either.
  AlignedBuffer probe(size_t{4} << 20);
  advise_huge_pages(probe.data(), probe.size());
  if (!advised({reinterpret_cast<uintptr_t>(probe.data()) + (size_t{2} << 20)})[0]) {
    GTEST_SKIP() << "an advised probe mapping shows no hg flag in /proc/self/smaps here (qemu-user, or no THP)";
  }
  Context ctx(1);
  const Model m = Model::load(synth("tiny-k", WeightType::q8_0), {}, ctx.pool());
  State s(m, 8192, 8, ctx);  // megabytes of K and of V
  ASSERT_GE(s.kv_bytes(), size_t{8} << 20);
  std::vector<std::pair<const uint8_t*, size_t>> spans;
  s.kv_spans(0, spans);
  ASSERT_FALSE(spans.empty());
  const std::vector<bool> hg = advised({reinterpret_cast<uintptr_t>(spans[0].first), reinterpret_cast<uintptr_t>(spans[1].first)});
  EXPECT_TRUE(hg[0]) << "the K cache's mapping has no hg flag";
  EXPECT_TRUE(hg[1]) << "the V cache's mapping has no hg flag";
#endif
}

// A decode step of several sequences splits each one's positions over its chunks as a lone
// decode row does (forward.cpp's split-KV): 4 sequences at depths of 2 to 6 chunks, decoded
// together for 2 steps, get the logits each gets alone, bit for bit, at 1 and 2 threads (and
// the same at both): the first step against a lone decode row (split too), the second against
// the two tokens as one span of 2 rows (not split). The prompts are prefilled by the default
// kernels, alike in every run; the steps use the scalar matmuls, whose rows do not depend on the
// batch (a GEMV and a GEMM may round differently), so what is compared is the attention.
TEST(KvCache, DecodeRowsOfABatchSplitLikeALoneRow) {
  if (test::emulated()) GTEST_SKIP() << test::kTooSlowEmulated;
  const std::string path = synth("tiny-k", WeightType::f32);  // (int8 activations would round most attention differences away)
  const size_t depths[] = {300, 1400, 520, 900}, n_seq = 4, steps = 2, n_ctx = 1500;
  for (KvType t : {KvType::f16, KvType::q8_0}) {
    std::vector<float> first;  // the batched logits at 1 thread
    for (int threads : {1, 2}) {
      Context ctx(threads);
      const Model fast = Model::load(path, {}, ctx.pool());
      LoadOptions o;
      o.filter = parse_kernel_filter("scalar", "");
      const Model scalar = Model::load(path, o, ctx.pool());
      const size_t nv = fast.config().n_vocab;
      auto prefill = [&](State& s, uint32_t slot, size_t q) {  // sequence q's prompt into the slot
        const auto p = tokens(depths[q], static_cast<uint32_t>(q + 1));
        std::vector<BatchRow> rows;
        for (size_t i = 0; i < p.size(); i += 128) {
          const size_t n = std::min<size_t>(128, p.size() - i);
          rows.clear();
          for (size_t j = 0; j < n; ++j) rows.push_back({slot, static_cast<uint32_t>(i + j), false});
          forward(fast, s, &p[i], rows.data(), n);
        }
      };
      auto next = [&](size_t q, size_t step) { return static_cast<int32_t>(20 + 37 * q + 11 * step); };
      std::vector<float> alone(steps * n_seq * nv);  // [step][seq][n_vocab]
      for (uint32_t q = 0; q < n_seq; ++q) {
        const auto d = static_cast<uint32_t>(depths[q]);
        const int32_t toks[] = {next(q, 0), next(q, 1)};
        const BatchRow row{0, d, true}, rows[] = {{0, d, false}, {0, d + 1, true}};
        State lone(fast, n_ctx, 128, ctx, 1, {t, t}), span(fast, n_ctx, 128, ctx, 1, {t, t});
        prefill(lone, 0, q);
        prefill(span, 0, q);
        const float* l = forward(scalar, lone, toks, &row, 1);
        std::copy(l, l + nv, alone.begin() + static_cast<ptrdiff_t>(q * nv));
        l = forward(scalar, span, toks, rows, 2);
        std::copy(l, l + nv, alone.begin() + static_cast<ptrdiff_t>((n_seq + q) * nv));
      }
      State s(fast, n_ctx, 128, ctx, n_seq, {t, t});
      for (uint32_t q = 0; q < n_seq; ++q) prefill(s, q, q);
      std::vector<float> batched;
      for (size_t step = 0; step < steps; ++step) {
        std::vector<int32_t> toks;
        std::vector<BatchRow> rows;
        for (uint32_t q = 0; q < n_seq; ++q) {
          toks.push_back(next(q, step));
          rows.push_back({q, static_cast<uint32_t>(depths[q] + step), true});
        }
        const float* l = forward(scalar, s, toks.data(), rows.data(), n_seq);
        batched.insert(batched.end(), l, l + n_seq * nv);
      }
      for (size_t i = 0; i < alone.size(); ++i) {
        ASSERT_EQ(batched[i], alone[i]) << kv_type_name(t) << ", " << threads << " threads, step " << i / (n_seq * nv) << " sequence "
                                        << i / nv % n_seq << " logit " << i % nv;
      }
      if (threads == 1) first = batched;
      EXPECT_EQ(batched, first) << kv_type_name(t) << ", " << threads << " threads against 1";
    }
  }
}

TEST(KvCache, BytesAreThoseOfTheTypeAndBadTypesAreRefused) {
  Context ctx(1);
  const Model m = Model::load(synth("tiny-k", WeightType::q8_0), {}, ctx.pool());
  const Config& c = m.config();
  for (KvType t : kAll) {
    const State s(m, 100, 8, ctx, 2, {t, KvType::f16});
    EXPECT_EQ(s.kv_bytes(), 2 * 100 * c.n_layer * c.n_head_kv * (kv_row_bytes(t, c.head_dim) + 2 * c.head_dim)) << kv_type_name(t);
    EXPECT_EQ(State::kv_bytes_per_token(c, {t, KvType::f16}), c.n_layer * c.n_head_kv * (kv_row_bytes(t, c.head_dim) + 2 * c.head_dim));
    EXPECT_EQ(s.kv_bytes_read(9), 10 * State::kv_bytes_per_token(c, {t, KvType::f16}));
  }
  EXPECT_EQ(State(m, 10, 1, ctx).kv_types().k, KvType::f16);  // the default
  const Model small = Model::load(synth("tiny", WeightType::q8_0), {}, ctx.pool());  // head size 16
  EXPECT_THROW(State(small, 10, 1, ctx, 1, {KvType::q8_0, KvType::f16}), Error);
  EXPECT_THROW(State(small, 10, 1, ctx, 1, {KvType::f16, KvType::q4_0}), Error);
  EXPECT_NO_THROW(State(small, 10, 1, ctx, 1, {KvType::f16, KvType::f32}));
}

// Mean KL(P_f32-cache || P_kv) of the next-token distributions over n positions the F32-cache
// model decodes greedily, and the share of positions whose top token agrees (as qmm bench kl
// -ctk/-ctv). F32 weights, so the int8 kernels' activation rounding does not amplify the cache's.
std::pair<double, double> kl_against_f32(const std::string& path, KvTypes kv, size_t n) {
  Context ctx(1);
  const Model m = Model::load(path, {}, ctx.pool());
  const size_t nv = m.config().n_vocab;
  State ref(m, n + 1, 1, ctx, 1, {KvType::f32, KvType::f32}), s(m, n + 1, 1, ctx, 1, kv);
  auto log_softmax = [&](const float* l) {
    const double mx = *std::max_element(l, l + nv);
    double sum = 0;
    for (size_t i = 0; i < nv; ++i) sum += std::exp(l[i] - mx);
    std::vector<double> out(nv);
    for (size_t i = 0; i < nv; ++i) out[i] = l[i] - mx - std::log(sum);
    return out;
  };
  int32_t t = 1;
  double kl = 0;
  size_t agree = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<double> p = log_softmax(forward(m, ref, &t, 1)), q = log_softmax(forward(m, s, &t, 1));
    for (size_t v = 0; v < nv; ++v) kl += std::exp(p[v]) * (p[v] - q[v]);
    const auto top = std::max_element(p.begin(), p.end()) - p.begin();
    agree += top == std::max_element(q.begin(), q.end()) - q.begin();
    t = static_cast<int32_t>(top);
  }
  return {kl / static_cast<double>(n), static_cast<double>(agree) / static_cast<double>(n)};
}

// The quality gates of issue 29: F16 K+V mean KL <= 1e-4; Q8_0 K+V <= 1e-3 with top-1
// agreement >= 99 % (llama, Qwen 3 and Phi-3 shapes; the Gemma shapes, whose random-weight
// distributions are flatter, reach 97-98 % top-1 at the same KL and are held to the KL gate).
TEST(KvCache, QualityAgainstTheF32Cache) {
  if (test::emulated()) GTEST_SKIP() << test::kTooSlowEmulated;
  for (const char* shape : {"tiny-k", "tiny-qwen3", "tiny-phi3", "tiny-gemma3", "tiny-gemma2"}) {
    const std::string path = ::testing::TempDir() + "kv_kl_" + shape + ".gguf";
    gguf::synth_model(*gguf::find_synth_shape(shape), WeightType::f32, 3, path, 1);
    const bool gemma = std::string(shape).starts_with("tiny-gemma");
    const auto [kl16, top16] = kl_against_f32(path, {KvType::f16, KvType::f16}, 600);
    EXPECT_LE(kl16, 1e-4) << shape;
    const auto [kl8, top8] = kl_against_f32(path, {KvType::q8_0, KvType::q8_0}, 600);
    EXPECT_LE(kl8, 1e-3) << shape;
    if (!gemma) {
      EXPECT_GE(top8, 0.99) << shape;
    }
    std::printf("%s: f16 KL %.3g top-1 %.1f%%, q8_0 KL %.3g top-1 %.1f%%\n", shape, kl16, 100 * top16, kl8, 100 * top8);
  }
}

}  // namespace
}  // namespace qmm::llm
