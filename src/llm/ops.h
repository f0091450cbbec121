// The loops of the forward pass that are not matmuls: causal attention of one head over the
// KV cache, RMSNorm, SwiGLU. Plain C++ written so compilers vectorize it (independent
// partial sums, fixed-size inner loops); on x86-64 each function is compiled twice, for
// x86-64-v3 (AVX2, FMA) and for the baseline, and the dynamic loader picks one (function multi-versioning),
// so the binary still runs on any x86-64.
#pragma once
#include <cstddef>
#include <cstdint>

namespace qmm::llm {

// Causal attention of `rows` query rows of `heads` query heads that share one K/V head. Row r
// (position pos0 + r) attends to the cached positions 0..pos0+r:
//   out_{r,h} = Σ_p softmax_p(scale · q_{r,h}·k_p) · v_p.
//   q:    row r, head h's head_dim values at q + r·q_stride + h·head_dim
//   k, v: position p's head_dim values at k + p·kv_stride, v + p·kv_stride
//   att:  scratch of at least kAttendHeads·(pos0 + rows) floats
//   out:  row r, head h at out + r·out_stride + h·head_dim
// Up to kAttendHeads heads are computed together, so each K and V vector is read once for them.
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
