// Copies of a sequence's cached positions in and out of the State (model.h): the prompt cache
// (prompt_cache.h) and the slot files of `qmm serve` (slot_file.h) move K/V rows through them.
#include <cstring>

#include "core/error.h"
#include "llm/model.h"

namespace qmm::llm {

void State::kv_read(size_t seq, size_t pos, size_t n, uint8_t* out) const {
  check_arg(kv_copyable(), "the KV cache of a sliding-window model cannot be copied");
  check_arg(seq < pos_.size() && pos <= pos_[seq] && n <= pos_[seq] - pos, "kv_read: positions outside the cache");
  const size_t seq_rows = layer_kv_.back();
  for (size_t l = 0; l + 1 < layer_kv_.size(); ++l) {
    for (size_t g = 0; g < n_head_kv_; ++g) {
      const size_t row = seq * seq_rows + layer_kv_[l] + g * n_ctx_ + pos;
      std::memcpy(out, key_cache_.data() + row * k_row_, n * k_row_);
      out += n * k_row_;
      std::memcpy(out, value_cache_.data() + row * v_row_, n * v_row_);
      out += n * v_row_;
    }
  }
}

void State::kv_write(size_t seq, size_t pos, size_t n, const uint8_t* in) {
  check_arg(kv_copyable(), "the KV cache of a sliding-window model cannot be copied");
  check_arg(seq < pos_.size() && pos <= pos_[seq] && n <= n_ctx_ - pos, "kv_write: positions outside the cache");
  const size_t seq_rows = layer_kv_.back();
  for (size_t l = 0; l + 1 < layer_kv_.size(); ++l) {
    for (size_t g = 0; g < n_head_kv_; ++g) {
      const size_t row = seq * seq_rows + layer_kv_[l] + g * n_ctx_ + pos;
      std::memcpy(key_cache_.data() + row * k_row_, in, n * k_row_);
      in += n * k_row_;
      std::memcpy(value_cache_.data() + row * v_row_, in, n * v_row_);
      in += n * v_row_;
    }
  }
  pos_[seq] = pos + n;
}

}  // namespace qmm::llm
