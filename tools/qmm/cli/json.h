// Minimal JSON output for the --json / -o json of the qmm verbs: strings escaped for any
// bytes (invalid UTF-8 becomes U+FFFD, control characters \u00XX), numbers that were not
// measured or are not finite written as null. Usage:
//   JsonObject o; o.str("model", path).num("tokens_per_s", v).null_if_zero("bound", b); puts(o.text().c_str());
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace qmm::cli {

// s as a quoted JSON string.
inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) {
      if (b == '"' || b == '\\') {
        out += '\\';
        out += static_cast<char>(b);
      } else if (b < 0x20 || b == 0x7f) {
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\u%04x", b);
        out += esc;
      } else {
        out += static_cast<char>(b);
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: copied if it is valid UTF-8, else one U+FFFD per bad byte.
    const size_t len = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
    const uint8_t lo = b == 0xE0 ? 0xA0 : b == 0xF0 ? 0x90 : 0x80, hi = b == 0xED ? 0x9F : b == 0xF4 ? 0x8F : 0xBF;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t j = 1; ok && j < len; ++j) {
      const auto c = static_cast<uint8_t>(s[i + j]);
      ok = j == 1 ? (c >= lo && c <= hi) : (c & 0xC0) == 0x80;
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out + "\"";
}

// A number, or null when it is not finite.
inline std::string json_number(double v, int decimals = 4) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

class JsonObject {
 public:
  JsonObject& str(std::string_view key, std::string_view v) { return raw(key, json_string(v)); }
  JsonObject& num(std::string_view key, double v, int decimals = 4) { return raw(key, json_number(v, decimals)); }
  // v, or null where it was not measured (measured == false).
  JsonObject& measured(std::string_view key, double v, bool was_measured, int decimals = 4) {
    return raw(key, was_measured ? json_number(v, decimals) : "null");
  }
  JsonObject& integer(std::string_view key, long long v) { return raw(key, std::to_string(v)); }
  JsonObject& raw(std::string_view key, const std::string& json) {
    text_ += (text_.size() > 1 ? ", " : "") + json_string(key) + ": " + json;
    return *this;
  }
  std::string text() const { return text_ + "}"; }

 private:
  std::string text_ = "{";
};

}  // namespace qmm::cli
