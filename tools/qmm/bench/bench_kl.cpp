// qmm bench kl: how far a weight type moves a model's next-token distribution. The model is
// loaded once dequantized to F32 (--convert f32: the reference) and once per type of --types
// (converted at load, as qmm run --convert); the reference decodes a prompt and then greedily
// -n more tokens, and every model is fed the same tokens one at a time (the decode path). At
// each position: KL(P_f32 || P_type) = Σ p (ln p - ln q) of the softmaxed logits (in double),
// and whether the top token agrees. Reported per type: mean and largest KL over the positions,
// top-1 agreement, packed weight bytes. The type `file` keeps the file's own types (a Q4_K_M
// mix): against its own dequantization, the kernels' error alone.
// With -ctk / -ctv (lists of KV cache types, paired in order) the same for the KV cache: the
// model as its file has it, the reference decoding with an F32 cache, each K/V pair compared.
// With --prefill-from N the positions from N - 1 on are scored through the prefill path
// instead: each prefix is run as one batch of ≥ N rows (the GEMMs; the reference still
// decodes). With --vs-disable LIST every type is scored again with LIST disabled as well
// (e.g. amxbf16: the BF16 prefill GEMMs against the int8 ones, in one run; LIST/LIST2: once
// per list, all against the one reference).
#include <algorithm>
#include <cmath>
#include <optional>
#include <cstdio>
#include <string>
#include <vector>

#include "qmm/cli/args.h"
#include "bench_verbs.h"
#include "llm/model.h"
#include "text/tokenizer.h"
#include "qmm/cli/llm_session.h"
#include "qmm/cli/llm_util.h"

namespace qmm::cli {
namespace {

// ln softmax(logits) in double.
std::vector<double> log_softmax(const float* logits, size_t n) {
  const double mx = *std::max_element(logits, logits + n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - mx);
  const double lse = mx + std::log(sum);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(logits[i]) - lse;
  return out;
}

struct Sequence {
  std::vector<int32_t> tokens;
  std::vector<std::vector<double>> ref;  // ln P_f32 after each token
};

// Feeds `tokens` one at a time; calls at(i, logits) after token i.
template <class F>
void decode_each(const llm::Model& m, Context& ctx, const std::vector<int32_t>& tokens, F at, llm::KvTypes kv = {}) {
  llm::State s(m, tokens.size() + 1, 1, ctx, 1, kv);
  for (size_t i = 0; i < tokens.size(); ++i) at(i, llm::forward(m, s, &tokens[i], 1));
}

// Scores tokens[i] from position `from` on: fed one at a time (from 0: the decode path), or
// each prefix tokens[0..i] as one fresh batch (the prefill path). Calls at(i, logits).
template <class F>
void score_each(const llm::Model& m, Context& ctx, const std::vector<int32_t>& tokens, size_t prefill_from, F at,
                llm::KvTypes kv = {}) {
  if (prefill_from == 0) return decode_each(m, ctx, tokens, at, kv);
  llm::State s(m, tokens.size() + 1, tokens.size(), ctx, 1, kv);
  for (size_t i = prefill_from - 1; i < tokens.size(); ++i) {
    s.reset();
    at(i, llm::forward(m, s, tokens.data(), i + 1));
  }
}

llm::Model load(const std::string& path, std::optional<WeightType> type, const KernelFilter& filter, Context& ctx) {
  llm::LoadOptions opt;
  opt.filter = filter;
  opt.convert_to = type;
  return llm::Model::load(path, opt, ctx.pool());
}

// The GEMV of layer L's FFN down projection (its first expert's in an MoE layer), or the GEMM
// a batch of `rows` rows runs (rows > 0).
const char* down_kernel(const llm::Layer& L, size_t rows) {
  const PackedWeights& w = L.moe.down.empty() ? L.w_down : L.moe.down[0];
  return w.kernel_for(rows ? rows : 1).name;
}

}  // namespace

int bench_kl(int argc, char** argv) {
  std::string model_path, kernels, disable, types = "qc8,qc4,q8_0,q4_0", prompt = "Once upon a time";
  std::string ctk, ctv, vs_disable;
  size_t n_gen = 64, threads = 1, prefill_from = 0;
  Args args("bench kl",
            "KL divergence of the next-token distribution of each --types conversion from the same model dequantized\n"
            "to F32, over a prompt and -n tokens the F32 model decodes greedily (all models read the same tokens).",
            argc - 1, argv + 1);
  args.str("-m,--model", &model_path, "FILE", "GGUF model (required)")
      .str("--types", &types, "LIST", "weight types to compare, `file`: the file's own (default qc8,qc4,q8_0,q4_0)")
      .str("-p,--prompt", &prompt, "TEXT", "prompt (default \"Once upon a time\")")
      .count("-n,--n-gen", &n_gen, "tokens the F32 model decodes after the prompt (default 64)")
      .size("-t,--threads", &threads, "threads (default 1)")
      .str("--kernels", &kernels, "LIST", "allow only these ISAs / variants (like QMM_KERNELS)")
      .str("--disable", &disable, "LIST", "exclude these ISAs / variants (like QMM_DISABLE)")
      .size("--prefill-from", &prefill_from, "score positions from N-1 on, each prefix prefilled as one batch of >= N rows")
      .str("--vs-disable", &vs_disable, "LIST",
           "score each type again with these ISAs / variants also disabled (lists split by /: once per list)")
      .str("-ctk,--cache-type-k", &ctk, "LIST", "compare KV caches instead: key types (f16, q8_0, q4_0, f32) against an F32 cache")
      .str("-ctv,--cache-type-v", &ctv, "LIST", "the value types, paired with -ctk in order (one of either list applies to all)");
  args.parse();
  if (model_path.empty()) throw UsageError("-m/--model is required");
  if (threads > 1024) throw UsageError("-t must be at most 1024");
  if (n_gen > 65536) throw UsageError("-n must be at most 65536");
  auto list = [](const std::string& s) {
    std::vector<std::string> out;
    for (size_t b = 0; b <= s.size();) {
      const size_t e = std::min(s.find(',', b), s.size());
      out.push_back(s.substr(b, e - b));
      b = e + 1;
    }
    return out;
  };
  const bool kv_mode = !ctk.empty() || !ctv.empty();
  std::vector<std::optional<WeightType>> targets;
  std::vector<llm::KvTypes> kv_pairs;
  if (kv_mode) {
    const std::vector<std::string> ks = list(ctk.empty() ? "f16" : ctk), vs = list(ctv.empty() ? "f16" : ctv);
    if (ks.size() != vs.size() && ks.size() != 1 && vs.size() != 1) throw UsageError("-ctk and -ctv list different numbers of types");
    for (size_t i = 0; i < std::max(ks.size(), vs.size()); ++i) {
      KvFlags f{ks[ks.size() == 1 ? 0 : i], vs[vs.size() == 1 ? 0 : i]};
      kv_pairs.push_back(f.types());
    }
  } else {
    for (const std::string& t : list(types)) targets.push_back(t == "file" ? std::nullopt : std::optional(convert_type(t)));
  }
  const KernelFilter filter = kernel_overrides(kernels, disable, "--kernels/--disable");
  std::vector<std::pair<std::string, KernelFilter>> filters{{"", filter}};
  for (size_t b = 0; !vs_disable.empty() && b <= vs_disable.size();) {
    const size_t e = std::min(vs_disable.find('/', b), vs_disable.size());
    const std::string more = vs_disable.substr(b, e - b);
    if (more.empty()) throw UsageError("--vs-disable has an empty list");
    filters.emplace_back(" -" + more, kernel_overrides(kernels, disable.empty() ? more : disable + "," + more, "--vs-disable"));
    b = e + 1;
  }
  Context ctx(static_cast<int>(threads));

  Sequence seq;
  {
    const llm::Model ref = load(model_path, kv_mode ? std::nullopt : std::optional(WeightType::f32), filter, ctx);
    const llm::Tokenizer tok = llm::Tokenizer::from_gguf(ref.file());
    seq.tokens = tok.encode(prompt, true);
    if (seq.tokens.empty()) throw UsageError("the prompt has no tokens");
    const size_t n_vocab = ref.config().n_vocab, total = seq.tokens.size() + n_gen;
    llm::State s(ref, total + 1, 1, ctx, 1, {llm::KvType::f32, llm::KvType::f32});
    for (size_t i = 0; i < total && i < seq.tokens.size(); ++i) {
      const float* l = llm::forward(ref, s, &seq.tokens[i], 1);
      seq.ref.push_back(log_softmax(l, n_vocab));
      if (i + 1 == seq.tokens.size() && seq.tokens.size() < total) {
        seq.tokens.push_back(static_cast<int32_t>(std::max_element(l, l + n_vocab) - l));
      }
    }
    if (prefill_from > seq.ref.size()) {
      throw UsageError("--prefill-from " + std::to_string(prefill_from) + " is beyond the " + std::to_string(seq.ref.size()) +
                       " positions (prompt + -n)");
    }
    std::printf("model %s (%s, vocab %zu): %zu positions (prompt \"%s\" + %zu greedy tokens, F32 %s), %zu thread%s\n\n",
                model_path.c_str(), ref.config().arch.c_str(), n_vocab, seq.ref.size(), prompt.c_str(), n_gen,
                kv_mode ? "KV cache" : "weights", threads,
                threads == 1 ? "" : "s");
  }
  // KL(P_ref || P) and top-1 agreement at each position.
  struct Score {
    double sum = 0, worst = 0;
    size_t agree = 0, n = 0;
    double mean() const { return n ? sum / static_cast<double>(n) : 0; }
    double agreement() const { return n ? 100.0 * static_cast<double>(agree) / static_cast<double>(n) : 0; }
    void add(const std::vector<double>& p, const float* l, size_t n_vocab) {
      const std::vector<double> q = log_softmax(l, n_vocab);
      double kl = 0;
      for (size_t v = 0; v < n_vocab; ++v) kl += std::exp(p[v]) * (p[v] - q[v]);
      sum += kl;
      ++n;
      worst = std::max(worst, kl);
      agree += std::max_element(p.begin(), p.end()) - p.begin() == std::max_element(q.begin(), q.end()) - q.begin();
    }
  };
  if (prefill_from > 0) {
    std::printf("scored: positions %zu..%zu, each prefix prefilled as one batch\n\n", prefill_from - 1, seq.ref.size() - 1);
  }
  if (kv_mode) {
    const llm::Model m = load(model_path, std::nullopt, filter, ctx);
    std::printf("| K | V | mean KL | max KL | top-1 agreement | KV KiB per token |\n|---|---|---|---|---|---|\n");
    for (const llm::KvTypes& kv : kv_pairs) {
      Score sc;
      score_each(m, ctx, seq.tokens, prefill_from, [&](size_t i, const float* l) { sc.add(seq.ref[i], l, m.config().n_vocab); }, kv);
      std::printf("| %s | %s | %.3g | %.3g | %.1f%% | %.2f |\n", llm::kv_type_name(kv.k), llm::kv_type_name(kv.v), sc.mean(), sc.worst,
                  sc.agreement(), static_cast<double>(llm::State::kv_bytes_per_token(m.config(), kv)) / 1024);
    }
    return 0;
  }
  std::printf("| type | mean KL | max KL | top-1 agreement | packed MiB | FFN down %s |\n|---|---|---|---|---|---|\n",
              prefill_from ? "GEMM" : "GEMV");
  for (const std::optional<WeightType>& t : targets) {
    for (const auto& [label, f] : filters) {
      const llm::Model m = load(model_path, t, f, ctx);
      const size_t n_vocab = m.config().n_vocab;
      Score sc;
      score_each(m, ctx, seq.tokens, prefill_from, [&](size_t i, const float* l) { sc.add(seq.ref[i], l, n_vocab); });
      std::printf("| %s%s | %.3g | %.3g | %.1f%% | %.2f | %s |\n", t ? type_name(*t) : "file", label.c_str(), sc.mean(), sc.worst,
                  sc.agreement(), static_cast<double>(m.stats().packed_bytes) / (1 << 20), down_kernel(m.layers()[0], prefill_from));
      std::fflush(stdout);  // (a row per model: long runs show their progress)
    }
  }
  return 0;
}

}  // namespace qmm::cli
