#include "llm/quantize.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "llm/gguf_writer.h"

namespace qmm::gguf {

uint32_t llama_ftype(WeightType t) {
  switch (t) {
    case WeightType::f32: return 0;
    case WeightType::f16: return 1;
    case WeightType::q4_0: return 2;
    case WeightType::q8_0: return 7;
    case WeightType::q4_k: return 14;  // MOSTLY_Q4_K_S: every weight Q4_K
    case WeightType::q5_k: return 16;  // MOSTLY_Q5_K_S
    case WeightType::q6_k: return 18;
    case WeightType::iq4_nl: return 25;
  }
  return 0;
}

uint32_t quantized_type(const TensorInfo& t, WeightType target) {
  const auto want = static_cast<uint32_t>(target);
  const bool weight = t.name.size() > 7 && t.name.ends_with(".weight");
  if (!weight || !ggml_can_dequantize(t.type)) return t.type;  // not a float weight: copied
  if (t.shape.size() == 1) return kF32;                          // norms, rope_freqs
  if (t.shape[0] % ggml_block_size(want) != 0) return t.type;    // rows do not fit the blocks
  return want;
}

QuantizeStats quantize_file(const File& in, const std::string& out_path, WeightType target, int threads) {
  Writer w;
  for (std::string_view key : in.keys()) w.copy_kv(in, key);
  w.set_u32("general.file_type", llama_ftype(target));
  w.set_u32("general.quantization_version", 2);

  QuantizeStats stats;
  ThreadPool pool(threads);
  // Per-thread F32 scratch for one group of rows.
  constexpr size_t kGroup = 16;
  size_t max_k = 0;
  for (const TensorInfo& t : in.tensors()) max_k = std::max<size_t>(max_k, t.shape[0]);
  std::vector<std::vector<float>> scratch(static_cast<size_t>(pool.threads()), std::vector<float>(kGroup * max_k));

  for (const TensorInfo& t : in.tensors()) {
    const uint32_t type = quantized_type(t, target);
    stats.in_bytes += t.bytes;
    if (type == t.type) {
      w.add_tensor(t.name, t.type, t.shape, t.data, t.bytes);
      stats.kept++;
      stats.out_bytes += t.bytes;
      continue;
    }
    stats.converted++;
    const size_t k = t.shape[0];
    const size_t in_rb = ggml_row_bytes(t.type, k), out_rb = ggml_row_bytes(type, k);
    stats.out_bytes += out_rb * t.rows();
    const auto wt = static_cast<WeightType>(type);
    w.add_tensor(t.name, type, t.shape, [&, k, in_rb, out_rb, wt, src = t.data, src_type = t.type](
                                            uint8_t* dst, size_t first, size_t rows) {
      pool.parallel_for((rows + kGroup - 1) / kGroup, [&](size_t g, int tid) {
        const size_t r0 = g * kGroup, n = std::min(kGroup, rows - r0);
        std::vector<float>& f = scratch[static_cast<size_t>(tid)];  // sized for kGroup rows of max_k
        dequantize_rows(src_type, src + (first + r0) * in_rb, f.data(), n, k);
        quantize_rows(wt, f.data(), dst + r0 * out_rb, n, k);
      });
    });
  }
  w.write(out_path);
  return stats;
}

}  // namespace qmm::gguf
