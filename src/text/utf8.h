// UTF-8 helpers of the tokenizer and its pre-tokenizers (src/text only).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qmm::llm {


inline size_t utf8_len(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;  // stray continuation byte: a character of its own
}

inline void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Code points of `s` with the byte offset each starts at (offsets has one extra entry: size).
// Invalid bytes decode as themselves (as Latin-1), so every byte belongs to one code point.
inline void decode_utf8(std::string_view s, std::vector<uint32_t>& cps, std::vector<size_t>& offsets) {
  cps.clear();
  offsets.clear();
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<uint8_t>(s[i]);
    size_t len = utf8_len(b);
    uint32_t cp = b;
    if (len > 1 && i + len <= s.size()) {
      cp = b & (0xFF >> (len + 1));
      for (size_t j = 1; j < len; ++j) {
        const auto c = static_cast<uint8_t>(s[i + j]);
        if ((c & 0xC0) != 0x80) {
          len = 1;
          cp = b;
          break;
        }
        cp = (cp << 6) | (c & 0x3F);
      }
    } else {
      len = 1;
    }
    cps.push_back(cp);
    offsets.push_back(i);
    i += len;
  }
  offsets.push_back(s.size());
}

}  // namespace qmm::llm
