// Helpers of the GGUF tests: a byte builder for hand-made GGUF files (independent of the
// writer, so reader and writer test each other), a small valid file, temp paths.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace qmm::test {

struct Bytes {
  std::vector<uint8_t> b;
  template <class T>
  Bytes& put(T v) {
    const size_t at = b.size();
    b.resize(at + sizeof v);
    std::memcpy(b.data() + at, &v, sizeof v);
    return *this;
  }
  Bytes& str(std::string_view s) {
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& pad(size_t a) {
    while (b.size() % a) b.push_back(0);
    return *this;
  }
  size_t size() const { return b.size(); }
};

// A small valid GGUF v3: metadata of every value type (arrays of u32, f32, string and an
// empty array), three tensors t.a f32 [8], t.b q8_0 [64 x 2], t.c f16 [4 x 3] with known data.
// *header_end receives the offset where the data section begins.
std::vector<uint8_t> small_gguf(size_t* header_end = nullptr);

// Path of the real model (tests skip when it is absent).
std::string stories_path();
// A fresh path in a per-test temporary directory.
std::string temp_path(const std::string& name);
std::vector<uint8_t> read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::vector<uint8_t>& b);

}  // namespace qmm::test
