#include "llm/attention/attend_generic.h"

#include "core/fp16.h"
#include "llm/attention/attend_chunk_impl.h"

namespace qmm::llm {
namespace {

struct Portable {
  struct Kb {
    int8_t v[kBlock];
  };
  static Kb load_q8(const uint8_t* qs) {
    Kb k;
    std::memcpy(k.v, qs, kBlock);
    return k;
  }
  static Kb load_q4(const uint8_t* qs) {
    Kb k;
    for (size_t j = 0; j < kBlock / 2; ++j) {
      k.v[j] = static_cast<int8_t>((qs[j] & 0xf) - 8);
      k.v[j + kBlock / 2] = static_cast<int8_t>((qs[j] >> 4) - 8);
    }
    return k;
  }
  static v8 dot(const Kb& k, const int8_t* q, const int8_t*) {
    v8i s{};
    for (int l = 0; l < 8; ++l)
      for (int i = 0; i < 4; ++i) s[l] += int32_t{q[4 * l + i]} * int32_t{k.v[4 * l + i]};
    return __builtin_convertvector(s, v8);
  }
  template <bool Q4, size_t H>
  static void scores(const int8_t* qs, const int8_t* q_abs, const float* qd, const uint8_t* k, size_t stride, size_t hd, size_t len,
                     float scale, float* att) {
    scores_int8<Portable, Q4, H>(qs, q_abs, qd, k, stride, hd, len, scale, att);
  }
  static void load_rows(KvType t, const uint8_t* rows, size_t stride, size_t count, float* out, size_t hd) {
    kv_load(t, rows, stride, count, out, hd);
  }
  static constexpr bool kQ8ValuesDirect = false;
  static constexpr bool kF16Direct = false;  // (software conversion: rows are staged once instead)
  static v8 load8_f16(const uint16_t* p) {
    v8 r;
    for (int i = 0; i < 8; ++i) r[i] = fp16_to_fp32(p[i]);
    return r;
  }
  template <size_t H, class T>
  static void scores_rows(const float* q, const T* k, size_t stride, size_t hd, size_t len, float scale, float* att) {
    scores_rows_v8<Portable, H>(q, k, stride, hd, len, scale, att);
  }
  template <size_t H, class T>
  static void accumulate_values(const float* att, const T* v, size_t stride, size_t hd, size_t len, float* out, size_t ps) {
    accumulate_values_v8<Portable, H>(att, v, stride, hd, len, out, ps);
  }
  static float half(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, sizeof h);
    return fp16_to_fp32(h);
  }
};

}  // namespace

void attend_chunk_generic(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk, size_t pos0,
                          size_t rows, float scale, float softcap, float* scratch, float* part) {
  chunk_impl<Portable>(q, q_stride, heads, kv, hd, chunk, pos0, rows, scale, softcap, scratch, part);
}

}  // namespace qmm::llm
