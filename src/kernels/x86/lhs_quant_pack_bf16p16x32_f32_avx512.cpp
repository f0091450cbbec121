// AVX-512 twin of lhs_quant_pack_bf16p16x32_f32_ref (layout and rounding in the header): the
// rounding done on the F32 bits with integer operations (AVX-512F/BW only, so the SIMDe build
// tests it too), 32 values per step.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "core/blocks.h"
#include "kernels/x86/lhs_quant_pack_bf16p16x32_f32.h"

namespace qmm {
namespace {

// bf16p::bf16_from_f32 on 16 lanes, as int32 lanes holding the 16-bit results.
inline __m512i bf16_bits16(const float* x) {
  const __m512i b = _mm512_castps_si512(_mm512_loadu_ps(x));
  const __m512i exp = _mm512_and_si512(b, _mm512_set1_epi32(0x7f800000));
  const __mmask16 nonfinite = _mm512_cmpeq_epi32_mask(exp, _mm512_set1_epi32(0x7f800000));
  const __mmask16 tiny = _mm512_cmpeq_epi32_mask(exp, _mm512_setzero_si512());
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(b, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  r = _mm512_mask_mov_epi32(r, tiny, _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(0x8000)));
  return _mm512_mask_mov_epi32(r, nonfinite, _mm512_set1_epi32(0x7fc0));
}

void run(size_t m, size_t k, size_t mr, size_t, size_t, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  const size_t panel = bf16p::panel_bytes(mr, k), blocks = k / kBlock;
  auto* out = static_cast<uint8_t*>(lhs_packed);
  for (size_t p0 = 0; p0 < m; p0 += mr, out += panel) {
    const size_t rows = m - p0 < mr ? m - p0 : mr;
    for (size_t r = 0; r < rows; ++r) {
      const auto* row = reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(lhs) + (p0 + r) * lhs_stride);
      for (size_t b = 0; b < blocks; ++b) {
        uint8_t* dst = out + b * mr * 64 + 64 * r;
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm512_cvtepi32_epi16(bf16_bits16(row + 32 * b)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32), _mm512_cvtepi32_epi16(bf16_bits16(row + 32 * b + 16)));
      }
    }
    for (size_t r = rows; r < mr; ++r) {
      for (size_t b = 0; b < blocks; ++b) std::memset(out + b * mr * 64 + 64 * r, 0, 64);
    }
  }
}

}  // namespace

const LhsPacker lhs_quant_pack_bf16p16x32_f32_avx512 = {"lhs_quant_pack_bf16p16x32_f32_avx512", bf16p::packed_size,
                                                         bf16p::packed_offset, run, &lhs_quant_pack_bf16p16x32_f32_ref,
                                                         LhsChunk::block, false};

}  // namespace qmm
