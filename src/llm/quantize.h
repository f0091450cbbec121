// Requantizing a GGUF model (`qmm quantize`): every 2-D `*.weight` tensor whose rows are a
// multiple of the block size becomes the target type (token_embd.weight included, as
// llama.cpp's --pure quantization does); 1-D tensors (norms, rope_freqs) are F32; a tensor
// whose rows do not fit the blocks (stories260K's ffn_down, 172 wide) keeps its type (F16 if
// the target is f16). Quantization is ggml-exact: rows are dequantized to F32 and passed
// through qmm::quantize_rows. Metadata is copied, general.file_type set.
#pragma once
#include <cstdint>
#include <string>

#include "core/blocks.h"
#include "llm/atomic_file.h"
#include "llm/gguf.h"

namespace qmm::gguf {

// llama.cpp's LLAMA_FTYPE of a file whose weights are `t` (ALL_F32 0, MOSTLY_F16 1,
// MOSTLY_Q4_0 2, MOSTLY_Q8_0 7).
uint32_t llama_ftype(WeightType t);

// The ggml type tensor `t` gets when the model is quantized to `target`.
uint32_t quantized_type(const TensorInfo& t, WeightType target);

struct QuantizeStats {
  size_t converted = 0;  // tensors whose type changed
  size_t kept = 0;       // tensors copied unchanged
  size_t in_bytes = 0, out_bytes = 0;  // tensor data
};

// Reads `in`, writes the quantized model to `out_path` (streamed; rows converted on
// `threads` threads; `out_path` must not be `in`, see atomic_file.h for `opt`). Throws
// qmm::Error for a tensor it cannot convert.
QuantizeStats quantize_file(const File& in, const std::string& out_path, WeightType target, int threads,
                            const WriteOptions& opt = {});

}  // namespace qmm::gguf
