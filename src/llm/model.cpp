// Model loading: GGUF metadata -> Config, every 2-D weight packed once (model.h).
#include "llm/model.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>

#include "core/error.h"

namespace qmm::llm {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// Architectures whose tensors and keys are those of llama.cpp's LLM_ARCH_LLAMA.
bool llama_like(std::string_view arch) { return arch == "llama" || arch == "mistral"; }

// The weight types the kernels take as they are.
std::optional<WeightType> native_type(uint32_t ggml) {
  switch (ggml) {
    case gguf::kF32: return WeightType::f32;
    case gguf::kF16: return WeightType::f16;
    case gguf::kQ4_0: return WeightType::q4_0;
    case gguf::kQ8_0: return WeightType::q8_0;
    case gguf::kQ4_K: return WeightType::q4_k;
    case gguf::kQ5_K: return WeightType::q5_k;
    case gguf::kQ6_K: return WeightType::q6_k;
    case gguf::kIQ4_NL: return WeightType::iq4_nl;
    default: return std::nullopt;
  }
}

// Gives the mapped pages of [p, p + bytes) back to the kernel (they are reread from the page
// cache if touched again), so the packed copy is the only one the process holds.
void release_pages(const void* p, size_t bytes) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

[[noreturn]] void unloadable(const gguf::TensorInfo& t) {
  fail(Status::unsupported, "tensor '" + t.name + "' has type " + gguf::ggml_type_name(t.type) +
                                ", which qmm cannot load (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, q6_K, iq4_nl)");
}

class Loader {
 public:
  Loader(const gguf::File& f, const LoadOptions& opt, ThreadPool& pool, LoadStats& stats)
      : f_(f), opt_(opt), pool_(pool), stats_(stats) {
    for (const auto& t : f.tensors()) total_ += t.bytes;
  }

  // A 1-D F32 vector of `len` values (norm gains, RoPE factors).
  std::vector<float> vec(const std::string& name, size_t len) {
    const gguf::TensorInfo& t = f_.tensor(name);
    check(t, t.shape.size() == 1 && t.shape[0] == len, "shape [" + std::to_string(len) + "]");
    std::vector<float> v(len);
    if (!gguf::ggml_can_dequantize(t.type)) unloadable(t);
    gguf::dequantize_rows(t.type, t.data, v.data(), 1, len);
    done(t);
    return v;
  }

  // Matmul weights of k columns applied to the same input, each [n_i, k], packed as one matrix
  // over their concatenated rows when they end up in one type (else one per part).
  Fused matrices(const std::vector<const gguf::TensorInfo*>& ts, const std::vector<size_t>& ns, size_t k) {
    const double t0 = now();
    std::vector<WeightType> targets;
    for (size_t i = 0; i < ts.size(); ++i) {
      const gguf::TensorInfo& t = *ts[i];
      check(t, t.shape.size() == 2 && t.shape[0] == k && t.shape[1] == ns[i],
            "shape [" + std::to_string(k) + ", " + std::to_string(ns[i]) + "]");
      targets.push_back(target_type(t, k));
    }
    Fused f;
    const bool one_type = std::all_of(targets.begin(), targets.end(), [&](WeightType t) { return t == targets[0]; });
    if (ts.size() == 1 || !one_type) {
      for (size_t i = 0; i < ts.size(); ++i) f.parts.push_back(pack_rows(*ts[i], targets[i], ns[i], k));
    } else {
      size_t n = 0;
      for (size_t rows : ns) n += rows;
      const size_t row = row_bytes(targets[0], k);
      AlignedBuffer all(checked_mul(n, row, "fused weight"));
      size_t r = 0;
      for (size_t i = 0; i < ts.size(); ++i) {
        trace_tensor(*ts[i], targets[0], ns[i], k);
        rows_into(*ts[i], targets[0], ns[i], k, all.data() + r * row);
        r += ns[i];
      }
      f.parts.push_back(PackedWeights::pack(targets[0], n, k, all.data(), opt_.filter, &pool_));
      if (opt_.trace) {
        opt_.trace("    -> fused [n=" + std::to_string(n) + " k=" + std::to_string(k) + "] " + type_name(targets[0]) +
                   "  " + f.parts[0].gemm().rhs->name + "  " + mib(f.parts[0].bytes()));
      }
    }
    for (size_t i = 0; i < ts.size(); ++i) {
      release_pages(ts[i]->data, ts[i]->bytes);
      done(*ts[i]);
    }
    for (const PackedWeights& w : f.parts) {
      stats_.packed_bytes += w.bytes();
      stats_.matmul_ops += 2 * w.n() * w.k();
      if (is_block_type(w.type())) stats_.int8_ops += 2 * w.n() * w.k();
    }
    stats_.pack_seconds += now() - t0;
    return f;
  }

  PackedWeights matrix(const gguf::TensorInfo& t, size_t n, size_t k) {
    Fused f = matrices({&t}, {n}, k);
    return std::move(f.parts[0]);
  }

  // Bytes counted for the progress bar without packing (the embedding, read on lookup).
  void done(const gguf::TensorInfo& t) {
    done_ += t.bytes;
    if (opt_.progress) opt_.progress(done_, total_);
  }

 private:
  // The type a weight is packed in: the --convert type where it fits, else its own type
  // when the kernels take it, else (dequantized) Q8_0, or F16 when k is not a multiple of 32.
  WeightType target_type(const gguf::TensorInfo& t, size_t k) {
    if (opt_.convert_to && k % block_len(*opt_.convert_to) == 0) return *opt_.convert_to;
    if (const std::optional<WeightType> native = native_type(t.type)) return *native;
    if (gguf::ggml_can_dequantize(t.type)) return k % kBlock == 0 ? WeightType::q8_0 : WeightType::f16;
    unloadable(t);
  }

  // "q4_1 -> q8_0" for each conversion not asked for by --convert, once (LoadStats::converted).
  void note_conversion(const gguf::TensorInfo& t, WeightType target) {
    if (opt_.convert_to || native_type(t.type) == target) return;
    const std::string c = std::string(gguf::ggml_type_name(t.type)) + " -> " + type_name(target);
    if (stats_.converted.find(c) == std::string::npos) stats_.converted += (stats_.converted.empty() ? "" : ", ") + c;
  }

  void trace_tensor(const gguf::TensorInfo& t, WeightType target, size_t n, size_t k) {
    note_conversion(t, target);
    if (!opt_.trace) return;
    std::string line = "  " + t.name + "  " + gguf::ggml_type_name(t.type) + " [n=" + std::to_string(n) + " k=" +
                       std::to_string(k) + "]";
    const std::optional<WeightType> native = native_type(t.type);
    if (!native || *native != target) {
      line += std::string("  ") + (native ? "converted " : "dequantized ") + gguf::ggml_type_name(t.type) + " -> " +
              type_name(target);
    }
    opt_.trace(line);
  }

  // One weight packed alone (straight from the mapping when no conversion is needed and the
  // data is 4-byte aligned: a file with general.alignment 1 may place it anywhere, and the
  // packers read f16 / f32 / block fields in place).
  PackedWeights pack_rows(const gguf::TensorInfo& t, WeightType target, size_t n, size_t k) {
    trace_tensor(t, target, n, k);
    PackedWeights w;
    if (native_type(t.type) == target && reinterpret_cast<uintptr_t>(t.data) % 4 == 0) {
      w = PackedWeights::pack(target, n, k, t.data, opt_.filter, &pool_);
    } else {
      AlignedBuffer rows(checked_mul(n, row_bytes(target, k), "converted weight"));
      rows_into(t, target, n, k, rows.data());
      w = PackedWeights::pack(target, n, k, rows.data(), opt_.filter, &pool_);
    }
    if (opt_.trace) opt_.trace(std::string("    -> ") + w.gemm().rhs->name + "  " + mib(w.bytes()));
    return w;
  }

  // The rows of t as rows of `target` at dst: copied when the type is the same, else
  // dequantized and requantized in chunks of rows across the pool.
  void rows_into(const gguf::TensorInfo& t, WeightType target, size_t n, size_t k, uint8_t* dst) {
    if (native_type(t.type) == target) {
      std::memcpy(dst, t.data, n * row_bytes(target, k));
      return;
    }
    const size_t in_row = gguf::ggml_row_bytes(t.type, k), out_row = row_bytes(target, k);
    const size_t chunk = std::max<size_t>(1, (size_t{1} << 20) / k);  // 4 MiB of F32 per task
    std::vector<std::vector<float>> tmp(static_cast<size_t>(pool_.threads()));
    pool_.parallel_for((n + chunk - 1) / chunk, [&](size_t c, int tid) {
      const size_t r0 = c * chunk, rows = std::min(chunk, n - r0);
      std::vector<float>& f = tmp[static_cast<size_t>(tid)];
      f.resize(chunk * k);
      gguf::dequantize_rows(t.type, t.data + r0 * in_row, f.data(), rows, k);
      quantize_rows(target, f.data(), dst + r0 * out_row, rows, k);
    });
  }

  void check(const gguf::TensorInfo& t, bool ok, const std::string& expected) {
    if (ok) return;
    std::string got;
    for (uint64_t d : t.shape) got += (got.empty() ? "" : ", ") + std::to_string(d);
    fail(Status::io, f_.path() + ": tensor '" + t.name + "' has shape [" + got + "], expected " + expected);
  }

  const gguf::File& f_;
  const LoadOptions& opt_;
  ThreadPool& pool_;
  LoadStats& stats_;
  size_t total_ = 0, done_ = 0;
};

size_t get_size(const gguf::File& f, const std::string& key) {
  const uint64_t v = f.get_u64(key);
  check_arg(v > 0 && v < (uint64_t{1} << 31), f.path() + ": " + key + " = " + std::to_string(v) + " is out of range");
  return static_cast<size_t>(v);
}

Config read_config(const gguf::File& f) {
  Config c;
  c.arch = std::string(f.get_string("general.architecture"));
  if (!llama_like(c.arch)) {
    fail(Status::unsupported, f.path() + ": architecture '" + c.arch + "' is not supported (llama-family models only)");
  }
  const std::string a = c.arch + ".";
  c.n_embd = get_size(f, a + "embedding_length");
  c.n_layer = get_size(f, a + "block_count");
  c.n_ff = get_size(f, a + "feed_forward_length");
  c.n_head = get_size(f, a + "attention.head_count");
  c.n_head_kv = f.has(a + "attention.head_count_kv") ? get_size(f, a + "attention.head_count_kv") : c.n_head;
  c.n_ctx_train = f.has(a + "context_length") ? get_size(f, a + "context_length") : 2048;
  auto bad = [&](const std::string& what) { fail(Status::io, f.path() + ": " + what); };
  if (c.n_embd % c.n_head != 0) bad("embedding_length is not a multiple of head_count");
  if (c.n_head % c.n_head_kv != 0) bad("head_count is not a multiple of head_count_kv");
  c.head_dim = c.n_embd / c.n_head;
  if (f.has(a + "attention.key_length") && f.get_u64(a + "attention.key_length") != c.head_dim) {
    bad("attention.key_length differs from embedding_length / head_count (not supported)");
  }
  c.n_rot = f.has(a + "rope.dimension_count") ? get_size(f, a + "rope.dimension_count") : c.head_dim;
  if (c.n_rot > c.head_dim || c.n_rot % 2 != 0) bad("rope.dimension_count must be even and at most the head size");
  // A value that makes the math meaningless (0, negative, NaN, Inf, or beyond float) is an error.
  auto positive = [&](const std::string& key, double def) {
    const double v = f.find_f64(key).value_or(def);
    const auto x = static_cast<float>(v);
    if (!(x > 0) || !std::isfinite(x)) bad(key + " = " + std::to_string(v) + " must be a finite positive number");
    return x;
  };
  c.norm_eps = positive(a + "attention.layer_norm_rms_epsilon", 1e-5);
  c.rope_freq_base = positive(a + "rope.freq_base", 10000.0);
  if (auto type = f.find_string(a + "rope.scaling.type"); type && *type != "none") {
    if (*type != "linear") bad("rope.scaling.type '" + std::string(*type) + "' is not supported (linear only)");
    c.rope_freq_scale = 1.0f / positive(a + "rope.scaling.factor", 1.0);
  }
  const gguf::TensorInfo& emb = f.tensor("token_embd.weight");
  if (emb.shape.size() != 2 || emb.shape[0] != c.n_embd) bad("token_embd.weight must have shape [embedding_length, n_vocab]");
  c.n_vocab = static_cast<size_t>(emb.shape[1]);
  return c;
}

// Every tensor the model reads, present with the shape the hyper-parameters give it and a
// type qmm loads, checked before anything sized by the metadata is allocated: a file cannot
// claim more layers than it holds, nor hold layers beyond those it claims.
void check_tensors(const gguf::File& f, const Config& c) {
  auto need = [&](const std::string& name, std::vector<uint64_t> shape, bool optional = false) {
    const gguf::TensorInfo* t = f.find_tensor(name);
    if (!t && optional) return;
    if (!t) fail(Status::io, f.path() + ": tensor '" + name + "' missing");
    if (t->shape != shape) {
      auto dims = [](const std::vector<uint64_t>& s) {
        std::string r;
        for (uint64_t d : s) r += (r.empty() ? "" : ", ") + std::to_string(d);
        return "[" + r + "]";
      };
      fail(Status::io, f.path() + ": tensor '" + name + "' has shape " + dims(t->shape) + ", expected " + dims(shape));
    }
    if (!gguf::ggml_can_dequantize(t->type)) unloadable(*t);
  };
  static const char* const kLayerTensors[] = {"attn_norm", "attn_q",   "attn_k", "attn_v",  "attn_output",
                                              "ffn_norm",  "ffn_gate", "ffn_up", "ffn_down"};
  constexpr size_t kPerLayer = std::size(kLayerTensors);
  if (c.n_layer > f.tensors().size() / kPerLayer) {
    fail(Status::io, f.path() + ": block_count " + std::to_string(c.n_layer) + " needs " + std::to_string(kPerLayer) +
                         " tensors per layer, the file has " + std::to_string(f.tensors().size()) + " tensors");
  }
  for (const gguf::TensorInfo& t : f.tensors()) {  // blk.N.* with N >= block_count
    if (!t.name.starts_with("blk.")) continue;
    const size_t digits = t.name.find_first_not_of("0123456789", 4);
    if (digits == 4 || digits == std::string::npos || t.name[digits] != '.' || digits - 4 > 10 ||
        std::stoull(t.name.substr(4, digits - 4)) >= c.n_layer) {
      fail(Status::io, f.path() + ": tensor '" + t.name + "' is not part of layers 0.." + std::to_string(c.n_layer - 1) +
                           " (block_count " + std::to_string(c.n_layer) + ")");
    }
  }
  const uint64_t embd = c.n_embd, q = c.n_head * c.head_dim, kv = c.kv_dim(), ff = c.n_ff;
  const std::vector<uint64_t> shapes[kPerLayer] = {{embd}, {embd, q}, {embd, kv}, {embd, kv}, {q, embd},
                                                   {embd}, {embd, ff}, {embd, ff}, {ff, embd}};
  need("token_embd.weight", {embd, c.n_vocab});
  need("output_norm.weight", {embd});
  for (size_t l = 0; l < c.n_layer; ++l) {
    for (size_t i = 0; i < kPerLayer; ++i) need("blk." + std::to_string(l) + "." + kLayerTensors[i] + ".weight", shapes[i]);
  }
  need("output.weight", {embd, c.n_vocab}, true);
  need("rope_freqs.weight", {c.n_rot / 2}, true);
}

}  // namespace

Model Model::load(const std::string& path, const LoadOptions& opt, ThreadPool& pool) {
  const double t0 = now();
  Model m(gguf::File::open(path));
  const gguf::File& f = m.file_;
  m.cfg_ = read_config(f);
  const Config& c = m.cfg_;
  check_tensors(f, c);
  m.stats_.file_bytes = f.file_size();
  Loader ld(f, opt, pool, m.stats_);

  // Token embedding: copied out of the mapping (read on every token, it must not fault if the
  // file is truncated while the model runs), rows dequantized on lookup.
  m.tok_embd_ = &f.tensor("token_embd.weight");
  m.tok_row_bytes_ = gguf::ggml_row_bytes(m.tok_embd_->type, c.n_embd);
  m.tok_embd_bytes_.assign(m.tok_embd_->data, m.tok_embd_->data + m.tok_embd_->bytes);
  release_pages(m.tok_embd_->data, m.tok_embd_->bytes);
  if (opt.trace) {
    opt.trace("  token_embd.weight  " + std::string(gguf::ggml_type_name(m.tok_embd_->type)) + " [n=" +
              std::to_string(c.n_vocab) + " k=" + std::to_string(c.n_embd) + "]  copied, rows dequantized on lookup");
  }
  ld.done(*m.tok_embd_);

  const size_t q_dim = c.n_head * c.head_dim, kv_dim = c.kv_dim();
  m.layers_.resize(c.n_layer);
  for (size_t l = 0; l < c.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    Layer& L = m.layers_[l];
    L.attn_norm = ld.vec(b + "attn_norm.weight", c.n_embd);
    L.qkv = ld.matrices({&f.tensor(b + "attn_q.weight"), &f.tensor(b + "attn_k.weight"), &f.tensor(b + "attn_v.weight")},
                        {q_dim, kv_dim, kv_dim}, c.n_embd);
    L.wo = ld.matrix(f.tensor(b + "attn_output.weight"), c.n_embd, q_dim);
    L.ffn_norm = ld.vec(b + "ffn_norm.weight", c.n_embd);
    L.gate_up = ld.matrices({&f.tensor(b + "ffn_gate.weight"), &f.tensor(b + "ffn_up.weight")}, {c.n_ff, c.n_ff}, c.n_embd);
    L.w_down = ld.matrix(f.tensor(b + "ffn_down.weight"), c.n_embd, c.n_ff);
  }
  m.output_norm_ = ld.vec("output_norm.weight", c.n_embd);
  if (const gguf::TensorInfo* out = f.find_tensor("output.weight")) {
    m.output_ = ld.matrix(*out, c.n_vocab, c.n_embd);
  } else {
    if (opt.trace) opt.trace("  output.weight absent: the output projection is tied to token_embd.weight");
    m.output_ = ld.matrix(*m.tok_embd_, c.n_vocab, c.n_embd);
  }

  // RoPE: angle per position of pair i = base^(-2i/n_rot) · scale, divided by the Llama-3
  // frequency factor of the pair when the model has them.
  std::vector<float> factors(c.n_rot / 2, 1.0f);
  if (f.find_tensor("rope_freqs.weight")) {
    factors = ld.vec("rope_freqs.weight", c.n_rot / 2);
    if (opt.trace) opt.trace("  rope_freqs.weight: Llama-3 RoPE frequency factors");
  }
  m.rope_freqs_.resize(c.n_rot / 2);
  for (size_t i = 0; i < c.n_rot / 2; ++i) {
    const double theta = std::pow(static_cast<double>(c.rope_freq_base), -2.0 * static_cast<double>(i) / static_cast<double>(c.n_rot));
    m.rope_freqs_[i] = static_cast<float>(theta * c.rope_freq_scale / factors[i]);
    if (!(factors[i] > 0) || !std::isfinite(factors[i]) || !std::isfinite(m.rope_freqs_[i])) {
      fail(Status::io, path + ": rope_freqs.weight[" + std::to_string(i) + "] = " + std::to_string(factors[i]) +
                           " must be a finite positive number");
    }
  }
  m.stats_.load_seconds = now() - t0;
  return m;
}

void Model::embed(int32_t token, float* out) const {
  check_token(token);
  gguf::dequantize_rows(tok_embd_->type, tok_embd_bytes_.data() + static_cast<size_t>(token) * tok_row_bytes_, out, 1,
                        cfg_.n_embd);
}

void Model::check_token(int32_t token) const {
  if (token < 0 || static_cast<size_t>(token) >= cfg_.n_vocab) {
    fail(Status::invalid_argument,
         "token id " + std::to_string(token) + " is outside the vocabulary (" + std::to_string(cfg_.n_vocab) + ")");
  }
}

std::vector<const PackedWeights*> Model::weights() const {
  std::vector<const PackedWeights*> w;
  for (const Layer& L : layers_) {
    for (const PackedWeights& p : L.qkv.parts) w.push_back(&p);
    w.push_back(&L.wo);
    for (const PackedWeights& p : L.gate_up.parts) w.push_back(&p);
    w.push_back(&L.w_down);
  }
  w.push_back(&output_);
  return w;
}

}  // namespace qmm::llm
