#include "core/error.h"

namespace qmm {

size_t checked_mul(size_t a, size_t b, const char* what) {
  size_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(Status::invalid_argument, std::string(what) + ": size overflows");
  return r;
}

size_t checked_add(size_t a, size_t b, const char* what) {
  size_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(Status::invalid_argument, std::string(what) + ": size overflows");
  return r;
}

}  // namespace qmm
