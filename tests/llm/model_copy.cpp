#include "model_copy.h"

namespace qmm::test {

ModelCopy::ModelCopy(const std::string& src, const std::function<std::string(const std::string&)>& rename)
    : src_(gguf::File::open(src)) {
  for (std::string_view key : src_.keys()) w_.copy_kv(src_, key);
  for (const gguf::TensorInfo& t : src_.tensors()) {
    const std::string name = rename ? rename(t.name) : t.name;
    if (!name.empty()) w_.add_tensor(name, t.type, t.shape, t.data, t.bytes);
  }
}

void ModelCopy::add_f32(const std::string& name, const std::vector<uint64_t>& shape, float value) {
  size_t n = 1;
  for (uint64_t d : shape) n *= d;
  const std::vector<float>& v = data_.emplace_back(n, value);  // its buffer stays put when data_ grows
  w_.add_tensor(name, gguf::kF32, shape, v.data(), n * sizeof(float));
}

std::string ModelCopy::write(const std::string& path) {
  w_.write(path);
  return path;
}

}  // namespace qmm::test
