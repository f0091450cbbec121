// The AVX-512 VNNI attention kernel: attend_chunk_impl.h with int8 Q·K by vpdpbusd (two keys per
// zmm), F32/F16 scores and value sums sixteen columns a zmm; tiles of prefill rows score 16 keys a
// zmm from a key-major panel. attend_kernel.h has the contract and the list.
#pragma once
#include "llm/attention/attend_kernel.h"

namespace qmm::llm {

void attend_chunk_avx512(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t head_dim, size_t chunk, size_t pos0,
                     size_t rows, float scale, float softcap, float* scratch, float* part);
// attend_quantize_query's bytes sixteen lanes a vector (the kernel's own; tested against it).
void attend_quantize_query_avx512(const float* q, size_t head_dim, int8_t* qs, float* d);

}  // namespace qmm::llm
