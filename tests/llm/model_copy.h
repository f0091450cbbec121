// A copy of a GGUF model with edits, for tests of hostile and broken files: every key and
// tensor of the source is copied (tensor bytes by pointer, so the copy must be written while
// it lives); the test then sets keys, drops, renames or adds tensors and writes it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"

namespace qmm::test {

class ModelCopy {
 public:
  // rename(name) gives the name a tensor gets in the copy; "" drops it. Default: all kept.
  explicit ModelCopy(const std::string& src, const std::function<std::string(const std::string&)>& rename = {});
  const gguf::File& source() const { return src_; }
  gguf::Writer& writer() { return w_; }
  // Adds an F32 tensor of `shape` whose every value is `value`.
  void add_f32(const std::string& name, const std::vector<uint64_t>& shape, float value);
  // Writes the copy to `path` and returns it.
  std::string write(const std::string& path);

 private:
  gguf::File src_;
  gguf::Writer w_;
  std::vector<std::vector<float>> data_;
};

}  // namespace qmm::test
