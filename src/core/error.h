// Errors: the C++ layers throw qmm::Error with a readable message; the C API turns it
// into a status code plus qmm_last_error().
#pragma once
#include <stdexcept>
#include <string>

namespace qmm {

enum class Status : int { ok = 0, invalid_argument = 1, unsupported = 2, out_of_memory = 3, io = 4, internal = 5 };

class Error : public std::runtime_error {
 public:
  Error(Status s, const std::string& msg) : std::runtime_error(msg), status_(s) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

[[noreturn]] inline void fail(Status s, const std::string& msg) { throw Error(s, msg); }
inline void check_arg(bool ok, const std::string& msg) {
  if (!ok) fail(Status::invalid_argument, msg);
}
// The same with a literal: no std::string is built unless the check fails (the C API's per-tile
// calls check on every call and must cost nothing on the valid path).
inline void check_arg(bool ok, const char* msg) {
  if (!ok) [[unlikely]] fail(Status::invalid_argument, msg);
}

// a * b, or an error naming `what` when it overflows size_t.
size_t checked_mul(size_t a, size_t b, const char* what);
size_t checked_add(size_t a, size_t b, const char* what);

}  // namespace qmm
