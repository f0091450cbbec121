// Requantizing a GGUF model (`qmm quantize`): every 2-D `*.weight` tensor whose rows are a
// multiple of the block size becomes the target type (token_embd.weight included, as
// llama.cpp's --pure quantization does); 1-D tensors (norms, rope_freqs) are F32; a tensor
// whose rows do not fit the blocks (stories260K's ffn_down, 172 wide) keeps its type (F16 if
// the target is f16). Quantization is ggml-exact: rows are dequantized to F32 and passed
// through qmm::quantize_rows. Metadata is copied, general.file_type set.
// The mixes q4_k_m / q5_k_m follow llama.cpp's per-tensor rules for Llama models (without an
// importance matrix): output.weight (token_embd.weight when the output is tied to it) Q6_K;
// attn_v (or the fused attn_qkv, as llama.cpp counts it with attn_v) and ffn_down Q6_K in the
// layers use_more_bits picks (the first and last eighth, and every third between, of the layers
// counted by their attn_v / attn_qkv tensors; an MoE layer's ffn_down_exps / ffn_down_shexp as its
// ffn_down); every other 2-D weight the base type, but an MoE router (ffn_gate_inp) keeps its
// type. Rows that are not a multiple of
// 256 fall back as llama.cpp's llama_tensor_get_type does: Q4_K -> Q5_0, Q5_K -> Q5_1,
// Q6_K -> Q8_0 (for the plain K-quant targets too), or keep their type when not a multiple of
// 32 either (llama.cpp writes F16 there). Q5_0 / Q5_1 are converted at load like Q4_1.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/blocks.h"
#include "gguf/atomic_file.h"
#include "gguf/gguf.h"

namespace qmm::gguf {

// What a model is quantized to: one type, or a K-quant mix.
struct QuantTarget {
  WeightType type;          // the base type
  bool k_m = false;         // llama.cpp's _M mix of `type` (q4_k, q5_k)
  uint32_t n_layer = 0;     // the mix's layer count (from the file or the shape)
  bool has_output = true;   // false: token_embd.weight is also the output (tied)
  QuantTarget(WeightType t) : type(t) {}  // NOLINT(google-explicit-constructor): a plain type
};

// A type name (parse_type) or a mix "q4_k_m", "q5_k_m", any case; false if unknown.
bool parse_quant_target(const std::string& name, QuantTarget* out);
// parse_quant_target's names, lower case: the types of the table, then the mixes.
std::vector<std::string> quant_target_names();
// The target with n_layer and has_output read from the model's tensors.
QuantTarget for_file(const File& f, QuantTarget target);

// llama.cpp's LLAMA_FTYPE of a file quantized to `t` (ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q4_0 2,
// MOSTLY_Q8_0 7, Q4_K_S 14, Q4_K_M 15, Q5_K_S 16, Q5_K_M 17, Q6_K 18, IQ4_NL 25).
uint32_t llama_ftype(const QuantTarget& t);

// The ggml type of 2-D weight `name` with rows of row_len values under `target` (the mix
// rules above), or `keep` when its rows fit no block of the chosen type.
uint32_t weight_type(const std::string& name, uint64_t row_len, const QuantTarget& target, uint32_t keep);

// F32 rows -> `n` GGUF rows of k values of ggml type `type` (one with a writer in
// core/weight_types.h's table: the targets and the Q5_0 / Q5_1 fallbacks above).
void quantize_ggml_rows(uint32_t type, const float* x, void* y, size_t n, size_t k);

// The ggml type tensor `t` gets when the model is quantized to `target`.
uint32_t quantized_type(const TensorInfo& t, const QuantTarget& target);

struct QuantizeStats {
  size_t converted = 0;  // tensors whose type changed
  size_t kept = 0;       // tensors copied unchanged
  size_t in_bytes = 0, out_bytes = 0;  // tensor data
};

// Reads `in`, writes the quantized model to `out_path` (streamed; rows converted on
// `threads` threads; `out_path` must not be `in`, see atomic_file.h for `opt`). Throws
// qmm::Error for a tensor it cannot convert.
QuantizeStats quantize_file(const File& in, const std::string& out_path, const QuantTarget& target, int threads,
                            const WriteOptions& opt = {});

}  // namespace qmm::gguf
