#include "llm/attention/attend_generic.h"

#include "core/fp16.h"
#include "llm/attention/attend_chunk_impl.h"

namespace qmm::llm {
namespace {

struct Portable : VectorLoops<Portable> {
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
  static v8i dot_i(const Kb& k, const int8_t* q, const int8_t*) {
    v8i s{};
    for (int l = 0; l < 8; ++l)
      for (int i = 0; i < 4; ++i) s[l] += int32_t{q[4 * l + i]} * int32_t{k.v[4 * l + i]};
    return s;
  }
  static void store_block(float d, const Kb& k, float* out) {
    for (size_t i = 0; i < kBlock; ++i) out[i] = d * static_cast<float>(k.v[i]);
  }
  static constexpr bool kQ8ValuesDirect = false;
  static constexpr bool kF16Direct = false;  // (software conversion: rows are staged once instead)
  static v8 load8_f16(const uint16_t* p) {
    v8 r;
    for (int i = 0; i < 8; ++i) r[i] = fp16_to_fp32(p[i]);
    return r;
  }
};

}  // namespace

void attend_chunk_generic(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t hd, size_t chunk, size_t pos0,
                          size_t rows, float scale, float softcap, float* scratch, float* part) {
  chunk_impl<Portable>(q, q_stride, heads, kv, hd, chunk, pos0, rows, scale, softcap, scratch, part);
}

}  // namespace qmm::llm
