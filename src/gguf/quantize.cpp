#include "gguf/quantize.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "core/kquants.h"
#include "core/thread_pool.h"
#include "gguf/gguf_writer.h"

namespace qmm::gguf {

std::vector<std::string> quant_target_names() {
  std::vector<std::string> names = type_names([](const TypeInfo& t) { return t.target(); });
  names.insert(names.end(), {"q4_k_m", "q5_k_m"});
  return names;
}

bool parse_quant_target(const std::string& name, QuantTarget* out) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool k_m = lower == "q4_k_m" || lower == "q5_k_m";
  WeightType t;
  if (!parse_type(k_m ? lower.substr(0, 4).c_str() : lower.c_str(), &t)) return false;
  *out = QuantTarget(t);
  out->k_m = k_m;
  return true;
}

namespace {

// llama.cpp's attention-V-like tensors (llama-quant.cpp's category_is_attn_v): attn_v, and the
// fused attn_qkv (Phi-3) and attn_kv_b that hold V. They count the layers of the mix and get
// its extra bits.
bool attn_v_like(const std::string& name) {
  return name.ends_with(".attn_v.weight") || name.ends_with(".attn_qkv.weight") || name.ends_with(".attn_kv_b.weight");
}

}  // namespace

QuantTarget for_file(const File& f, QuantTarget target) {
  target.n_layer = 0;
  for (const TensorInfo& t : f.tensors()) target.n_layer += attn_v_like(t.name);
  target.has_output = f.find_tensor("output.weight") != nullptr;
  return target;
}

uint32_t llama_ftype(const QuantTarget& target) {
  if (target.k_m) return target.type == WeightType::q5_k ? 17 : 15;
  const int32_t ftype = type_info(target.type).llama_ftype;  // Q4_K / Q5_K alone: llama.cpp's _S
  return ftype < 0 ? 0 : static_cast<uint32_t>(ftype);
}

namespace {

// llama.cpp's use_more_bits: the first and last eighth of the layers, and every third between.
bool use_more_bits(uint32_t i, uint32_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// N of "blk.N.", or -1.
long layer_of(const std::string& name) {
  if (!name.starts_with("blk.")) return -1;
  return std::strtol(name.c_str() + 4, nullptr, 10);
}

}  // namespace

uint32_t weight_type(const std::string& name, uint64_t row_len, const QuantTarget& target, uint32_t keep) {
  auto want = static_cast<uint32_t>(target.type);
  if (target.k_m) {
    const long layer = layer_of(name);
    const bool more = layer >= 0 && use_more_bits(static_cast<uint32_t>(layer), target.n_layer);
    if (name == "output.weight" || (!target.has_output && name == "token_embd.weight")) want = kQ6_K;
    const bool down = name.ends_with(".ffn_down.weight") || name.ends_with(".ffn_down_exps.weight") ||
                      name.ends_with(".ffn_down_shexp.weight");  // (llama.cpp: any ffn_down, layer from the name)
    if (more && (attn_v_like(name) || down)) want = kQ6_K;
  }
  if (row_len % ggml_block_size(want) == 0) return want;
  if (ggml_block_size(want) == kSuperBlock && row_len % kBlock == 0) {  // llama.cpp's fallbacks
    return want == kQ4_K ? kQ5_0 : want == kQ5_K ? kQ5_1 : kQ8_0;
  }
  return keep;
}

void quantize_ggml_rows(uint32_t type, const float* x, void* y, size_t n, size_t k) {
  quantize_rows(static_cast<WeightType>(type), x, y, n, k);  // throws for a type qmm does not write
}

uint32_t quantized_type(const TensorInfo& t, const QuantTarget& target) {
  const bool weight = t.name.size() > 7 && t.name.ends_with(".weight");
  if (!weight || !ggml_can_dequantize(t.type)) return t.type;  // not a float weight: copied
  if (t.shape.size() == 1) return kF32;                          // norms, rope_freqs
  if (t.name.ends_with(".ffn_gate_inp.weight")) return t.type;   // an MoE router (llama.cpp never quantizes it)
  return weight_type(t.name, t.shape[0], target, t.type);        // keeps its type if no block fits
}

QuantizeStats quantize_file(const File& in, const std::string& out_path, const QuantTarget& target_in, int threads,
                            const WriteOptions& opt) {
  const QuantTarget target = for_file(in, target_in);
  Writer w;
  for (std::string_view key : in.keys()) w.copy_kv(in, key);
  w.set_u32("general.file_type", llama_ftype(target));
  w.set_u32("general.quantization_version", 2);

  QuantizeStats stats;
  ThreadPool pool(threads);
  // Per-thread F32 scratch for one group of rows, grown as a tensor needs it: up to 16 rows of
  // at most 64 Ki values, a single row when rows are longer (bounded by the work, not by the
  // longest row of the file times the thread count).
  constexpr size_t kGroupValues = size_t{1} << 16, kMaxGroup = 16;
  std::vector<std::vector<float>> scratch(static_cast<size_t>(pool.threads()));
  // The input rows are read from the file (File::read), not the mapping: a file truncated while
  // quantize runs is then an error, not SIGBUS. A worker's error is raised after its job.
  std::vector<std::vector<uint8_t>> raw(static_cast<size_t>(pool.threads()));
  std::vector<std::string> errors(static_cast<size_t>(pool.threads()));

  for (const TensorInfo& t : in.tensors()) {
    const uint32_t type = quantized_type(t, target);
    stats.in_bytes += t.bytes;
    if (type == t.type) {
      const size_t rb = ggml_row_bytes(t.type, t.shape[0]);
      w.add_tensor(t.name, t.type, t.shape, [&in, rb, src = t.data](uint8_t* dst, size_t first, size_t rows) {
        in.read(src + first * rb, rows * rb, dst);
      });
      stats.kept++;
      stats.out_bytes += t.bytes;
      continue;
    }
    stats.converted++;
    const size_t k = t.shape[0];
    const size_t in_rb = ggml_row_bytes(t.type, k), out_rb = ggml_row_bytes(type, k);
    stats.out_bytes += out_rb * t.rows();
    const size_t group = std::clamp<size_t>(kGroupValues / k, 1, kMaxGroup);
    w.add_tensor(t.name, type, t.shape, [&, k, in_rb, out_rb, type, group, src = t.data, src_type = t.type](
                                            uint8_t* dst, size_t first, size_t rows) {
      pool.parallel_for((rows + group - 1) / group, [&](size_t g, int tid) {
        const size_t r0 = g * group, n = std::min(group, rows - r0);
        std::vector<float>& f = scratch[static_cast<size_t>(tid)];
        std::vector<uint8_t>& b = raw[static_cast<size_t>(tid)];
        if (f.size() < n * k) f.resize(n * k);
        if (b.size() < n * in_rb) b.resize(n * in_rb);
        try {
          in.read(src + (first + r0) * in_rb, n * in_rb, b.data());
        } catch (const Error& e) {
          errors[static_cast<size_t>(tid)] = e.what();
          return;
        }
        dequantize_rows(src_type, b.data(), f.data(), n, k);
        quantize_ggml_rows(type, f.data(), dst + r0 * out_rb, n, k);
      });
      for (const std::string& e : errors) {
        if (!e.empty()) fail(Status::io, e);
      }
    });
  }
  WriteOptions o = opt;
  o.inputs.push_back(in.path());  // never write over the file being read
  w.write(out_path, o);
  return stats;
}

}  // namespace qmm::gguf
