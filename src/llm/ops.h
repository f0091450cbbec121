// The loops of the forward pass that are not matmuls: causal attention of one head over the
// KV cache, RMSNorm, SwiGLU. Plain C++ written so compilers vectorize it (independent
// partial sums, fixed-size inner loops); on x86-64 each function is compiled twice, for
// x86-64-v3 (AVX2, FMA) and for the baseline, and the dynamic loader picks one (function multi-versioning),
// so the binary still runs on any x86-64.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "llm/kv_type.h"

namespace qmm::llm {

// Causal attention of `rows` query rows of `heads` query heads that share one K/V head. Row r
// (position pos0 + r) attends to the cached positions 0..pos0+r:
//   out_{r,h} = Σ_p softmax_p(scale · q_{r,h}·k_p) · v_p.
//   q:    row r, head h's head_dim values at q + r·q_stride + h·head_dim
//   k, v: position p's head_dim values at k + p·kv_stride, v + p·kv_stride
//   att:  scratch of at least kAttendHeads·(pos0 + rows) floats
//   out:  row r, head h at out + r·out_stride + h·head_dim
// Up to kAttendHeads heads are computed together (a group of 3 as one, not 2 + 1), so each K and
// V vector is read once for them. Subnormal sums are flushed to zero, as in the attention kernels
// (FlushSubnormals, attention/attend_kernel.h).
constexpr size_t kAttendHeads = 4;
// Where the attended positions are: position p at k + ((start + p) % slots)·kv_stride (the same
// for v). The default is plain p; a sliding window's cache is a ring of `slots` positions whose
// oldest attended one sits at `start`, so the positions come in at most two contiguous pieces.
struct KvRing {
  size_t start = 0;
  size_t slots = SIZE_MAX;
};
// With softcap > 0 the scores are capped first: s -> softcap · tanh(s / softcap) (Gemma 2).
void attend_heads(const float* q, size_t q_stride, size_t heads, const float* k, const float* v, size_t kv_stride,
                  size_t head_dim, size_t pos0, size_t rows, float scale, float* att, float* out, size_t out_stride,
                  float softcap = 0.0f, KvRing ring = {});

// Attention over a cache of any KvType (F16, Q8_0, Q4_0; F32 too), in chunks of kAttendChunk
// positions whose softmax partials are combined exactly. The arithmetic is fixed by the
// positions alone: chunk c covers the attended positions [c·kAttendChunk, (c+1)·kAttendChunk)
// counted from the first one attended; its partial for a row and head is (m, l, o) with m the
// largest score, l = Σ e^(s−m) and o = Σ e^(s−m)·v (exact two-pass softmax inside the chunk);
// the result is the left fold of the chunks' partials in order under attend_combine, then o / l.
// So a row gets the same bits whether its chunks run in one task or in many (split-KV decode),
// whichever thread count, batch or ring layout. The scores of Q8_0/Q4_0 keys are int8 dot products
// with the query rounded to int8; the kernels and their exact arithmetic: attention/attend_kernel.h.
constexpr size_t kAttendChunk = 256;

// One K/V head of the cache: attended position p (0 = the first attended) in row
// (ring.start + p) % ring.slots, at k + row·k_stride bytes (the same for v), rows of k_type / v_type.
struct KvHead {
  KvType k_type = KvType::f32, v_type = KvType::f32;
  const uint8_t* k = nullptr;
  const uint8_t* v = nullptr;
  size_t k_stride = 0, v_stride = 0;
  KvRing ring;
};

// Query rows an attention kernel scores together (a tile: each K and V row of the chunk is read
// from L1 for all of them).
constexpr size_t kAttendRows = 8;
// Prefill rows one attention task (forward.cpp) gives attend_chunk at most: the chunk's K/V rows
// and the AVX-512 kernel's key-major panel are read / built once for them.
constexpr size_t kAttendTaskRows = 32;
// Floats of scratch attend_chunk needs, and floats of one partial (m, l, o[head_dim]).
inline size_t attend_chunk_scratch(size_t head_dim) { return 2 * kAttendChunk * head_dim + kAttendRows * kAttendHeads * kAttendChunk; }
inline size_t attend_partial_size(size_t head_dim) { return head_dim + 2; }

// The partials of chunk c (positions c·kAttendChunk..) for `rows` query rows of `heads` heads
// (q as for attend_heads; row r attends to positions 0..pos0+r): partial (r, h) at
// part + (r·heads + h)·attend_partial_size(hd). A row that sees none of the chunk gets l = 0.
// Keys are read as stored: a rotated key type needs rotated queries (kv_rotate).
void attend_chunk(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t head_dim, size_t chunk, size_t pos0,
                  size_t rows, float scale, float softcap, float* scratch, float* part);
// acc[i] = acc[i] ⊕ part[i] for `count` partials (an acc with l = 0 is empty: it takes part),
// subnormal products flushed to zero as in the kernels (a partial far below the other's maximum is
// scaled by a tiny e^(m' − m)), so every split of a row folds alike and at full speed.
void attend_combine(float* acc, const float* part, size_t count, size_t head_dim);
// out + r·out_stride + h·head_dim = o / l of partial (r, h).
void attend_finish(const float* acc, size_t rows, size_t heads, size_t head_dim, float* out, size_t out_stride);

// The attention a cache of types kv runs, for --trace: "attend_avx512 (K f16, V f16: chunks of
// 256 positions, split-KV for decode rows)" (the kernel attention/attend_kernel.h chose),
// or attend_heads for F32.
std::string attention_trace(KvTypes kv);

// out = x / sqrt(mean(x²) + eps) · gain
void rmsnorm(float* out, const float* x, const float* gain, size_t n, float eps);

// gate[i] = silu(gate[i]) · up[i]  (silu(x) = x / (1 + e^-x))
void swiglu(float* gate, const float* up, size_t n);

// gate[i] = gelu(gate[i]) · up[i], GELU's tanh approximation:
// gelu(x) = x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))) = x / (1 + e^(-2·√(2/π) · (x + 0.044715 x³)))
void geglu(float* gate, const float* up, size_t n);

// x[i] = cap · tanh(x[i] / cap)
void softcap_logits(float* x, size_t n, float cap);

}  // namespace qmm::llm
