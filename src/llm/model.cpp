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
#include <initializer_list>
#include <optional>
#include <unordered_set>

#include "core/error.h"
#include "llm/moe.h"
#include "llm/pack_cache.h"

namespace qmm::llm {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// The weight type of a GGML id when the kernels take it as it is.
std::optional<WeightType> native_type(uint32_t ggml) {
  const TypeInfo* t = find_type(ggml);
  if (!t || !t->native || t->per_channel()) return std::nullopt;
  return t->type();
}

// Maps the file's pages of [p, p + bytes) in one call before a weight is read (advice only):
// reading them through page faults took one fault per 16 pages or fewer.
void populate(const void* p, size_t bytes) {
#ifdef MADV_POPULATE_READ  // Linux 5.14
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p) / page * page;
  const auto end = reinterpret_cast<uintptr_t>(p) + bytes;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
#else
  (void)p, (void)bytes;
#endif
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
                                ", which qmm cannot load (it loads " +
                                name_list(type_names([](const TypeInfo& ti) { return ti.to_f32 && !ti.per_channel(); })) + ")");
}

class Loader {
 public:
  Loader(const gguf::File& f, const LoadOptions& opt, ThreadPool& pool, LoadStats& stats,
         std::shared_ptr<const PackFile> pack)
      : f_(f), opt_(opt), pool_(pool), stats_(stats), pack_(std::move(pack)) {
    for (const auto& t : f.tensors()) total_ += t.bytes;
  }

  // The pack cache's next entry when it holds raw bytes of `type` and `bytes` (the embedding).
  const uint8_t* take_raw(uint32_t type, size_t bytes) {
    if (!pack_ || next_ >= pack_->entries().size()) return miss();
    const PackEntry& e = pack_->entries()[next_];
    if (e.kind != PackEntry::raw || e.type != type || e.bytes != bytes) return miss();
    ++next_;
    return pack_->data(e);
  }
  // Whether every weight came from the pack cache (nothing was packed, nothing left over).
  bool all_from_pack() const { return pack_ && next_ == pack_->entries().size(); }

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
    if (from_pack(ts, ns, k, targets, one_type, f)) {
      // mapped from the pack cache: nothing to read from the GGUF
    } else if (ts.size() == 1 || !one_type) {
      for (size_t i = 0; i < ts.size(); ++i) f.parts.push_back(pack_rows(*ts[i], targets[i], ns[i], k));
    } else {
      size_t n = 0;
      for (size_t rows : ns) n += rows;
      const size_t row = row_bytes(targets[0], k);
      uint8_t* all = scratch(checked_mul(n, row, "fused weight"));
      size_t r = 0;
      for (size_t i = 0; i < ts.size(); ++i) {
        trace_tensor(*ts[i], targets[0], ns[i], k);
        rows_into(*ts[i], targets[0], ns[i], k, all + r * row);
        r += ns[i];
      }
      f.parts.push_back(PackedWeights::pack(targets[0], n, k, all, opt_.filter, &pool_, huge_pages()));
      if (opt_.trace) {
        opt_.trace("    -> fused [n=" + std::to_string(n) + " k=" + std::to_string(k) + "] " + type_name(targets[0]) +
                   "  " + f.parts[0].gemm().rhs->name + "  " + mib(f.parts[0].bytes()));
      }
    }
    for (size_t i = 0; i < ts.size(); ++i) {
      release_pages(ts[i]->data, ts[i]->bytes);
      done(*ts[i]);
    }
    for (const PackedWeights& w : f.parts) stats_.packed_bytes += w.bytes();
    stats_.pack_seconds += now() - t0;
    return f;
  }

  PackedWeights matrix(const gguf::TensorInfo& t, size_t n, size_t k) {
    Fused f = matrices({&t}, {n}, k);
    return std::move(f.parts[0]);
  }

  // Adopts the weights of one matrices() call from the pack cache when its next entries are
  // exactly what packing would give (kernel, type and shape); else the cache is stale and the
  // rest of the load packs.
  bool from_pack(const std::vector<const gguf::TensorInfo*>& ts, const std::vector<size_t>& ns, size_t k,
                 const std::vector<WeightType>& targets, bool one_type, Fused& f) {
    if (!pack_) return false;
    std::vector<std::pair<WeightType, size_t>> parts;  // (type, n) per packed matrix
    if (ts.size() == 1 || !one_type) {
      for (size_t i = 0; i < ts.size(); ++i) parts.push_back({targets[i], ns[i]});
    } else {
      size_t n = 0;
      for (size_t rows : ns) n += rows;
      parts.push_back({targets[0], n});
    }
    if (next_ + parts.size() > pack_->entries().size()) return miss(), false;
    for (size_t i = 0; i < parts.size(); ++i) {
      const PackEntry& e = pack_->entries()[next_ + i];
      const KernelPair pair = select_kernels(parts[i].first, opt_.filter, cpu_info());
      if (e.kind != PackEntry::weights || e.type != static_cast<uint32_t>(parts[i].first) || e.n != parts[i].second ||
          e.k != k || e.name != pair.gemm->name || pair.gemm->isa == Isa::sme2) {
        return miss(), false;
      }
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      const PackEntry& e = pack_->entries()[next_ + i];
      const KernelPair pair = select_kernels(parts[i].first, opt_.filter, cpu_info());
      try {
        f.parts.push_back(PackedWeights::adopt(*pair.gemm, *pair.gemv, e.n, e.k, pack_->data(e), e.bytes, pack_));
        f.parts.back().set_few_rows(pair.few);
        f.parts.back().set_wide(pair.wide);
      } catch (const Error&) {
        f.parts.clear();
        return miss(), false;
      }
    }
    next_ += parts.size();
    if (opt_.trace) {
      for (size_t i = 0; i < ts.size(); ++i) trace_tensor(*ts[i], targets[i], ns[i], k);
      for (const PackedWeights& w : f.parts) {
        opt_.trace("    -> mapped from the pack cache [n=" + std::to_string(w.n()) + " k=" + std::to_string(w.k()) + "] " +
                   w.gemm().rhs->name + "  " + mib(w.bytes()));
      }
    }
    return true;
  }

  std::nullptr_t miss() {
    if (pack_ && opt_.trace) opt_.trace("  pack cache: entry " + std::to_string(next_) + " differs; packing the rest");
    pack_.reset();
    return nullptr;
  }

  // Frees the scratch rows (before the last weights, so that it does not raise the peak RSS).
  void drop_scratch() { scratch_ = AlignedBuffer(); }

  // Bytes counted for the progress bar without packing (the embedding, read on lookup).
  void done(const gguf::TensorInfo& t) {
    done_ += t.bytes;
    if (opt_.progress) opt_.progress(done_, total_);
  }

 private:
  // The type a weight is packed in: the --convert type where it fits, else its own type
  // when the kernels take it, else (dequantized) Q8_0, or F16 when k is not a multiple of 32.
  // An MoE router keeps its type (llama.cpp's quantizer never converts ffn_gate_inp either).
  WeightType target_type(const gguf::TensorInfo& t, size_t k) {
    const bool router = t.name.ends_with(".ffn_gate_inp.weight");
    if (opt_.convert_to && k % block_len(*opt_.convert_to) == 0 && !router) return *opt_.convert_to;
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
      populate(t.data, t.bytes);  // (rows_into populates what it reads)
      w = PackedWeights::pack(target, n, k, t.data, opt_.filter, &pool_, huge_pages());
    } else {
      uint8_t* rows = scratch(checked_mul(n, row_bytes(target, k), "converted weight"));
      rows_into(t, target, n, k, rows);
      w = PackedWeights::pack(target, n, k, rows, opt_.filter, &pool_, huge_pages());
    }
    if (opt_.trace) opt_.trace(std::string("    -> ") + w.gemm().rhs->name + "  " + mib(w.bytes()));
    return w;
  }

  // The rows of t as rows of `target` at dst: copied when the type is the same, else
  // dequantized and requantized in chunks of rows across the pool.
  void rows_into(const gguf::TensorInfo& t, WeightType target, size_t n, size_t k, uint8_t* dst) {
    populate(t.data, t.bytes);
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

  // The rows of a fused or converted weight before packing: one buffer reused by every
  // weight, so that its pages are faulted in (and zeroed by the kernel) once per load, not
  // once per weight (52–63% of a Llama 1B's bytes pass through it).
  uint8_t* scratch(size_t bytes) {
    scratch_.reserve(bytes);
    return scratch_.data();
  }

  void check(const gguf::TensorInfo& t, bool ok, const std::string& expected) {
    if (ok) return;
    std::string got;
    for (uint64_t d : t.shape) got += (got.empty() ? "" : ", ") + std::to_string(d);
    fail(Status::io, f_.path() + ": tensor '" + t.name + "' has shape [" + got + "], expected " + expected);
  }

  const gguf::File& f_;
  // 2 MiB pages for weights that stay in this process's memory (no pack cache: with one, they
  // move onto its mapping after the load, and faulting huge pages in only slows the packing).
  bool huge_pages() const { return stats_.pack_file.empty(); }
  const LoadOptions& opt_;
  ThreadPool& pool_;
  LoadStats& stats_;
  std::shared_ptr<const PackFile> pack_;  // the pack cache while it matches (else null)
  size_t next_ = 0;                       // its next entry
  size_t total_ = 0, done_ = 0;
  AlignedBuffer scratch_;
};

size_t get_size(const gguf::File& f, const std::string& key) {
  const uint64_t v = f.get_u64(key);
  check_arg(v > 0 && v < (uint64_t{1} << 31), f.path() + ": " + key + " = " + std::to_string(v) + " is out of range");
  return static_cast<size_t>(v);
}

Config read_config(const gguf::File& f) {
  Config c;
  c.arch = std::string(f.get_string("general.architecture"));
  c.spec = find_arch(c.arch);
  if (!c.spec) {
    fail(Status::unsupported, f.path() + ": architecture '" + c.arch + "' is not supported (supported: " + supported_archs() + ")");
  }
  const ArchSpec& spec = *c.spec;
  const std::string a = c.arch + ".";
  c.n_embd = get_size(f, a + "embedding_length");
  c.n_layer = get_size(f, a + "block_count");
  c.n_ff = spec.moe && !f.has(a + "feed_forward_length") ? 0 : get_size(f, a + "feed_forward_length");
  c.n_head = get_size(f, a + "attention.head_count");
  c.n_head_kv = f.has(a + "attention.head_count_kv") ? get_size(f, a + "attention.head_count_kv") : c.n_head;
  c.n_ctx_train = f.has(a + "context_length") ? get_size(f, a + "context_length") : 2048;
  auto bad = [&](const std::string& what) { fail(Status::io, f.path() + ": " + what); };
  if (c.n_head % c.n_head_kv != 0) bad("head_count is not a multiple of head_count_kv");
  if (f.has(a + "attention.key_length")) {
    c.head_dim = get_size(f, a + "attention.key_length");
  } else if (c.n_embd % c.n_head != 0) {
    bad("embedding_length is not a multiple of head_count");
  } else {
    c.head_dim = c.n_embd / c.n_head;
  }
  if (f.has(a + "attention.value_length") && get_size(f, a + "attention.value_length") != c.head_dim) {
    bad("attention.value_length differs from attention.key_length (not supported)");
  }
  if (c.head_dim > 1024) bad("the head size " + std::to_string(c.head_dim) + " is out of range (at most 1024)");
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
  // RoPE scaling as llama.cpp reads it: the type defaults to linear; the factor is
  // rope.scaling.factor, else the older rope.scale_linear, and 0 (or none) means no scaling.
  c.rope_scaling = std::string(f.find_string(a + "rope.scaling.type").value_or("linear"));
  if (c.rope_scaling != "none" && c.rope_scaling != "linear" && c.rope_scaling != "longrope") {
    bad("rope.scaling.type '" + c.rope_scaling + "' is not supported (none, linear, longrope)");
  }
  const std::string factor_key = a + (f.has(a + "rope.scaling.factor") ? "rope.scaling.factor" : "rope.scale_linear");
  if (f.find_f64(factor_key).value_or(0) != 0 && c.rope_scaling != "none") c.rope_freq_scale = 1.0f / positive(factor_key, 1.0);
  c.n_ctx_orig = f.has(a + "rope.scaling.original_context_length") ? get_size(f, a + "rope.scaling.original_context_length")
                                                                     : c.n_ctx_train;
  c.rope_attn_factor = positive(a + "rope.scaling.attn_factor", 1.0);
  if (spec.swa_pattern) {  // (llama.cpp's keys: the window, the pattern of local layers, their RoPE base)
    const std::optional<uint64_t> w = f.find_u64(a + "attention.sliding_window");
    c.n_swa = w ? static_cast<size_t>(std::min<uint64_t>(*w, uint64_t{1} << 31)) : spec.default_window;
    const std::string pattern = a + "attention.sliding_window_pattern";
    if (f.has(pattern) && f.type_of(pattern) == gguf::ValueType::array) {  // one flag per layer, 1: local (llama.cpp's newer form)
      if (f.array_size(pattern) != c.n_layer) bad(pattern + " must have one entry per layer");
      for (int32_t v : f.get_i32_array(pattern)) c.swa_layers.push_back(v != 0);
    } else {
      const std::optional<uint64_t> p = f.find_u64(pattern);
      c.swa_pattern = p ? static_cast<size_t>(std::min<uint64_t>(*p, uint64_t{1} << 31)) : spec.swa_pattern;
    }
    c.rope_freq_base_swa = positive(a + "rope.freq_base_swa", spec.swa_rope_base > 0 ? spec.swa_rope_base : c.rope_freq_base);
  }
  const bool big = spec.big_layers && c.n_layer == spec.big_layers;  // (llama.cpp: Gemma 27B)
  c.attn_scale = 1.0f / std::sqrt(static_cast<float>(big ? c.n_embd / c.n_head : c.head_dim));
  if (spec.softcap) c.attn_softcap = positive(a + "attn_logit_softcapping", 50.0);
  // Gemma 2 always caps the logits; Gemma 3 when the file gives a cap other than 0 (as llama.cpp).
  if (spec.softcap || (spec.post_norms && f.find_f64(a + "final_logit_softcapping").value_or(0) != 0)) {
    c.final_softcap = positive(a + "final_logit_softcapping", 30.0);
  }
  if (spec.embed_scale) c.embed_scale = std::sqrt(static_cast<float>(c.n_embd));
  read_moe_config(f, c);
  const gguf::TensorInfo& emb = f.tensor("token_embd.weight");
  if (emb.shape.size() != 2 || emb.shape[0] != c.n_embd) bad("token_embd.weight must have shape [embedding_length, n_vocab]");
  c.n_vocab = static_cast<size_t>(emb.shape[1]);
  return c;
}

// A layer's (prefix "blk.N.") or the global tensors (prefix "") as arch.h's schema lists them
// for this model and, for Q/K/V, how the file stores them.
struct Tensors {
  const gguf::File& f;
  std::string prefix;
  std::vector<TensorSpec> specs;
  const TensorSpec* spec(Role r, Role of = Role::token_embd) const { return find_tensor(specs, r, of); }
  const gguf::TensorInfo* find(const TensorSpec* s) const { return s ? f.find_tensor(prefix + s->name) : nullptr; }
};

// The weights of `rs` the schema lists (expert e's slices of them), packed side by side.
Fused matrices(Loader& ld, const Tensors& ts, std::initializer_list<Role> rs, std::optional<size_t> e = {}) {
  std::vector<gguf::TensorInfo> slices;
  slices.reserve(rs.size());  // (pointed to below)
  std::vector<const gguf::TensorInfo*> infos;
  std::vector<size_t> ns;
  size_t k = 0;
  for (Role r : rs) {
    const TensorSpec* s = ts.spec(r);
    if (!s) continue;
    const gguf::TensorInfo& t = *ts.find(s);
    infos.push_back(e ? &slices.emplace_back(expert_slice(t, *e)) : &t);
    ns.push_back(static_cast<size_t>(s->shape[1]));
    k = static_cast<size_t>(s->shape[0]);
  }
  return ld.matrices(infos, ns, k);
}

PackedWeights matrix(Loader& ld, const Tensors& ts, Role r, std::optional<size_t> e = {}) {
  return std::move(matrices(ld, ts, {r}, e).parts[0]);
}

std::vector<float> vec(Loader& ld, const Tensors& ts, Role r) {
  const TensorSpec& s = *ts.spec(r);
  return ld.vec(ts.prefix + s.name, static_cast<size_t>(s.shape[0]));
}

Tensors layer(const gguf::File& f, const Config& c, size_t l) {
  const std::string b = "blk." + std::to_string(l) + ".";
  const QkvForm form{f.find_tensor(b + "attn_qkv.weight") != nullptr, f.find_tensor(b + "attn_qkv.bias") != nullptr};
  return {f, b, layer_tensors(*c.spec, c.dims(), form)};
}

// LongRoPE's factor tensors replace rope_freqs (llama.cpp: Phi-3, or llama with longrope scaling).
bool long_rope(const Config& c) { return c.spec->long_rope || (c.spec->rope_freqs && c.rope_scaling == "longrope"); }

Tensors globals(const gguf::File& f, const Config& c) { return {f, "", global_tensors(*c.spec, c.dims(), long_rope(c))}; }

std::string dims(const std::vector<uint64_t>& s) {
  std::string r;
  for (uint64_t d : s) r += (r.empty() ? "" : ", ") + std::to_string(d);
  return "[" + r + "]";
}

// Every tensor the model reads, present with the shape the hyper-parameters give it and a
// type qmm loads, checked before anything sized by the metadata is allocated: a file cannot
// claim more layers than it holds, nor hold layers beyond those it claims, nor hold a tensor
// the family does not read (a bias, a scale: qmm would compute a different model without it).
void check_tensors(const gguf::File& f, const Config& c) {
  size_t per_layer = 0;
  for (const TensorSpec& e : layer(f, c, 0).specs) per_layer += e.need == Need::required;
  if (c.n_layer > f.tensors().size() / per_layer) {
    fail(Status::io, f.path() + ": block_count " + std::to_string(c.n_layer) + " needs " + std::to_string(per_layer) +
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
  std::unordered_set<std::string> expected;
  auto need = [&](const Tensors& ts) {
    for (const TensorSpec& e : ts.specs) {
      const std::string name = ts.prefix + e.name;
      expected.insert(name);
      const gguf::TensorInfo* t = f.find_tensor(name);
      if ((!t && e.need != Need::required) || e.need == Need::unused) continue;
      if (!t && e.role == Role::attn_q) {
        fail(Status::io, f.path() + ": tensor '" + name + "' missing (nor is Q/K/V fused in '" + ts.prefix + "attn_qkv.weight')");
      }
      if (!t) fail(Status::io, f.path() + ": tensor '" + name + "' missing");
      if (t->shape != e.shape) {
        fail(Status::io, f.path() + ": tensor '" + name + "' has shape " + dims(t->shape) + ", expected " + dims(e.shape));
      }
      if (!gguf::ggml_can_dequantize(t->type)) unloadable(*t);
    }
  };
  need(globals(f, c));
  for (size_t l = 0; l < c.n_layer; ++l) need(layer(f, c, l));
  std::string unused;
  size_t n_unused = 0;
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (expected.contains(t.name)) continue;
    if (++n_unused <= 4) unused += (unused.empty() ? "'" : ", '") + t.name + "'";
  }
  if (n_unused > 0) {
    if (n_unused > 4) unused += " and " + std::to_string(n_unused - 4) + " more";
    fail(Status::unsupported, f.path() + ": tensor" + (n_unused > 1 ? "s " : " ") + unused + " not read by the " + c.arch +
                                  " architecture (qmm would run a different model without " + (n_unused > 1 ? "them)" : "it)"));
  }
}

// The scales and biases of weights side by side (those of `ws` the schema lists), per column: a
// weight's ".scale" (one number; 1 where absent) over its columns where the family applies it,
// its ".bias" (0 where absent) where the family has one; each empty when no weight has one.
Affine affine(Loader& ld, const Tensors& ts, std::initializer_list<Role> ws) {
  Affine a;
  bool any_scale = false, any_bias = false;
  for (Role w : ws) {
    const TensorSpec* weight = ts.spec(w);
    if (!weight) continue;
    const TensorSpec* s = ts.spec(Role::scale, w);
    const bool has = s && s->need != Need::unused && ts.find(s);
    a.scale.insert(a.scale.end(), weight->shape[1], has ? ld.vec(ts.prefix + s->name, 1)[0] : 1.0f);
    any_scale |= has;
  }
  for (Role w : ws) {  // (Q/K/V: the biases as the file has them, fused or per part, whatever the weights are)
    const TensorSpec* b = ts.spec(Role::bias, w);
    if (!b) continue;
    const bool has = ts.find(b) != nullptr;
    const std::vector<float> bias = has ? ld.vec(ts.prefix + b->name, b->shape[0]) : std::vector<float>(b->shape[0], 0.0f);
    a.bias.insert(a.bias.end(), bias.begin(), bias.end());
    any_bias |= has;
  }
  if (!any_scale) a.scale.clear();
  if (!any_bias) a.bias.clear();
  return a;
}

// One layer's weights as its schema lists them, in the order of the pack cache's entries
// (Model::weights()).
Layer load_layer(Loader& ld, const Tensors& T, const Config& c) {
  const ArchSpec& spec = *c.spec;
  Layer L;
  L.attn_norm = vec(ld, T, Role::attn_norm);
  L.qkv = matrices(ld, T, {Role::attn_qkv, Role::attn_q, Role::attn_k, Role::attn_v});  // (fused or not, as the file has them)
  L.qkv_out = affine(ld, T, {Role::attn_qkv, Role::attn_q, Role::attn_k, Role::attn_v});
  if (spec.qk_norm) {
    L.q_norm = vec(ld, T, Role::attn_q_norm);
    L.k_norm = vec(ld, T, Role::attn_k_norm);
  }
  L.wo = matrix(ld, T, Role::attn_output);
  L.wo_out = affine(ld, T, {Role::attn_output});
  if (spec.post_norms) L.post_attn_norm = vec(ld, T, Role::post_attn_norm);
  L.ffn_norm = vec(ld, T, Role::ffn_norm);
  if (spec.moe) {  // the router, then each expert's slices of the 3-D tensors (moe.h)
    L.moe.router = matrix(ld, T, Role::ffn_router);
    for (size_t e = 0; e < c.n_expert; ++e) {
      L.moe.gate_up.push_back(matrices(ld, T, {Role::ffn_gate_exps, Role::ffn_up_exps}, e));
      L.moe.down.push_back(matrix(ld, T, Role::ffn_down_exps, e));
    }
    if (spec.shared_expert) {
      L.moe.shared_gate = vec(ld, T, Role::shexp_router);
      L.moe.shared_gate_up = matrices(ld, T, {Role::ffn_gate_shexp, Role::ffn_up_shexp});
      L.moe.shared_down = matrix(ld, T, Role::ffn_down_shexp);
    }
  } else {
    L.gate_up = matrices(ld, T, {Role::ffn_gate, Role::ffn_up});  // (Phi-3: ffn_up alone, [gate; up])
    L.gate_up_out = affine(ld, T, {Role::ffn_gate, Role::ffn_up});
    L.gate_up_out.bias_first = true;
    L.w_down = matrix(ld, T, Role::ffn_down);
    L.down_out = affine(ld, T, {Role::ffn_down});
    L.down_out.bias_first = true;
  }
  if (spec.post_norms) L.post_ffn_norm = vec(ld, T, Role::post_ffn_norm);
  return L;
}

// The RoPE tables (Model::rope_freqs): angle per position of pair i = base^(-2i/n_rot) · scale,
// divided by the frequency factor of the pair where the model has them: Llama 3's rope_freqs,
// or LongRoPE's short factors and (for contexts beyond n_ctx_orig) long ones. A LongRoPE model
// without one of the two runs without factors at that length, as llama.cpp does.
struct RopeTables {
  std::vector<float> global, local, long_ctx;
};

RopeTables rope_tables(Loader& ld, const Tensors& G, const Config& c, const std::string& path, const LoadOptions& opt) {
  const ArchSpec& spec = *c.spec;
  const std::vector<float> ones(c.n_rot / 2, 1.0f);
  auto factors = [&](Role r) {
    if (!G.find(G.spec(r))) return ones;
    if (opt.trace) opt.trace("  " + G.spec(r)->name + ": RoPE frequency factors");
    return vec(ld, G, r);
  };
  auto freqs = [&](double base, double scale, const std::vector<float>& factor, const char* name) {
    std::vector<float> out(c.n_rot / 2);
    for (size_t i = 0; i < c.n_rot / 2; ++i) {
      const double theta = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(c.n_rot));
      out[i] = static_cast<float>(theta * scale / factor[i]);
      if (factor[i] == 0 || !std::isfinite(factor[i]) || !std::isfinite(out[i])) {  // (a negative one turns the pair the other way, as in llama.cpp)
        fail(Status::io, path + ": " + name + "[" + std::to_string(i) + "] = " + std::to_string(factor[i]) +
                             " must be a finite non-zero number");
      }
    }
    return out;
  };
  RopeTables t;
  if (long_rope(c)) {
    t.global = freqs(c.rope_freq_base, c.rope_freq_scale, factors(Role::rope_short), "rope_factors_short.weight");
    if (G.find(G.spec(Role::rope_short)) || G.find(G.spec(Role::rope_long))) {
      t.long_ctx = freqs(c.rope_freq_base, c.rope_freq_scale, factors(Role::rope_long), "rope_factors_long.weight");
    }
  } else {
    t.global = freqs(c.rope_freq_base, c.rope_freq_scale, factors(Role::rope_freqs), "rope_freqs.weight");
  }
  // The local layers' RoPE (llama.cpp's rope_freq_base_train_swa / rope_freq_scale_train_swa):
  // Gemma 3's base 10000 without scaling, Gemma 2's the model's base and scale, unless the file
  // names a base.
  t.local = spec.swa_pattern ? freqs(c.rope_freq_base_swa, spec.swa_rope_base > 0 ? 1.0 : c.rope_freq_scale, ones, "rope_freqs.weight")
                             : t.global;  // (no local layers: never read)
  return t;
}

// --trace's line of what the family does.
std::string architecture_line(const Config& c, bool qkv_biases, bool long_factors) {
  const ArchSpec& spec = *c.spec;
  std::string line = "  architecture " + c.arch + ": " + (spec.rope == Rope::neox ? "NeoX" : "normal") + " RoPE, " +
                     (spec.act == Activation::geglu ? "GeGLU" : "SwiGLU");
  if (qkv_biases) line += ", Q/K/V biases";
  if (long_factors) line += ", LongRoPE (long factors beyond " + std::to_string(c.n_ctx_orig) + " positions)";
  if (c.rope_attn_factor != 1.0f) line += ", RoPE attention factor " + std::to_string(c.rope_attn_factor);
  if (spec.qk_norm) line += spec.qk_norm_whole ? ", q/k norms over the whole projections" : ", q/k norms";
  if (spec.post_norms) line += ", post-attention/FFN norms";
  if (spec.embed_scale) line += ", embeddings x sqrt(" + std::to_string(c.n_embd) + ")";
  if (c.n_swa) line += ", window " + std::to_string(c.n_swa) + " on local layers";
  if (c.attn_softcap > 0 || c.final_softcap > 0) line += ", soft-capping";
  return line + moe_summary(c);
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
  PackId pack_id_;
  std::shared_ptr<const PackFile> pack;
  if (opt.pack_cache && f.file_size() >= opt.pack_cache_min_bytes) {
    const std::string dir = opt.pack_cache->empty() ? default_pack_dir() : *opt.pack_cache;
    if (!dir.empty()) {
      pack_id_ = pack_id(f, opt.convert_to ? type_name(*opt.convert_to) : "", opt.filter);
      m.stats_.pack_file = dir + "/" + pack_id_.file_name;
      std::string why;
      pack = PackFile::open(m.stats_.pack_file, pack_id_.key, &why);
      if (opt.trace) {
        opt.trace("  pack cache " + m.stats_.pack_file + ": " +
                  (pack ? std::string("mapped") : why.empty() ? std::string("absent, packing") : why + ", packing again"));
      }
    }
  }
  Loader ld(f, opt, pool, m.stats_, pack);

  // Token embedding: copied out of the mapping (read on every token, it must not fault if the
  // file is truncated while the model runs), rows dequantized on lookup; or the pack cache's
  // copy (a file qmm only ever replaces, never truncates).
  const Tensors G = globals(f, c);
  m.tok_embd_ = G.find(G.spec(Role::token_embd));
  m.tok_row_bytes_ = gguf::ggml_row_bytes(m.tok_embd_->type, c.n_embd);
  m.tok_embd_bytes_ = ld.take_raw(m.tok_embd_->type, m.tok_embd_->bytes);
  if (!m.tok_embd_bytes_) {
    m.tok_embd_copy_.resize(m.tok_embd_->bytes);
    std::memcpy(m.tok_embd_copy_.data(), m.tok_embd_->data, m.tok_embd_->bytes);
    release_pages(m.tok_embd_->data, m.tok_embd_->bytes);
    m.tok_embd_bytes_ = m.tok_embd_copy_.data();
  }
  if (opt.trace) {
    opt.trace("  token_embd.weight  " + std::string(gguf::ggml_type_name(m.tok_embd_->type)) + " [n=" +
              std::to_string(c.n_vocab) + " k=" + std::to_string(c.n_embd) + "]  " +
              (m.tok_embd_copy_.size() ? "copied" : "mapped from the pack cache") + ", rows dequantized on lookup");
  }
  ld.done(*m.tok_embd_);

  m.layers_.resize(c.n_layer);
  for (size_t l = 0; l < c.n_layer; ++l) m.layers_[l] = load_layer(ld, layer(f, c, l), c);  // (in the order of Model::weights())
  ld.drop_scratch();
  m.output_norm_ = vec(ld, G, Role::output_norm);
  if (G.find(G.spec(Role::output))) {
    m.output_ = matrix(ld, G, Role::output);
  } else {
    if (opt.trace) opt.trace("  output.weight absent: the output projection is tied to token_embd.weight");
    m.output_ = ld.matrix(*m.tok_embd_, c.n_vocab, c.n_embd);
  }
  m.output_out_ = affine(ld, G, {Role::output});

  RopeTables rope = rope_tables(ld, G, c, path, opt);
  m.rope_freqs_ = std::move(rope.global);
  m.rope_freqs_local_ = std::move(rope.local);
  m.rope_freqs_long_ = std::move(rope.long_ctx);
  if (opt.trace) opt.trace(architecture_line(c, !m.layers_.empty() && !m.layers_[0].qkv_out.bias.empty(), !m.rope_freqs_long_.empty()));
  if (pack && ld.all_from_pack()) {
    m.stats_.from_pack_cache = true;
    m.pack_ = pack;
  } else if (!m.stats_.pack_file.empty()) {
    m.write_pack_cache(pack_id_.key, opt);
  }
  if (opt.tune) {
    const double t_tune = now();
    m.tune(pool, opt.filter, *opt.tune);
    if (opt.trace) {
      opt.trace("  decode plans (" + std::to_string(pool.threads()) + " threads" +
                (m.tuning_.rounds ? ", measured in " + std::to_string(m.tuning_.rounds) + " rounds" : "") + "):");
      for (const std::string& line : m.tuning_.summary()) opt.trace("    " + line);
    }
    m.stats_.tune_seconds = now() - t_tune;
  }
  count_active(m, m.stats_);
  m.stats_.load_seconds = now() - t0;
  return m;
}

void Model::embed(int32_t token, float* out) const {
  check_token(token);
  gguf::dequantize_rows(tok_embd_->type, tok_embd_bytes_ + static_cast<size_t>(token) * tok_row_bytes_, out, 1,
                        cfg_.n_embd);
}

void Model::check_token(int32_t token) const {
  if (token < 0 || static_cast<size_t>(token) >= cfg_.n_vocab) {
    fail(Status::invalid_argument,
         "token id " + std::to_string(token) + " is outside the vocabulary (" + std::to_string(cfg_.n_vocab) + ")");
  }
}

// Writes the packed weights and the embedding rows to the pack cache, then maps the new file and
// moves the weights onto it: the process then holds the pages every other process serving the
// model shares, not its own copy. A cache that cannot be written is a warning, once.
void Model::write_pack_cache(const std::string& key, const LoadOptions& opt) {
  const double t0 = now();
  std::vector<PackItem> items;
  items.push_back({nullptr, tok_embd_bytes_, tok_embd_->bytes, tok_embd_->type});
  for (const PackedWeights* w : weights()) {
    if (w->gemm().isa == Isa::sme2) return;  // (their layout depends on the SVL: not cached)
    items.push_back({w, nullptr, 0, 0});
  }
  const std::string& path = stats_.pack_file;
  try {
    write_pack_file(path, key, items);
  } catch (const Error& e) {
    static bool warned = false;
    const std::string msg = std::string("pack cache not written: ") + e.what();
    if (opt.trace) opt.trace("  " + msg);
    if (!warned) (opt.warn ? opt.warn(msg) : (void)std::fprintf(stderr, "qmm: %s\n", msg.c_str()));
    warned = true;
    return;
  }
  std::string why;
  const std::shared_ptr<const PackFile> pack = PackFile::open(path, key, &why);
  // Another process may have replaced the file meanwhile with its own (equal) one: any valid
  // file of this key holds the same bytes.
  if (pack && pack->entries().size() == items.size()) {
    std::vector<PackedWeights*> ws;
    for (const PackedWeights* w : weights()) ws.push_back(const_cast<PackedWeights*>(w));  // (this model's own)
    bool ok = pack->entries()[0].bytes == tok_embd_->bytes;
    for (size_t i = 0; ok && i < ws.size(); ++i) {
      const PackEntry& e = pack->entries()[i + 1];
      ok = e.bytes == ws[i]->bytes() && e.n == ws[i]->n() && e.k == ws[i]->k() && e.name == ws[i]->gemm().name;
    }
    for (size_t i = 0; ok && i < ws.size(); ++i) {
      const PackEntry& e = pack->entries()[i + 1];
      const DecodePlan plan = ws[i]->decode_plan();
      const std::array<FewRows, 2> few = ws[i]->few_rows();
      const Ukernel* wide = ws[i]->wide();
      *ws[i] = PackedWeights::adopt(ws[i]->gemm(), ws[i]->gemv(), e.n, e.k, pack->data(e), e.bytes, pack);
      ws[i]->set_decode_plan(plan);
      ws[i]->set_few_rows(few);
      ws[i]->set_wide(wide);
    }
    if (ok) {
      tok_embd_bytes_ = pack->data(pack->entries()[0]);
      tok_embd_copy_ = AlignedBuffer();
      pack_ = pack;
    }
  }
  stats_.pack_write_seconds = now() - t0;
  if (opt.trace) opt.trace("  pack cache written: " + path);
}

const TuneReport& Model::tune(ThreadPool& pool, const KernelFilter& filter, const TuneOptions& opt) {
  std::vector<PackedWeights*> ws;
  for (const PackedWeights* w : weights()) ws.push_back(const_cast<PackedWeights*>(w));  // (this model's own)
  Context ctx(pool);
  tuning_ = tune_weights(ws, filter, ctx, opt);
  return tuning_;
}

std::vector<const PackedWeights*> Model::weights() const {  // (in the order load() packs them: the pack cache's)
  std::vector<const PackedWeights*> w;
  for (const Layer& L : layers_) {
    for (const PackedWeights& p : L.qkv.parts) w.push_back(&p);
    w.push_back(&L.wo);
    if (!L.moe.down.empty()) {
      w.push_back(&L.moe.router);
      for (size_t e = 0; e < L.moe.down.size(); ++e) {
        for (const PackedWeights& p : L.moe.gate_up[e].parts) w.push_back(&p);
        w.push_back(&L.moe.down[e]);
      }
      for (const PackedWeights& p : L.moe.shared_gate_up.parts) w.push_back(&p);
      if (!L.moe.shared_gate.empty()) w.push_back(&L.moe.shared_down);
      continue;
    }
    for (const PackedWeights& p : L.gate_up.parts) w.push_back(&p);
    w.push_back(&L.w_down);
  }
  w.push_back(&output_);
  return w;
}

}  // namespace qmm::llm
