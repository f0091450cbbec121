#include "llm/embed.h"

#include <algorithm>
#include <cmath>

#include "llm/ops.h"

namespace qmm::llm {

std::optional<Pooling> parse_pooling(std::string_view name) {
  for (Pooling p : {Pooling::mean, Pooling::last, Pooling::cls}) {
    if (name == pooling_name(p)) return p;
  }
  return std::nullopt;
}

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::none: return "none";
    case Pooling::mean: return "mean";
    case Pooling::last: return "last";
    case Pooling::cls: return "cls";
  }
  return "?";
}

Pooler::Pooler(const Model& model, Pooling p)
    : model_(model), p_(p), acc_(model.config().n_embd, 0.0f), row_(model.config().n_embd) {}

void Pooler::add(const float* x, size_t rows) {
  const Config& c = model_.config();
  const size_t dim = c.n_embd;
  for (size_t i = 0; i < rows; ++i, ++n_) {
    if (p_ == Pooling::cls && n_ > 0) return;  // the first token only
    if (p_ == Pooling::last && i + 1 < rows) continue;  // only the chunk's last row can be the prompt's last
    rmsnorm(row_.data(), x + i * dim, model_.output_norm().data(), dim, c.norm_eps);
    if (p_ == Pooling::mean) {
      for (size_t j = 0; j < dim; ++j) acc_[j] += row_[j];
    } else {
      acc_ = row_;
    }
  }
}

std::vector<float> Pooler::result() const {
  std::vector<float> v = acc_;
  if (p_ == Pooling::mean && n_ > 0) {
    for (float& x : v) x /= static_cast<float>(n_);
  }
  double norm = 0;
  for (float x : v) norm += static_cast<double>(x) * x;
  if (norm > 0) {
    const float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& x : v) x *= inv;
  }
  return v;
}

}  // namespace qmm::llm
