// The AVX-VNNI instructions of the vector-generic loops and VNNI blocks (x86_qloops.h): the
// ymm ones plus vpdpbusd ymm. Include only from sources compiled with AVX-VNNI flags.
#pragma once
#include <immintrin.h>

#include "kernels/x86/avx2_util.h"

namespace qmm::avxvnni {
namespace {  // internal linkage, as avx2_util.h

struct Ymm : avx2::Ymm {
  static I dpbusd(I s, I u, I a) { return _mm256_dpbusd_avx_epi32(s, u, a); }
};

}  // namespace
}  // namespace qmm::avxvnni
