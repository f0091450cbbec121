// The portable attention kernel: attend_chunk_impl.h with plain-C++ int8 block dot products (the
// compiler vectorises them for the target): Arm and x86 CPUs without AVX2. attend_kernel.h has
// the contract and the list.
#pragma once
#include "llm/attention/attend_kernel.h"

namespace qmm::llm {

void attend_chunk_generic(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t head_dim, size_t chunk, size_t pos0,
                     size_t rows, float scale, float softcap, float* scratch, float* part);

}  // namespace qmm::llm
