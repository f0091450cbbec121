// The packed RHS layouts of the K-quants and IQ4_NL (kernels/ref/rhs_pack_nxk_*k*.h), as
// element accessors: the scalar kernels compute through them, so they are the executable form
// of the layouts documented beside each packer. One panel holds nr rows (nr a multiple of 4).
//
// Every layout moves the GGUF quant bytes of a row in 4-byte chunks, rows interleaved:
// byte B of a row's quant bytes goes to (B/4)·4·nr + 4·r + B%4 of its super-block (block),
// so a 4·nr-byte vector holds one 4-byte chunk of each row (nr = 8: a ymm, 16: a zmm).
// Scales follow, one byte (or f16) per row, rows adjacent. Per super-block of a panel:
//   q4kp   148·nr bytes (GGUF 144): [0,128nr) qs · [128nr,144nr) sub-block j: sc of row r at
//          128nr + 2nr·j + r, m at 128nr + 2nr·j + nr + r (6-bit values widened to bytes) ·
//          f16 d at 144nr + 2r, f16 dmin at 146nr + 2r
//   q5kp   180·nr bytes (GGUF 176): [0,128nr) qs · [128nr,160nr) qh · sc/m at 160nr as q4kp ·
//          d at 176nr + 2r, dmin at 178nr + 2r
//   q6kp   210·nr bytes (GGUF 210): [0,128nr) ql · [128nr,192nr) qh · int8 scale t of row r at
//          192nr + nr·t + r · f16 d at 208nr + 2r
//   iq4nlp 18·nr bytes per 32-block (GGUF 18): [0,16nr) qs · f16 d at 16nr + 2r
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/blocks.h"
#include "core/fp16.h"
#include "core/kquants.h"
#include "kernels/ref/layouts.h"

namespace qmm::layout {

// Where byte B of a row's quant bytes lands in its packed super-block (block), for chunks of
// kr bytes (kr = 4: the layouts above; kr = 8: the NEON preset, rhs_pack_nxk_kquants.h).
inline size_t chunk_offset(size_t nr, size_t r, size_t byte, size_t kr = 4) {
  return (byte / kr) * kr * nr + kr * r + byte % kr;
}

inline void interleave_chunks(const uint8_t* src, size_t bytes, size_t nr, size_t r, uint8_t* dst, size_t kr = 4) {
  for (size_t c = 0; c < bytes; c += kr) std::memcpy(dst + chunk_offset(nr, r, c, kr), src + c, kr);
}

// Bytes per super-block (block) of one row, packed.
constexpr size_t kQ4kpBytes = 148, kQ5kpBytes = 180, kQ6kpBytes = 210, kIq4nlpBytes = 18;

// Q4_K / Q5_K element e (0..255) of a super-block: its 4 low bits (qs chunk layout).
inline int q4k_low(const uint8_t* sb, size_t nr, size_t r, size_t e, size_t kr = 4) {
  const size_t j = e / 32, l = e % 32;
  const uint8_t b = sb[chunk_offset(nr, r, 32 * (j / 2) + l, kr)];
  return j % 2 ? b >> 4 : b & 0xf;
}

// The accessors below read chunks of kKr bytes: 4 (x86, SME2, the scalar kernels) or 8 (the
// NEON preset); only the quant bytes move with kr, the scales sit where they are at kr 4.

// Q4_K (q4kp) and Q5_K (q5kp): the same but for the high bits and where the scales sit.
// kScales: offset of the scale/min bytes, kD: of d (dmin follows at kD + 2nr), per nr.
template <size_t kBytes, size_t kScales, size_t kD, size_t kKr = 4>
struct AsymK {
  static constexpr size_t kGroup = 32;  // elements per scale
  static size_t panel_bytes(size_t nr, size_t k) { return nr * (k / kSuperBlock) * kBytes; }
  static const uint8_t* super(const uint8_t* p, size_t nr, size_t c) { return p + c / kSuperBlock * nr * kBytes; }
  static int value(const uint8_t* p, size_t nr, size_t r, size_t c) {
    const uint8_t* sb = super(p, nr, c);
    const size_t e = c % kSuperBlock;
    const int low = q4k_low(sb, nr, r, e, kKr);
    if constexpr (kBytes == kQ4kpBytes) {
      return low;
    } else {  // qh after qs: bit j of byte l is bit 4 of element 32j + l
      return low + 16 * ((sb[chunk_offset(nr, r, 128 + e % 32, kKr)] >> (e / 32)) & 1);
    }
  }
  static float scale(const uint8_t* p, size_t nr, size_t, size_t r, size_t g) { return factor(p, nr, r, g, 0); }
  static float min(const uint8_t* p, size_t nr, size_t, size_t r, size_t b) { return factor(p, nr, r, b, 1); }
  // d·sc (which 0) or dmin·m (which 1) of 32-block b.
  static float factor(const uint8_t* p, size_t nr, size_t r, size_t b, size_t which) {
    const uint8_t* sb = super(p, nr, b * 32);
    return fp16_to_fp32(load_u16(sb + kD * nr + 2 * nr * which + 2 * r)) * sb[kScales * nr + 2 * nr * (b % 8) + nr * which + r];
  }
};
using Q4kp = AsymK<kQ4kpBytes, 128, 144>;
using Q5kp = AsymK<kQ5kpBytes, 160, 176>;
using Q4kp8 = AsymK<kQ4kpBytes, 128, 144, 8>;
using Q5kp8 = AsymK<kQ5kpBytes, 160, 176, 8>;

template <size_t kKr>
struct Q6kpAt {
  static constexpr size_t kGroup = 16;
  static size_t panel_bytes(size_t nr, size_t k) { return nr * (k / kSuperBlock) * kQ6kpBytes; }
  static const uint8_t* super(const uint8_t* p, size_t nr, size_t c) { return p + c / kSuperBlock * nr * kQ6kpBytes; }
  // q − 32 of element e = 128h + 32t + l: 4 low bits in ql[64h + 32(t%2) + l] (low nibble
  // for t < 2), 2 high bits at bit 2t of qh[32h + l].
  static int value(const uint8_t* p, size_t nr, size_t r, size_t c) {
    const uint8_t* sb = super(p, nr, c);
    const size_t e = c % kSuperBlock, h = e / 128, t = e % 128 / 32, l = e % 32;
    const uint8_t ql = sb[chunk_offset(nr, r, 64 * h + 32 * (t % 2) + l, kKr)];
    const uint8_t qh = sb[chunk_offset(nr, r, 128 + 32 * h + l, kKr)];
    return ((t < 2 ? ql & 0xf : ql >> 4) | (((qh >> (2 * t)) & 3) << 4)) - 32;
  }
  static float scale(const uint8_t* p, size_t nr, size_t, size_t r, size_t g) {
    const uint8_t* sb = super(p, nr, g * 16);
    return fp16_to_fp32(load_u16(sb + 208 * nr + 2 * r)) * static_cast<int8_t>(sb[192 * nr + nr * (g % 16) + r]);
  }
  static float min(const uint8_t*, size_t, size_t, size_t, size_t) { return 0.0f; }
};
using Q6kp = Q6kpAt<4>;
using Q6kp8 = Q6kpAt<8>;

template <size_t kKr>
struct Iq4nlpAt {
  static constexpr size_t kGroup = 32;
  static size_t panel_bytes(size_t nr, size_t k) { return nr * (k / kBlock) * kIq4nlpBytes; }
  static int value(const uint8_t* p, size_t nr, size_t r, size_t c) {
    const size_t j = c % kBlock;
    const uint8_t b = p[c / kBlock * nr * kIq4nlpBytes + chunk_offset(nr, r, j % 16, kKr)];
    return kIq4nlValues[j < 16 ? b & 0xf : b >> 4];
  }
  static float scale(const uint8_t* p, size_t nr, size_t, size_t r, size_t g) {
    return fp16_to_fp32(load_u16(p + g * nr * kIq4nlpBytes + 16 * nr + 2 * r));
  }
  static float min(const uint8_t*, size_t, size_t, size_t, size_t) { return 0.0f; }
};
using Iq4nlp = Iq4nlpAt<4>;
using Iq4nlp8 = Iq4nlpAt<8>;

}  // namespace qmm::layout
