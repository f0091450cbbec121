// GGUF super-block formats Q4_K, Q5_K, Q6_K and the 32-block IQ4_NL, bit-exact with ggml,
// and their reference quantizers (no importance matrix): the same algorithms as ggml's
// quantize_row_q{4,5,6}_K_ref and quantize_iq4_nl (make_qkx2_quants, make_qx_quants, the
// IQ4_NL scale search), written anew, so the blocks are byte-identical to llama.cpp's.
//   Q4_K  {f16 d, dmin; u8 scales[12]; u8 qs[128]}    w = d·sc_j·q − dmin·m_j, 8 sub-blocks of 32,
//         6-bit sc_j / m_j packed in scales (kscale_min); q 4-bit: qs[32p + l] holds element
//         64p + l (low nibble) and 64p + 32 + l (high nibble)
//   Q5_K  {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}   as Q4_K, q 5-bit: bit j of
//         qh[l] is bit 4 of element 32j + l
//   Q6_K  {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}  w = d·sc_t·(q − 32), 16 sub-blocks of
//         16; per half h (128 elements): ql[64h + l] low nibble = element 128h + l, high =
//         128h + 64 + l; ql[64h + 32 + l] low = 128h + 32 + l, high = 128h + 96 + l; bits
//         2t, 2t+1 of qh[32h + l] are bits 4, 5 of element 128h + 32t + l
//   IQ4_NL {f16 d; u8 qs[16]}   w = d·kIq4nlValues[nibble], nibbles ordered as Q4_0's
#pragma once
#include <cstddef>
#include <cstdint>

namespace qmm {

constexpr size_t kSuperBlock = 256;  // weights per K-quant super-block

struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
static_assert(sizeof(BlockQ4_K) == 144);

struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
static_assert(sizeof(BlockQ5_K) == 176);

struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[16];
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// IQ4_NL's fixed non-linear code book (ggml's kvalues_iq4nl).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// The 6-bit scale and min of sub-block j (0..7) of Q4_K / Q5_K (inline: the packers run it
// for every sub-block of a model at load).
inline void kscale_min(const uint8_t scales[12], int j, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *m = scales[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((scales[j + 4] & 0xf) | ((scales[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
  }
}

void quantize_row_q4_k(const float* x, BlockQ4_K* y, size_t k);  // k % 256 == 0
void quantize_row_q5_k(const float* x, BlockQ5_K* y, size_t k);
void quantize_row_q6_k(const float* x, BlockQ6_K* y, size_t k);
void quantize_row_iq4_nl(const float* x, BlockIQ4_NL* y, size_t k);  // k % 32 == 0
void dequantize_row_q4_k(const BlockQ4_K* x, float* y, size_t k);
void dequantize_row_q5_k(const BlockQ5_K* x, float* y, size_t k);
void dequantize_row_q6_k(const BlockQ6_K* x, float* y, size_t k);
void dequantize_row_iq4_nl(const BlockIQ4_NL* x, float* y, size_t k);

}  // namespace qmm
