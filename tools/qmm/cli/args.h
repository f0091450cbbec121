// A small declarative flag parser for the qmm verbs: declare options, then parse().
// Bad input throws UsageError (main prints one line and exits 2); --help prints the usage.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "matmul/select.h"

namespace qmm::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct HelpShown {};  // thrown after --help printed the usage: exit 0

class Args {
 public:
  Args(std::string verb, std::string summary, int argc, char** argv);

  // `names` is "-m,--model" style; `value` is shown in the usage ("N", "FILE").
  Args& flag(const char* names, bool* out, const char* help);
  Args& str(const char* names, std::string* out, const char* value, const char* help);
  Args& strs(const char* names, std::vector<std::string>* out, const char* value, const char* help);  // repeatable
  Args& size(const char* names, size_t* out, const char* help);  // positive integer
  Args& count(const char* names, size_t* out, const char* help);  // integer >= 0
  Args& integer(const char* names, long long* out, const char* help);
  // A comma-separated list of integers >= min ("1,2,4"), llama-bench style.
  Args& counts(const char* names, std::vector<size_t>* out, size_t min, const char* help);
  Args& real(const char* names, double* out, const char* help);
  Args& choice(const char* names, std::string* out, std::vector<std::string> choices, const char* help);
  // A choice whose value may be left out (then `bare`): "--color" or "--color off".
  Args& optional_choice(const char* names, std::string* out, std::vector<std::string> choices, std::string bare,
                        const char* help);
  // A llama.cpp flag with no meaning for qmm: accepted with a one-line warning "has no effect in
  // qmm: WHY", so that llama.cpp command lines run unchanged. `value`: "" for none, else shown;
  // `optional_values`: values it may or may not be followed by (llama.cpp's -fa [on|off|auto]).
  Args& no_effect(const char* names, const char* value, const char* why, std::vector<std::string> optional_values = {});
  Args& positional(const char* name, std::string* out, const char* help, bool required = true);

  void parse();
  std::string usage() const;

 private:
  struct Opt {
    std::vector<std::string> names;
    std::string value, help;
    bool takes_value;
    std::vector<std::string> optional_values;  // !takes_value: values it may be followed by
    std::function<void(const std::string&, const std::string&)> set;  // (flag, value)
  };
  struct Pos {
    std::string name, help;
    std::string* out;
    bool required;
  };
  Opt* find(const std::string& name);

  std::string verb_, summary_;
  std::vector<std::string> argv_;
  std::vector<Opt> opts_;
  std::vector<Pos> pos_;
};

// llama-cli's prompt escapes: \n \r \t \\ \" \' \0 and \xHH; any other backslash stays as is.
std::string process_escapes(const std::string& text);

// Whether to colour a stream: mode "on", "off" or "auto" (on for a terminal, unless the
// environment variable NO_COLOR is set and not empty, https://no-color.org).
bool use_color(const std::string& mode, bool is_terminal);

// QMM_KERNELS / QMM_DISABLE narrowed by a verb's --kernels/--disable values (`flags` names
// them in errors). Names of another architecture's kernels are ignored with one warning line.
KernelFilter kernel_overrides(const std::string& allow, const std::string& deny, const char* flags);

}  // namespace qmm::cli
