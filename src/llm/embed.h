// Embeddings of decoder models for `qmm serve`'s /v1/embeddings, as llama-server `--embeddings
// --pooling mean|last|cls`: the final hidden state of each prompt token after the model's
// final norm (the vector the output projection would read), pooled over the prompt, then
// L2-normalised (llama-server's default, --embd-normalize 2; OpenAI's embeddings are unit
// vectors too).
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "llm/model.h"

namespace qmm::llm {

enum class Pooling { none, mean, last, cls };  // none: not an embedding request
std::optional<Pooling> parse_pooling(std::string_view name);  // "mean", "last", "cls"
const char* pooling_name(Pooling p);

// Pools the hidden states of one prompt, chunk by chunk as they are prefilled.
class Pooler {
 public:
  Pooler(const Model& model, Pooling p);
  // `x`: `rows` consecutive prompt positions' hidden states before the final norm, [rows, n_embd].
  void add(const float* x, size_t rows);
  std::vector<float> result() const;  // unit length (all zeros stays zeros)

 private:
  const Model& model_;
  Pooling p_;
  size_t n_ = 0;
  std::vector<float> acc_, row_;
};

}  // namespace qmm::llm
