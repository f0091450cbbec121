// KleidiAI's kernels that tests/arm/count_kernel.cpp can count beside qmm's (docs/arm.md's
// comparisons), when the Arm build links scripts/kleidiai_build.sh's library
// (-DQMM_KLEIDIAI_LIB=...); without it the list is empty.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace qmm::armtest {

struct KaiKernel {
  const char* name;  // KleidiAI's, with its kai_ prefix
  const char* twin;  // the qmm kernel whose packed RHS (and, without pack_lhs, LHS) it reads
  // Packs the F32 LHS [m, k] in the kernel's own LHS format; null: the twin's LHS packer.
  void (*pack_lhs)(size_t m, size_t k, const float* lhs, std::vector<uint8_t>& out);
  void (*run)(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
              size_t dst_stride_row, float lo, float hi);
};

std::span<const KaiKernel> kleidiai_kernels();

}  // namespace qmm::armtest
