#include "gguf/dequant.h"

#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "core/blocks.h"
#include "core/error.h"
#include "core/fp16.h"
#include "core/kquants.h"

namespace qmm::gguf {

namespace {

struct TypeTraits {
  uint32_t id;
  const char* name;
  uint32_t block;  // values per block
  uint32_t size;   // bytes per block
};

// ggml's type table (ids as in GGUF files; removed ids 4, 5, 31-33, 36-38 are absent).
constexpr TypeTraits kTypes[] = {
    {0, "f32", 1, 4},         {1, "f16", 1, 2},        {2, "q4_0", 32, 18},     {3, "q4_1", 32, 20},
    {6, "q5_0", 32, 22},      {7, "q5_1", 32, 24},     {8, "q8_0", 32, 34},     {9, "q8_1", 32, 36},
    {10, "q2_K", 256, 84},    {11, "q3_K", 256, 110},  {12, "q4_K", 256, 144},  {13, "q5_K", 256, 176},
    {14, "q6_K", 256, 210},   {15, "q8_K", 256, 292},  {16, "iq2_xxs", 256, 66}, {17, "iq2_xs", 256, 74},
    {18, "iq3_xxs", 256, 98}, {19, "iq1_s", 256, 50},  {20, "iq4_nl", 32, 18},  {21, "iq3_s", 256, 110},
    {22, "iq2_s", 256, 82},   {23, "iq4_xs", 256, 136}, {24, "i8", 1, 1},       {25, "i16", 1, 2},
    {26, "i32", 1, 4},        {27, "i64", 1, 8},       {28, "f64", 1, 8},       {29, "iq1_m", 256, 56},
    {30, "bf16", 1, 2},       {34, "tq1_0", 256, 54},  {35, "tq2_0", 256, 66},  {39, "mxfp4", 32, 17},
};

const TypeTraits* traits(uint32_t type) {
  for (const TypeTraits& t : kTypes) {
    if (t.id == type) return &t;
  }
  return nullptr;
}

float h2f(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return fp16_to_fp32(h);
}

// ---- one block of each type -> F32 (the formulas of ggml's dequantize_row_*) ----

void block_q4_1(const uint8_t* b, float* y) {  // {f16 d, f16 m, u8 qs[16]}
  const float d = h2f(b), m = h2f(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    const float lo = static_cast<float>(qs[j] & 0x0f) * d;
    const float hi = static_cast<float>(qs[j] >> 4) * d;
    y[j] = lo + m;
    y[j + 16] = hi + m;
  }
}

void block_q5_0(const uint8_t* b, float* y) {  // {f16 d, u8 qh[4], u8 qs[16]}
  const float d = h2f(b);
  uint32_t qh;
  std::memcpy(&qh, b + 2, 4);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const uint32_t h0 = ((qh >> j) << 4) & 0x10;  // bit j -> bit 4 of element j
    const uint32_t h1 = (qh >> (j + 12)) & 0x10;  // bit j + 16 -> bit 4 of element j + 16
    const int x0 = static_cast<int>((qs[j] & 0x0fu) | h0) - 16;
    const int x1 = static_cast<int>((qs[j] >> 4) | h1) - 16;
    y[j] = static_cast<float>(x0) * d;
    y[j + 16] = static_cast<float>(x1) * d;
  }
}

void block_q5_1(const uint8_t* b, float* y) {  // {f16 d, f16 m, u8 qh[4], u8 qs[16]}
  const float d = h2f(b), m = h2f(b + 2);
  uint32_t qh;
  std::memcpy(&qh, b + 4, 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const uint32_t h0 = ((qh >> j) << 4) & 0x10;
    const uint32_t h1 = (qh >> (j + 12)) & 0x10;
    const float lo = static_cast<float>((qs[j] & 0x0fu) | h0) * d;
    const float hi = static_cast<float>((qs[j] >> 4) | h1) * d;
    y[j] = lo + m;
    y[j + 16] = hi + m;
  }
}

// Q4_K: 8 sub-blocks of 32 with 6-bit scales and mins packed in 12 bytes.
void scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void block_q4_k(const uint8_t* b, float* y) {  // {f16 d, f16 dmin, u8 scales[12], u8 qs[128]}
  const float d = h2f(b), dmin = h2f(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* q = b + 16;
  for (int is = 0; is < 8; is += 2, q += 32) {
    uint8_t sc, m;
    scale_min_k4(is, scales, &sc, &m);
    const float d1 = d * sc, m1 = dmin * m;
    scale_min_k4(is + 1, scales, &sc, &m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) {
      const float v = d1 * static_cast<float>(q[l] & 0x0f);
      *y++ = v - m1;
    }
    for (int l = 0; l < 32; ++l) {
      const float v = d2 * static_cast<float>(q[l] >> 4);
      *y++ = v - m2;
    }
  }
}

// Q6_K: 16 sub-blocks of 16 with int8 scales; 4 low bits in ql, 2 high bits in qh.
void block_q6_k(const uint8_t* b, float* y) {  // {u8 ql[128], u8 qh[64], i8 scales[16], f16 d}
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = h2f(b + 208);
  for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l + 0] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
  }
}

// Q5_K and IQ4_NL through the core's dequantizers (core/kquants.h), on a copy of the block.
void block_q5_k(const uint8_t* b, float* y) {
  BlockQ5_K blk;
  std::memcpy(&blk, b, sizeof blk);
  dequantize_row_q5_k(&blk, y, kSuperBlock);
}

void block_iq4_nl(const uint8_t* b, float* y) {
  BlockIQ4_NL blk;
  std::memcpy(&blk, b, sizeof blk);
  dequantize_row_iq4_nl(&blk, y, 32);
}

void row_bf16(const uint8_t* src, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    y[i] = std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
  }
}

using BlockFn = void (*)(const uint8_t*, float*);

BlockFn block_fn(uint32_t type) {
  switch (type) {
    case kQ4_1: return block_q4_1;
    case kQ5_0: return block_q5_0;
    case kQ5_1: return block_q5_1;
    case kQ4_K: return block_q4_k;
    case kQ6_K: return block_q6_k;
    case kQ5_K: return block_q5_k;
    case kIQ4_NL: return block_iq4_nl;
    default: return nullptr;
  }
}

}  // namespace

const char* ggml_type_name(uint32_t type) {
  const TypeTraits* t = traits(type);
  return t ? t->name : "unknown";
}

bool ggml_type_known(uint32_t type) { return traits(type) != nullptr; }

size_t ggml_block_size(uint32_t type) {
  const TypeTraits* t = traits(type);
  return t ? t->block : 0;
}

size_t ggml_type_size(uint32_t type) {
  const TypeTraits* t = traits(type);
  return t ? t->size : 0;
}

bool ggml_can_dequantize(uint32_t type) {
  switch (type) {
    case kF32: case kF16: case kBF16: case kQ4_0: case kQ8_0: return true;
    default: return block_fn(type) != nullptr;
  }
}

size_t ggml_row_bytes(uint32_t type, uint64_t row_len) {
  const TypeTraits* t = traits(type);
  if (!t) fail(Status::unsupported, "unknown ggml type " + std::to_string(type));
  if (row_len % t->block != 0) {
    fail(Status::invalid_argument, std::string("row length ") + std::to_string(row_len) + " is not a multiple of the " +
                                       t->name + " block size " + std::to_string(t->block));
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(row_len / t->block, static_cast<uint64_t>(t->size), &bytes) ||
      bytes > static_cast<uint64_t>(SIZE_MAX)) {
    fail(Status::invalid_argument, std::string(t->name) + " row of " + std::to_string(row_len) + " values: size overflows");
  }
  return static_cast<size_t>(bytes);
}

void dequantize_rows(uint32_t type, const void* src, float* dst, size_t rows, size_t row_len) {
  if (!ggml_can_dequantize(type)) {
    fail(Status::unsupported, std::string("cannot dequantize ggml type ") + ggml_type_name(type) + " (" +
                                  std::to_string(type) + ")");
  }
  const size_t rb = ggml_row_bytes(type, row_len);
  const auto* in = static_cast<const uint8_t*>(src);
  // The core row functions read 2-byte fields in place; a file with general.alignment 1 can
  // put a row at an odd address, so such a row is copied first.
  std::vector<uint16_t> aligned;
  auto row16 = [&](const uint8_t* p) -> const void* {
    if (reinterpret_cast<uintptr_t>(p) % 2 == 0) return p;
    aligned.resize((rb + 1) / 2);
    std::memcpy(aligned.data(), p, rb);
    return aligned.data();
  };
  for (size_t r = 0; r < rows; ++r, in += rb, dst += row_len) {
    switch (type) {
      case kF32: std::memcpy(dst, in, row_len * 4); break;
      case kF16: dequantize_row(WeightType::f16, row16(in), dst, row_len); break;
      case kQ4_0: dequantize_row(WeightType::q4_0, row16(in), dst, row_len); break;
      case kQ8_0: dequantize_row(WeightType::q8_0, row16(in), dst, row_len); break;
      case kBF16: row_bf16(in, dst, row_len); break;
      default: {
        const BlockFn fn = block_fn(type);
        const size_t blk = ggml_block_size(type), bs = ggml_type_size(type);
        for (size_t b = 0; b < row_len / blk; ++b) fn(in + b * bs, dst + b * blk);
      }
    }
  }
}

}  // namespace qmm::gguf
