// The x86-64-v3 attention kernel (AVX2, FMA, F16C): attend_chunk_impl.h with int8 Q·K by
// vpsignb / vpmaddubsw / vpmaddwd per block of 32. attend_kernel.h has the contract and the list.
#pragma once
#include "llm/attention/attend_kernel.h"

namespace qmm::llm {

void attend_chunk_avx2(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t head_dim, size_t chunk, size_t pos0,
                     size_t rows, float scale, float softcap, float* scratch, float* part);

}  // namespace qmm::llm
