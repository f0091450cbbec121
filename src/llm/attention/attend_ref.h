// The scalar reference attention kernel: attend_kernel.h's arithmetic in plain loops, one score
// at a time, sums in position order. Slow; the generated tests hold the other kernels to it.
#pragma once
#include "llm/attention/attend_kernel.h"

namespace qmm::llm {

void attend_chunk_ref(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t head_dim, size_t chunk, size_t pos0,
                     size_t rows, float scale, float softcap, float* scratch, float* part);

}  // namespace qmm::llm
