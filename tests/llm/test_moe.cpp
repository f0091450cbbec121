// Mixture-of-Experts models (llm/moe.h): the MoE block against a plain reference computed from
// the GGUF tensors (softmax router, top-k, renormalisation, experts, shared expert), prefill
// grouped by expert against row-by-row decode, the pack cache, what a token reads, and hostile
// keys and shapes as one-line errors. (The llama.cpp oracle, test_llamacpp.cpp, checks the
// families' greedy tokens and probabilities.)
#include <chrono>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>

#include "../temp_dirs.h"
#include "core/error.h"
#include "gguf/dequant.h"
#include "gguf/quantize.h"
#include "llm/model.h"
#include "llm/synth.h"
#include "matmul/select.h"
#include "model_copy.h"
#include "test_models.h"

namespace qmm::llm {
namespace {

// Files of this process only: ctest runs other tests of this binary (and other build trees' runs)
// at the same time, and one that rewrote a shared model file changed its mtime under another's
// pack-cache check (Moe.PackCacheHoldsTheExperts failed so in CI).
std::string temp(const std::string& name) {
  static const std::string dir = test::temp_dir("qmm_moe");
  return dir + "/" + name;
}

std::string synth(const std::string& shape, WeightType type = WeightType::f32, uint64_t seed = 1) {
  const std::string path = temp(shape + "-" + type_name(type) + "-" + std::to_string(seed) + ".gguf");
  gguf::synth_model(*gguf::find_synth_shape(shape), type, seed, path, 1, {.replace = true, .inputs = {}});
  return path;
}

std::string load_error(const std::string& path) {
  Context ctx(1);
  try {
    (void)Model::load(path, {}, ctx.pool());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

::testing::AssertionResult fails_with(const std::string& path, const std::string& text) {
  const std::string msg = load_error(path);
  if (!msg.empty() && msg.find(text) != std::string::npos && msg.find('\n') == std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "error '" << msg << "' does not contain '" << text << "' on one line";
}

// Tensor `name` of an F32 file as doubles.
std::vector<double> tensor(const gguf::File& f, const std::string& name) {
  const gguf::TensorInfo& t = f.tensor(name);
  std::vector<float> v(t.elements());
  gguf::dequantize_rows(t.type, t.data, v.data(), t.rows(), t.shape[0]);
  return {v.begin(), v.end()};
}

// y = W x for W [n, k] at w (row-major n rows of k).
std::vector<double> matvec(const double* w, size_t n, size_t k, const double* x) {
  std::vector<double> y(n);
  for (size_t i = 0; i < n; ++i) y[i] = std::inner_product(x, x + k, w + i * k, 0.0);
  return y;
}

std::vector<double> swiglu_ffn(const double* gate, const double* up, const double* down, size_t dim, size_t ff, const double* x) {
  const std::vector<double> g = matvec(gate, ff, dim, x), u = matvec(up, ff, dim, x);
  std::vector<double> h(ff);
  for (size_t j = 0; j < ff; ++j) h[j] = g[j] / (1 + std::exp(-g[j])) * u[j];
  return matvec(down, dim, ff, h.data());
}

// The MoE block of layer l for row x, written out plainly from the file's tensors.
std::vector<double> reference(const gguf::File& f, const Config& c, size_t l, const double* x, std::vector<uint32_t>* chosen) {
  const std::string b = "blk." + std::to_string(l) + ".";
  const size_t dim = c.n_embd, ne = c.n_expert, k = c.n_expert_used, ff = c.n_ff_exp;
  std::vector<double> p = matvec(tensor(f, b + "ffn_gate_inp.weight").data(), ne, dim, x);
  const double mx = *std::max_element(p.begin(), p.end());
  double sum = 0;
  for (double& e : p) sum += e = std::exp(e - mx);
  for (double& e : p) e /= sum;
  std::vector<uint32_t> order(ne);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t bb) { return p[a] > p[bb] || (p[a] == p[bb] && a < bb); });  // stable: ties by index
  chosen->assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k));
  double wsum = 0;
  for (uint32_t e : *chosen) wsum += p[e];
  const std::vector<double> gate = tensor(f, b + "ffn_gate_exps.weight"), up = tensor(f, b + "ffn_up_exps.weight"),
                            down = tensor(f, b + "ffn_down_exps.weight");
  std::vector<double> y(dim, 0.0);
  for (uint32_t e : *chosen) {
    const double w = c.spec->moe_norm ? p[e] / wsum : p[e];
    const std::vector<double> o = swiglu_ffn(gate.data() + e * ff * dim, up.data() + e * ff * dim, down.data() + e * dim * ff, dim, ff, x);
    for (size_t j = 0; j < dim; ++j) y[j] += w * o[j];
  }
  if (c.n_ff_shexp) {
    const std::vector<double> g = tensor(f, b + "ffn_gate_inp_shexp.weight");
    const double sig = 1 / (1 + std::exp(-std::inner_product(x, x + dim, g.data(), 0.0)));
    const std::vector<double> o = swiglu_ffn(tensor(f, b + "ffn_gate_shexp.weight").data(), tensor(f, b + "ffn_up_shexp.weight").data(),
                                             tensor(f, b + "ffn_down_shexp.weight").data(), dim, c.n_ff_shexp, x);
    for (size_t j = 0; j < dim; ++j) y[j] += sig * o[j];
  }
  return y;
}

TEST(Moe, BlockEqualsAPlainReferenceFromTheFile) {
  for (const char* shape : {"tiny-qwen3moe", "tiny-qwen2moe", "tiny-olmoe"}) {
    Context ctx(2);
    const Model model = Model::load(synth(shape), {}, ctx.pool());
    const Config& c = model.config();
    const size_t m = 7, dim = c.n_embd;
    std::mt19937 rng(3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> x(m * dim), y(m * dim);
    for (float& v : x) v = nd(rng);
    for (size_t l = 0; l < c.n_layer; ++l) {
      MoeScratch s;
      s.size_for(c, m);
      moe_ffn(c, model.layers()[l].moe, l, m, x.data(), y.data(), s, ctx);
      for (size_t i = 0; i < m; ++i) {
        const std::vector<double> xi(x.begin() + static_cast<std::ptrdiff_t>(i * dim), x.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim));
        std::vector<uint32_t> chosen;
        const std::vector<double> want = reference(model.file(), c, l, xi.data(), &chosen);
        const double scale = std::abs(*std::max_element(want.begin(), want.end(), [](double a, double b) { return std::abs(a) < std::abs(b); }));
        for (size_t j = 0; j < dim; ++j) ASSERT_NEAR(y[i * dim + j], want[j], 1e-5 * scale) << shape << " layer " << l << " row " << i;
        if (i == 0) {
          EXPECT_EQ(std::vector<uint32_t>(s.last.begin() + static_cast<std::ptrdiff_t>(l * c.n_expert_used),
                                          s.last.begin() + static_cast<std::ptrdiff_t>((l + 1) * c.n_expert_used)),
                    chosen) << shape;
        }
      }
    }
  }
}

// The batch's rows grouped by expert (one GEMM per expert) give what one row at a time gives.
TEST(Moe, PrefillGroupedByExpertEqualsDecodeRowByRow) {
  for (const char* shape : {"tiny-qwen3moe", "tiny-qwen2moe", "tiny-olmoe"}) {
    Context ctx(2);
    const Model model = Model::load(synth(shape), {}, ctx.pool());
    const std::vector<int32_t> prompt = {1, 17, 300, 5, 99, 512, 7, 8, 900, 23, 42, 64};
    const size_t nv = model.config().n_vocab;
    State batch(model, 64, prompt.size(), ctx, 1, {KvType::f32, KvType::f32});
    const float* a = forward(model, batch, prompt.data(), prompt.size());
    const std::vector<float> want(a, a + nv);
    State single(model, 64, 1, ctx, 1, {KvType::f32, KvType::f32});
    const float* b = nullptr;
    for (int32_t t : prompt) b = forward(model, single, &t, 1);
    for (size_t i = 0; i < nv; ++i) ASSERT_NEAR(b[i], want[i], 1e-4) << shape << " logit " << i;
  }
}

// Decode steps of several sequences in one batch (the server's): an expert chosen by one row
// runs in the GEMV job, one chosen by several as a GEMM; each sequence gets what it gets alone.
TEST(Moe, SequencesDecodedTogetherEqualEachAlone) {
  Context ctx(2);
  const Model model = Model::load(synth("tiny-qwen3moe", WeightType::q8_0, 4), {}, ctx.pool());
  const size_t nv = model.config().n_vocab, n_seq = 5;
  std::vector<std::vector<float>> alone;
  for (size_t q = 0; q < n_seq; ++q) {
    State s(model, 32, 1, ctx, 1, {KvType::f32, KvType::f32});
    const float* l = nullptr;
    for (int32_t t : {int32_t(3 + q), int32_t(100 + 7 * q), int32_t(40)}) l = forward(model, s, &t, 1);
    alone.emplace_back(l, l + nv);
  }
  State s(model, 32, n_seq, ctx, n_seq, {KvType::f32, KvType::f32});
  const float* l = nullptr;
  for (uint32_t pos = 0; pos < 3; ++pos) {
    std::vector<int32_t> tokens;
    std::vector<BatchRow> rows;
    for (uint32_t q = 0; q < n_seq; ++q) {
      tokens.push_back(pos == 0 ? int32_t(3 + q) : pos == 1 ? int32_t(100 + 7 * q) : 40);
      rows.push_back({q, pos, pos == 2});
    }
    l = forward(model, s, tokens.data(), rows.data(), n_seq);
  }
  for (size_t q = 0; q < n_seq; ++q) {
    for (size_t i = 0; i < nv; ++i) ASSERT_NEAR(l[q * nv + i], alone[q][i], 1e-4) << "sequence " << q << " logit " << i;
  }
}

TEST(Moe, PackCacheHoldsTheExperts) {
  if (const KernelPair k = select_kernels(WeightType::q8_0, KernelFilter{}, cpu_info()); k.gemm && k.gemm->isa == Isa::sme2)
    GTEST_SKIP() << "SME2 weights are not cached (their layout depends on the SVL)";
  const std::string path = synth("tiny-qwen3moe", WeightType::q8_0), dir = temp("packs");
  std::filesystem::remove_all(dir);
  LoadOptions o;
  o.pack_cache = dir;
  o.pack_cache_min_bytes = 0;
  Context ctx(1);
  const std::vector<int32_t> prompt = {3, 1, 4, 1, 5, 9, 2, 6};
  std::vector<std::vector<float>> logits;
  for (int run = 0; run < 2; ++run) {
    const Model model = Model::load(path, o, ctx.pool());
    EXPECT_EQ(model.stats().from_pack_cache, run == 1);
    State s(model, 32, prompt.size(), ctx);
    const float* l = forward(model, s, prompt.data(), prompt.size());
    logits.emplace_back(l, l + model.config().n_vocab);
  }
  EXPECT_EQ(logits[0], logits[1]);
}

// A token reads the dense weights and expert_used_count of expert_count experts per layer.
TEST(Moe, ActiveWeightsOfAToken) {
  Context ctx(1);
  const Model model = Model::load(synth("tiny-qwen2moe", WeightType::q8_0), {}, ctx.pool());
  const Config& c = model.config();
  const LoadStats& st = model.stats();
  size_t experts = 0;
  for (const Layer& L : model.layers()) {
    for (size_t e = 0; e < c.n_expert; ++e) experts += L.moe.gate_up[e].parts[0].bytes() + L.moe.down[e].bytes();
  }
  EXPECT_NEAR(static_cast<double>(st.active_bytes),
              static_cast<double>(st.packed_bytes - experts) + static_cast<double>(experts * c.n_expert_used) / static_cast<double>(c.n_expert), 2.0);
  State s(model, 16, 1, ctx);
  const int32_t t = 5;
  forward(model, s, &t, 1);
  std::vector<const PackedWeights*> read;
  decode_weights(model, s, read);
  size_t bytes = 0;
  for (const PackedWeights* w : read) bytes += w->bytes();
  // qkv (3 parts: Q8_0 Q/K/V in one type = 1 part), wo, router, k × (gate|up, down), shared gate|up and down, per layer; output.
  EXPECT_EQ(read.size(), c.n_layer * (1 + 1 + 1 + 2 * c.n_expert_used + 2) + 1);
  EXPECT_LT(bytes, st.packed_bytes);
  for (size_t l = 0; l < c.n_layer; ++l) {
    for (size_t sl = 0; sl < c.n_expert_used; ++sl) EXPECT_LT(s.moe().last[l * c.n_expert_used + sl], c.n_expert);
  }
}

TEST(Moe, HostileKeysAndShapesAreOneLineErrors) {
  const std::string src = synth("tiny-qwen3moe", WeightType::q8_0);
  ASSERT_EQ(load_error(src), "");
  auto with = [&](const std::function<void(test::ModelCopy&)>& edit, const std::function<std::string(const std::string&)>& rename = {}) {
    test::ModelCopy m(src, rename);
    edit(m);
    return m.write(temp("edited.gguf"));
  };
  EXPECT_TRUE(fails_with(with([](auto& m) { m.writer().set_u32("qwen3moe.expert_used_count", 17); }),
                         "qwen3moe.expert_used_count = 17 exceeds qwen3moe.expert_count = 16"));
  EXPECT_TRUE(fails_with(with([](auto& m) { m.writer().set_u32("qwen3moe.expert_count", 0); }),
                         "qwen3moe.expert_count = 0 is out of range (1..1024)"));
  EXPECT_TRUE(fails_with(with([](auto& m) { m.writer().set_u32("qwen3moe.expert_used_count", 0); }),
                         "qwen3moe.expert_used_count = 0 is out of range"));
  EXPECT_TRUE(fails_with(with([](auto& m) { m.writer().set_u32("qwen3moe.expert_count", 100000); }), "out of range (1..1024)"));
  EXPECT_TRUE(fails_with(with([](auto& m) { m.writer().set_u32("qwen3moe.expert_feed_forward_length", 0); }),
                         "qwen3moe.expert_feed_forward_length = 0 is out of range"));
  // Fewer experts claimed than the tensors hold: the router's shape is checked first.
  EXPECT_TRUE(fails_with(with([](auto& m) { m.writer().set_u32("qwen3moe.expert_count", 8); }),
                         "tensor 'blk.0.ffn_gate_inp.weight' has shape [64, 16], expected [64, 8]"));
  // One 3-D tensor with an expert too few, one with its expert width and n_embd swapped.
  EXPECT_TRUE(fails_with(with([](auto& m) { m.add_f32("blk.1.ffn_down_exps.weight", {64, 64, 15}, 0.0f); },
                              [](const std::string& n) { return n == "blk.1.ffn_down_exps.weight" ? "" : n; }),
                         "tensor 'blk.1.ffn_down_exps.weight' has shape [64, 64, 15], expected [64, 64, 16]"));
  EXPECT_TRUE(fails_with(with([](auto& m) { m.add_f32("blk.0.ffn_up_exps.weight", {64, 16}, 0.0f); },
                              [](const std::string& n) { return n == "blk.0.ffn_up_exps.weight" ? "" : n; }),
                         "tensor 'blk.0.ffn_up_exps.weight' has shape [64, 16], expected [64, 64, 16]"));
  EXPECT_TRUE(fails_with(with([](auto&) {}, [](const std::string& n) { return n == "blk.1.ffn_gate_exps.weight" ? "" : n; }),
                         "tensor 'blk.1.ffn_gate_exps.weight' missing"));
  // Keys llama.cpp ignores for qwen3moe: a value that would make it another model is refused.
  EXPECT_TRUE(fails_with(with([](auto& m) { m.writer().set_f32("qwen3moe.expert_weights_scale", 2.5f); }),
                         "qwen3moe.expert_weights_scale = 2.5"));
  EXPECT_TRUE(fails_with(with([](auto& m) { m.writer().set_bool("qwen3moe.expert_weights_norm", false); }),
                         "qwen3moe.expert_weights_norm = false, but qwen3moe always renormalises"));
  EXPECT_TRUE(fails_with(with([](auto& m) { m.writer().set_u32("qwen3moe.expert_gating_func", 2); }),
                         "qwen3moe.expert_gating_func = 2"));
  EXPECT_EQ(load_error(with([](auto& m) {
              m.writer().set_f32("qwen3moe.expert_weights_scale", 1.0f);
              m.writer().set_bool("qwen3moe.expert_weights_norm", true);
              m.writer().set_u32("qwen3moe.expert_gating_func", 1);
            })),
            "");
  // OLMoE's experts are feed_forward_length wide (llama.cpp reads no expert_feed_forward_length for it).
  const std::string olmoe = synth("tiny-olmoe", WeightType::q8_0);
  test::ModelCopy o(olmoe);
  o.writer().set_u32("olmoe.expert_feed_forward_length", 32);
  EXPECT_TRUE(fails_with(o.write(temp("olmoe.gguf")), "olmoe.expert_feed_forward_length differs from olmoe.feed_forward_length"));
  // A mixture-of-experts file of a dense family (Mixtral is llama with experts).
  QMM_REQUIRE_STORIES260K();
  test::ModelCopy mixtral(test::stories260k_path());
  mixtral.writer().set_u32("llama.expert_count", 8);
  EXPECT_TRUE(fails_with(mixtral.write(temp("mixtral.gguf")), "llama.expert_count = 8: mixture-of-experts llama models are not supported"));
}

// `--convert` leaves the router in its type (llama.cpp's quantizer never converts it), and so does
// `qmm quantize`; an expert's down projection counts as ffn_down in the K-quant mixes.
TEST(Moe, RouterKeepsItsTypeAndDownExpertsFollowTheMix) {
  Context ctx(1);
  LoadOptions o;
  o.convert_to = WeightType::q8_0;
  const Model model = Model::load(synth("tiny-qwen3moe"), o, ctx.pool());
  EXPECT_EQ(model.layers()[0].moe.router.type(), WeightType::f32);
  EXPECT_EQ(model.layers()[0].moe.down[3].type(), WeightType::q8_0);
  gguf::TensorInfo router;
  router.name = "blk.0.ffn_gate_inp.weight";
  router.type = gguf::kF32;
  router.shape = {2048, 128};
  EXPECT_EQ(gguf::quantized_type(router, WeightType::q4_0), gguf::kF32);
  gguf::QuantTarget km(WeightType::q4_k);
  km.k_m = true;
  km.n_layer = 48;
  EXPECT_EQ(gguf::weight_type("blk.0.ffn_down_exps.weight", 768, km, gguf::kF32), gguf::kQ6_K);
  EXPECT_EQ(gguf::weight_type("blk.7.ffn_down_exps.weight", 768, km, gguf::kF32), gguf::kQ4_K);  // (7 - 48/8) % 3 != 2
  EXPECT_EQ(gguf::weight_type("blk.0.ffn_down_shexp.weight", 768, km, gguf::kF32), gguf::kQ6_K);
  EXPECT_EQ(gguf::weight_type("blk.0.ffn_up_exps.weight", 2048, km, gguf::kF32), gguf::kQ4_K);
}

}  // namespace
}  // namespace qmm::llm

namespace qmm::llm {
namespace {

// matmul_group gives each product the bits matmul() gives it, for any thread count: one-row
// products sharing an input (packed once), several-row ones with row strides, several types.
TEST(Moe, MatmulGroupEqualsOneMatmulPerProduct) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& e : v) e = nd(rng);
    return v;
  };
  const size_t k = 256, lhs_stride = 300, dst_pad = 5;
  std::vector<PackedWeights> ws;
  std::vector<std::vector<uint8_t>> bytes;
  const std::pair<WeightType, size_t> shapes[] = {{WeightType::q4_0, 1000}, {WeightType::q8_0, 333}, {WeightType::f32, 96},
                                                  {WeightType::q4_0, 4096}, {WeightType::q4_0, 17},  {WeightType::q8_0, 130}};
  const size_t rows[] = {1, 1, 1, 1, 3, 70};  // (the first three share one input; the last two are GEMMs)
  for (const auto& [type, n] : shapes) {
    const std::vector<float> f = random(n * k);
    bytes.emplace_back(row_bytes(type, k) * n);
    quantize_rows(type, f.data(), bytes.back().data(), n, k);
    ws.push_back(PackedWeights::pack(type, n, k, bytes.back().data(), {}));
  }
  const std::vector<float> a = random(70 * lhs_stride), b = random(k);
  const float* inputs[] = {a.data(), a.data(), a.data(), b.data(), a.data(), a.data()};
  for (int threads : {1, 2, 3}) {
    Context ctx(threads);
    std::vector<std::vector<float>> got, want;
    std::vector<MatmulPart> parts;
    for (size_t i = 0; i < ws.size(); ++i) {
      const size_t ds = ws[i].n() + dst_pad;
      got.emplace_back(rows[i] * ds, NAN);
      want.emplace_back(rows[i] * ds, NAN);
      matmul(ws[i], rows[i], inputs[i], lhs_stride * sizeof(float), want[i].data(), ds * sizeof(float), -INFINITY, INFINITY, ctx);
      parts.push_back({&ws[i], rows[i], inputs[i], nullptr, lhs_stride, ds});
    }
    for (size_t i = 0; i < ws.size(); ++i) parts[i].dst = got[i].data();
    matmul_group(parts, ctx, &ws[0]);
    for (size_t i = 0; i < ws.size(); ++i) {
      for (size_t j = 0; j < got[i].size(); ++j) {  // (NaN padding equal too: memcmp-like)
        ASSERT_TRUE(got[i][j] == want[i][j] || (std::isnan(got[i][j]) && std::isnan(want[i][j])))
            << "product " << i << " value " << j << ", " << threads << " threads";
      }
    }
  }
}

// --trace's timing: matmul() reports each call once, when it is done, with a time inside the
// caller's; a group reports each product with a share of the group's time in proportion to
// rows x packed bytes, the shares summing to the group's time.
TEST(MatmulTrace, CallsAreTimedAndAGroupsTimeIsShared) {
  struct Seen {
    std::vector<std::pair<const PackedWeights*, size_t>> calls;
    std::vector<double> seconds;
  } seen;
  auto observe = [](void* u, const PackedWeights& w, size_t m, double s) {
    auto* t = static_cast<Seen*>(u);
    t->calls.push_back({&w, m});
    t->seconds.push_back(s);
  };
  const size_t k = 256;
  std::vector<PackedWeights> ws;
  std::vector<std::vector<uint8_t>> bytes;
  for (size_t n : {512, 1536}) {
    const std::vector<float> f(n * k, 0.25f);
    bytes.emplace_back(row_bytes(WeightType::q8_0, k) * n);
    quantize_rows(WeightType::q8_0, f.data(), bytes.back().data(), n, k);
    ws.push_back(PackedWeights::pack(WeightType::q8_0, n, k, bytes.back().data(), {}));
  }
  const std::vector<float> x(4 * k, 1.0f);
  std::vector<float> y(4 * 1536);
  Context ctx(2);
  set_matmul_trace(observe, &seen);
  auto t0 = std::chrono::steady_clock::now();
  matmul(ws[1], 4, x.data(), k * sizeof(float), y.data(), 1536 * sizeof(float), -INFINITY, INFINITY, ctx);
  const double outside = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(seen.calls.size(), 1u);
  EXPECT_EQ(seen.calls[0].first, &ws[1]);
  EXPECT_EQ(seen.calls[0].second, 4u);
  EXPECT_GT(seen.seconds[0], 0.0);
  EXPECT_LE(seen.seconds[0], outside);

  seen = {};
  std::vector<float> y0(2 * 512), y1(1536);
  const MatmulPart parts[] = {{&ws[0], 2, x.data(), y0.data(), 0, 0}, {&ws[1], 1, x.data(), y1.data(), 0, 0}};
  t0 = std::chrono::steady_clock::now();
  matmul_group(parts, ctx);
  const double group = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  set_matmul_trace(nullptr, nullptr);
  ASSERT_EQ(seen.calls.size(), 2u);
  EXPECT_EQ(seen.calls[0].first, &ws[0]);
  EXPECT_EQ(seen.calls[1].first, &ws[1]);
  EXPECT_LE(seen.seconds[0] + seen.seconds[1], group);
  // rows x bytes: 2 x 512 columns against 1 x 1536: shares 2 : 3
  EXPECT_NEAR(seen.seconds[0] / seen.seconds[1], 2.0 / 3.0, 1e-9);
}

}  // namespace
}  // namespace qmm::llm
