#include "args.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "qmm/qmm.h"

namespace qmm::cli {
namespace {

std::vector<std::string> split_names(const char* names) {
  std::vector<std::string> out;
  std::stringstream ss(names);
  for (std::string n; std::getline(ss, n, ',');) out.push_back(n);
  return out;
}

long long to_integer(const std::string& flag, const std::string& v) {
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE) throw UsageError(flag + " expects an integer, got '" + v + "'");
  return x;
}

}  // namespace

Args::Args(std::string verb, std::string summary, int argc, char** argv)
    : verb_(std::move(verb)), summary_(std::move(summary)), argv_(argv, argv + argc) {}

Args& Args::flag(const char* names, bool* out, const char* help) {
  opts_.push_back({split_names(names), "", help, false, {}, [out](const std::string&, const std::string&) { *out = true; }});
  return *this;
}

Args& Args::str(const char* names, std::string* out, const char* value, const char* help) {
  opts_.push_back({split_names(names), value, help, true, {}, [out](const std::string&, const std::string& v) { *out = v; }});
  return *this;
}

Args& Args::strs(const char* names, std::vector<std::string>* out, const char* value, const char* help) {
  opts_.push_back({split_names(names), value, help, true, {}, [out](const std::string&, const std::string& v) { out->push_back(v); }});
  return *this;
}

Args& Args::size(const char* names, size_t* out, const char* help) {
  opts_.push_back({split_names(names), "N", help, true, {}, [out](const std::string& f, const std::string& v) {
                     const long long x = to_integer(f, v);
                     if (x <= 0) throw UsageError(f + " expects a positive integer, got '" + v + "'");
                     *out = static_cast<size_t>(x);
                   }});
  return *this;
}

Args& Args::count(const char* names, size_t* out, const char* help) {
  opts_.push_back({split_names(names), "N", help, true, {}, [out](const std::string& f, const std::string& v) {
                     const long long x = to_integer(f, v);
                     if (x < 0) throw UsageError(f + " expects a non-negative integer, got '" + v + "'");
                     *out = static_cast<size_t>(x);
                   }});
  return *this;
}

Args& Args::counts(const char* names, std::vector<size_t>* out, size_t min, const char* help) {
  opts_.push_back({split_names(names), "N[,N...]", help, true, {}, [out, min](const std::string& f, const std::string& v) {
                     out->clear();
                     std::stringstream ss(v);
                     for (std::string item; std::getline(ss, item, ',');) {
                       const long long x = to_integer(f, item);
                       if (x < static_cast<long long>(min)) {
                         throw UsageError(f + " expects integers >= " + std::to_string(min) + ", got '" + item + "'");
                       }
                       out->push_back(static_cast<size_t>(x));
                     }
                     if (out->empty() || v.back() == ',') throw UsageError(f + " expects a comma-separated list, got '" + v + "'");
                   }});
  return *this;
}

Args& Args::integer(const char* names, long long* out, const char* help) {
  opts_.push_back({split_names(names), "N", help, true, {},
                   [out](const std::string& f, const std::string& v) { *out = to_integer(f, v); }});
  return *this;
}

Args& Args::real(const char* names, double* out, const char* help) {
  opts_.push_back({split_names(names), "X", help, true, {}, [out](const std::string& f, const std::string& v) {
                     char* end = nullptr;
                     const double x = std::strtod(v.c_str(), &end);
                     if (v.empty() || *end != '\0' || !std::isfinite(x)) {
                       throw UsageError(f + " expects a number, got '" + v + "'");
                     }
                     *out = x;
                   }});
  return *this;
}

Args& Args::choice(const char* names, std::string* out, std::vector<std::string> choices, const char* help) {
  std::string value;
  for (const auto& c : choices) value += (value.empty() ? "" : "|") + c;
  opts_.push_back({split_names(names), value, help, true, {}, [out, choices](const std::string& f, const std::string& v) {
                     for (const auto& c : choices) {
                       if (c == v) {
                         *out = v;
                         return;
                       }
                     }
                     std::string all;
                     for (const auto& c : choices) all += (all.empty() ? "" : ", ") + c;
                     throw UsageError(f + ": '" + v + "' is not one of " + all);
                   }});
  return *this;
}

Args& Args::optional_choice(const char* names, std::string* out, std::vector<std::string> choices, std::string bare,
                            const char* help) {
  std::string value;
  for (const auto& c : choices) value += (value.empty() ? "[" : "|") + c;
  opts_.push_back({split_names(names), value + "]", help, false, choices,
                   [out, bare](const std::string&, const std::string& v) { *out = v.empty() ? bare : v; }});
  return *this;
}

Args& Args::no_effect(const char* names, const char* value, const char* why, std::vector<std::string> optional_values) {
  const bool takes = *value != '\0';
  std::string shown = value;
  for (const auto& c : optional_values) shown += (shown.empty() ? "[" : "|") + c;
  if (!optional_values.empty()) shown += "]";
  opts_.push_back({split_names(names), shown, std::string("no effect in qmm (llama.cpp's): ") + why, takes, optional_values,
                   [why](const std::string& f, const std::string&) {
                     std::fprintf(stderr, "%s has no effect in qmm: %s\n", f.c_str(), why);
                   }});
  return *this;
}

Args& Args::positional(const char* name, std::string* out, const char* help, bool required) {
  pos_.push_back({name, help, out, required});
  return *this;
}

Args::Opt* Args::find(const std::string& name) {
  for (auto& o : opts_) {
    for (const auto& n : o.names) {
      if (n == name) return &o;
    }
  }
  return nullptr;
}

void Args::parse() {
  size_t next_pos = 0;
  for (size_t i = 0; i < argv_.size(); ++i) {
    std::string a = argv_[i];
    if (a == "-h" || a == "--help") {
      std::fputs(usage().c_str(), stdout);
      throw HelpShown{};
    }
    if (a == "--version") {  // llama.cpp's tools take it after any flags
      std::printf("qmm %s\n", qmm_version());
      throw HelpShown{};
    }
    if (a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9')) {
      std::string value;
      bool inline_value = false;
      if (const size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        inline_value = true;
      }
      Opt* o = find(a);
      if (!o) throw UsageError("unknown option '" + a + "' (see qmm " + verb_ + " --help)");
      if (o->takes_value && !inline_value) {
        if (i + 1 >= argv_.size()) throw UsageError(a + " needs a value");
        value = argv_[++i];
      } else if (!o->takes_value && !inline_value && i + 1 < argv_.size() &&
                 std::find(o->optional_values.begin(), o->optional_values.end(), argv_[i + 1]) != o->optional_values.end()) {
        value = argv_[++i];
      } else if (!o->takes_value && inline_value &&
                 std::find(o->optional_values.begin(), o->optional_values.end(), value) == o->optional_values.end()) {
        throw UsageError(o->optional_values.empty() ? a + " takes no value" : a + ": '" + value + "' is not one of its values");
      }
      o->set(a, value);
      continue;
    }
    if (next_pos >= pos_.size()) throw UsageError("unexpected argument '" + a + "' (see qmm " + verb_ + " --help)");
    *pos_[next_pos++].out = a;
  }
  for (size_t p = next_pos; p < pos_.size(); ++p) {
    if (pos_[p].required) throw UsageError("missing " + pos_[p].name + " (see qmm " + verb_ + " --help)");
  }
}

std::string Args::usage() const {
  std::string u = "usage: qmm " + verb_;
  for (const auto& p : pos_) u += p.required ? " " + p.name : " [" + p.name + "]";
  if (!opts_.empty()) u += " [options]";
  u += "\n\n" + summary_ + "\n";
  if (!pos_.empty()) u += "\n";
  for (const auto& p : pos_) u += "  " + p.name + std::string(p.name.size() < 22 ? 22 - p.name.size() : 1, ' ') + p.help + "\n";
  if (!opts_.empty()) u += "\noptions:\n";
  for (const auto& o : opts_) {
    std::string left;
    for (const auto& n : o.names) left += (left.empty() ? "" : ", ") + n;
    if (!o.value.empty()) left += " " + o.value;
    u += "  " + left + std::string(left.size() < 22 ? 22 - left.size() : 1, ' ') + o.help + "\n";
  }
  u += "  -h, --help            show this help\n";
  u += "  --version             print qmm's version\n";
  return u;
}

std::string process_escapes(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char c = text[++i];
    switch (c) {
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case '0': out += '\0'; break;
      case '\\': case '"': case '\'': out += c; break;
      case 'x':
        if (i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
          out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
          i += 2;
          break;
        }
        [[fallthrough]];
      default: out += '\\'; out += c;
    }
  }
  return out;
}

bool use_color(const std::string& mode, bool is_terminal) {
  if (mode == "on") return true;
  if (mode == "off") return false;
  const char* no_color = std::getenv("NO_COLOR");
  return is_terminal && !(no_color && *no_color);
}

KernelFilter kernel_overrides(const std::string& allow, const std::string& deny, const char* flags) {
  KernelFilter f = merge(kernel_filter_from_env(), parse_kernel_filter(allow, deny, flags));
  if (!f.ignored.empty()) {
    std::string names;
    for (const auto& n : f.ignored) names += (names.empty() ? "'" : ", '") + n + "'";
    std::fprintf(stderr, "qmm: ignoring %s (not on this architecture)\n", names.c_str());
  }
  return f;
}

}  // namespace qmm::cli
