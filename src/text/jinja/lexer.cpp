#include "text/jinja/lexer.h"

#include <cstring>

#include "core/error.h"
#include "text/jinja/value.h"

namespace qmm::llm::jinja {

void template_error(int line, const std::string& message) {
  fail(Status::invalid_argument, "template line " + std::to_string(line) + ": " + message);
}

namespace {

// Byte length of the whitespace code point (Python's \s, e.g. U+3000) at s[p], or 0.
size_t ws_at(std::string_view s, size_t p) {
  if (p >= s.size()) return 0;
  auto c = static_cast<unsigned char>(s[p]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 0;
  if (n == 0 || p + n > s.size()) return 0;
  return is_space(s.substr(p, n)) ? n : 0;
}

size_t skip_ws(std::string_view s, size_t p) {
  while (size_t n = ws_at(s, p)) p += n;
  return p;
}

// Length of `text` without its trailing whitespace.
size_t rstripped(std::string_view text) {
  size_t e = text.size();
  while (e > 0) {
    size_t b = e - 1;
    while (b > 0 && e - b < 3 && (static_cast<unsigned char>(text[b]) & 0xC0) == 0x80) b--;
    if (ws_at(text, b) != e - b) break;
    e = b;
  }
  return e;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
    return;
  }
  int tail = cp < 0x800 ? 1 : cp < 0x10000 ? 2 : 3;  // continuation bytes
  static const unsigned lead[] = {0, 0xC0, 0xE0, 0xF0};
  out += static_cast<char>(lead[tail] | (cp >> (6 * tail)));
  for (int i = tail - 1; i >= 0; i--) out += static_cast<char>(0x80 | ((cp >> (6 * i)) & 0x3F));
}

// Newlines to "\n", and one trailing newline dropped, as Jinja's tokeniter does.
std::string normalize(std::string_view src) {
  std::string s;
  s.reserve(src.size());
  for (size_t i = 0; i < src.size(); i++) {
    if (src[i] == '\r') {
      s += '\n';
      if (i + 1 < src.size() && src[i + 1] == '\n') i++;
    } else {
      s += src[i];
    }
  }
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

class Lexer {
 public:
  Lexer(std::string_view source, const LexOptions& opt) : s_(normalize(source)), opt_(opt) {}

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < s_.size()) {
      size_t start = find_tag(pos_);
      std::string text = s_.substr(pos_, start - pos_);
      if (start == s_.size()) {
        emit(Token::Type::text, text);
        advance_to(start);
        break;
      }
      char kind = s_[start + 1];  // '{', '%' or '#'
      char sign = start + 2 < s_.size() && (s_[start + 2] == '-' || s_[start + 2] == '+') ? s_[start + 2] : 0;
      strip_before_tag(text, sign, kind != '{', line_starting);
      emit(Token::Type::text, text);
      advance_to(start);
      size_t body = start + 2 + (sign ? 1 : 0);
      size_t end = kind == '#' ? comment(body) : kind == '%' ? block(body) : variable(body);
      line_starting = end > 0 && s_[end - 1] == '\n';
      advance_to(end);
    }
    tokens_.push_back(Token{Token::Type::eof, "", 0, 0, line_});
    return std::move(tokens_);
  }

 private:
  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < s_.size(); i++)
      if (s_[i] == '{' && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
    return s_.size();
  }

  // The text before a tag with sign `sign`: '-' strips its trailing whitespace; lstrip_blocks
  // drops the spaces between the line start and a block or comment tag.
  void strip_before_tag(std::string& text, char sign, bool block_or_comment, bool line_starting) const {
    if (sign == '-') {
      text.resize(rstripped(text));
    } else if (sign != '+' && opt_.lstrip_blocks && block_or_comment) {
      size_t l_pos = text.rfind('\n');
      l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
      if (l_pos > 0 || line_starting) {
        if (l_pos < text.size() && skip_ws(text, l_pos) == text.size()) text.resize(l_pos);
      }
    }
  }

  void advance_to(size_t p) {
    for (; pos_ < p; pos_++)
      if (s_[pos_] == '\n') line_++;
  }

  void emit(Token::Type t, std::string text, int line = 0) {
    if (t == Token::Type::text && text.empty()) return;
    tokens_.push_back(Token{t, std::move(text), 0, 0, line ? line : line_});
  }

  // After a tag's closing delimiter at `p` with sign `sign`: where the following text starts.
  size_t after_end(size_t p, char sign, bool trim) const {
    if (sign == '-') {
      p = skip_ws(s_, p);
    } else if (sign == 0 && trim && opt_.trim_blocks && p < s_.size() && s_[p] == '\n') {
      p++;
    }
    return p;
  }

  size_t comment(size_t p) {
    size_t j = s_.find("#}", p);
    if (j == std::string::npos && p >= s_.size()) return p;  // "{#" ending the template: ignored, as jinja2
    if (j == std::string::npos) template_error(line_, "missing end of comment tag '#}'");
    char sign = j > p && (s_[j - 1] == '-' || s_[j - 1] == '+') ? s_[j - 1] : 0;
    return after_end(j + 2, sign, true);
  }

  size_t variable(size_t p) {
    emit(Token::Type::var_begin, "{{");
    return expression(p, '}');
  }

  size_t block(size_t p) {
    size_t first = tokens_.size();
    emit(Token::Type::block_begin, "{%");
    size_t end = expression(p, '%');
    if (tokens_.size() == first + 3 && tokens_[first + 1].type == Token::Type::name && tokens_[first + 1].text == "raw") {
      tokens_.resize(first);
      return raw(after_end(close_, close_sign_, false));  // no trim_blocks after {% raw %}, as jinja2
    }
    return end;
  }

  // {% raw %}…{% endraw %}: the text between, untouched but for the whitespace rules of the
  // {% endraw %} tag.
  size_t raw(size_t p) {
    for (size_t i = s_.find("{%", p); i != std::string::npos; i = s_.find("{%", i + 2)) {
      size_t k = i + 2;
      char sign = k < s_.size() && (s_[k] == '-' || s_[k] == '+') ? s_[k++] : 0;
      k = skip_ws(s_, k);
      if (s_.compare(k, 6, "endraw") != 0) continue;
      k += 6;
      k = skip_ws(s_, k);
      char esign = k < s_.size() && (s_[k] == '-' || s_[k] == '+') ? s_[k++] : 0;
      if (s_.compare(k, 2, "%}") != 0) continue;
      std::string text = s_.substr(p, i - p);
      strip_before_tag(text, sign, true, p > 0 && s_[p - 1] == '\n');
      emit(Token::Type::text, text);
      return after_end(k + 2, esign, true);
    }
    template_error(line_, "missing {% endraw %}");
  }

  // Expression tokens from `p` up to the closing "}}" or "%}" (delim '}' or '%') outside brackets.
  size_t expression(size_t p, char delim) {
    int line = line_;
    std::string brackets;
    auto count_lines = [&](size_t a, size_t b) {
      for (size_t i = a; i < b; i++)
        if (s_[i] == '\n') line++;
    };
    while (true) {
      size_t q = p;
      q = skip_ws(s_, q);
      count_lines(p, q);
      p = q;
      if (p >= s_.size())
        template_error(line_, delim == '}' ? "'{{' is never closed with '}}'" : "'{%' is never closed with '%}'");
      if (brackets.empty()) {
        char sign = (s_[p] == '-' || (s_[p] == '+' && delim == '%')) ? s_[p] : 0;
        size_t d = p + (sign ? 1 : 0);
        if (d + 1 < s_.size() && s_[d] == delim && s_[d + 1] == '}') {
          tokens_.push_back(Token{delim == '}' ? Token::Type::var_end : Token::Type::block_end, "", 0, 0, line});
          close_ = d + 2;
          close_sign_ = sign;
          return after_end(d + 2, sign, delim == '%');
        }
      }
      char c = s_[p];
      if (c == '\'' || c == '"') {
        size_t start = p;
        std::string value = string_literal(p, line);
        tokens_.push_back(Token{Token::Type::string, std::move(value), 0, 0, line});
        count_lines(start, p);
      } else if (is_digit(c)) {
        p = number(p, line);
      } else if (is_name_start(c)) {
        size_t q2 = p;
        while (q2 < s_.size() && is_name_char(s_[q2])) q2++;
        tokens_.push_back(Token{Token::Type::name, s_.substr(p, q2 - p), 0, 0, line});
        p = q2;
      } else {
        static const char* const ops2[] = {"//", "**", "==", "!=", ">=", "<="};
        std::string op;
        for (const char* o : ops2)
          if (s_.compare(p, 2, o) == 0) op = o;
        if (op.empty() && std::strchr("+-/*%~<>=.,:|()[]{}", c)) op = std::string(1, c);
        if (op.empty()) template_error(line, std::string("unexpected character '") + c + "'");
        if (op == "(" || op == "[" || op == "{") brackets += op;
        if (op == ")" || op == "]" || op == "}") {
          char open = op == ")" ? '(' : op == "]" ? '[' : '{';
          if (brackets.empty() || brackets.back() != open) template_error(line, "unexpected '" + op + "'");
          brackets.pop_back();
        }
        tokens_.push_back(Token{Token::Type::op, op, 0, 0, line});
        p += op.size();
      }
    }
  }

  size_t number(size_t p, int line) {
    auto digits = [&](size_t q) {
      while (q < s_.size() && (is_digit(s_[q]) || (s_[q] == '_' && q + 1 < s_.size() && is_digit(s_[q + 1])))) q++;
      return q;
    };
    size_t q = digits(p);
    bool is_float = false;
    if (q + 1 < s_.size() && s_[q] == '.' && is_digit(s_[q + 1])) q = digits(q + 1), is_float = true;
    if (q < s_.size() && (s_[q] == 'e' || s_[q] == 'E')) {
      size_t e = q + 1;
      if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) e++;
      if (e < s_.size() && is_digit(s_[e])) q = digits(e), is_float = true;
    }
    std::string text;
    for (size_t i = p; i < q; i++)
      if (s_[i] != '_') text += s_[i];
    Token t{is_float ? Token::Type::number : Token::Type::integer, text, 0, 0, line};
    try {
      if (is_float) t.fval = std::stod(text);
      else t.ival = std::stoll(text);
    } catch (const std::exception&) {
      template_error(line, "number out of range: " + text);
    }
    tokens_.push_back(std::move(t));
    return q;
  }

  // A quoted literal at p (Python's unicode-escape rules); p ends after the closing quote.
  std::string string_literal(size_t& p, int line) {
    char q = s_[p++];
    std::string out;
    while (true) {
      if (p >= s_.size()) template_error(line, "unterminated string literal");
      char c = s_[p++];
      if (c == q) return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p >= s_.size()) template_error(line, "unterminated string literal");
      char e = s_[p++];
      switch (e) {
        case '\n': break;
        case '\\': case '\'': case '"': out += e; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case 'x': case 'u': case 'U': {
          int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (int i = 0; i < n; i++, p++) {
            int h = p < s_.size() ? hex_value(s_[p]) : -1;
            if (h < 0) template_error(line, std::string("truncated \\") + e + " escape in a string literal");
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          if (cp > 0x10FFFF) template_error(line, "invalid \\U escape in a string literal");
          append_utf8(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t cp = static_cast<uint32_t>(e - '0');
            for (int i = 0; i < 2 && p < s_.size() && s_[p] >= '0' && s_[p] <= '7'; i++) cp = cp * 8 + (s_[p++] - '0');
            append_utf8(out, cp);
          } else {
            out += '\\';
            out += e;
          }
      }
    }
  }

  std::string s_;
  LexOptions opt_;
  size_t close_ = 0;     // just after the last "}}" / "%}"
  char close_sign_ = 0;  // and its sign
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex(std::string_view source, const LexOptions& opt) { return Lexer(source, opt).run(); }

}  // namespace qmm::llm::jinja
