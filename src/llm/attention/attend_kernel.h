// The attention kernels: attend_chunk's contract (llm/ops.h) for a cache of any KvType, one
// file pair per variant (docs/design.md §7 "Attention kernels"):
//   attend_ref       scalar reference: plain loops, the arithmetic the tests hold the others to
//   attend_generic   vectorised portable C++ (GCC/Clang vector extension): Arm, x86 baseline
//   attend_avx2      x86-64-v3: F16C conversions, int8 Q·K by vpmaddubsw / vpmaddwd
//   attend_avx512    AVX-512 VNNI: int8 Q·K by vpdpbusd; prefill tiles score 16 keys a vector
//                    from a key-major panel (no horizontal sum per score)
// The list is best first; attend_kernel() is the first one this CPU runs (QMM_ATTENTION=<name>
// picks another one, for tests and benchmarks). Every process uses one kernel for all its rows,
// so a row's bits never depend on the thread count, batch or chunk split (attend_chunk's contract).
//
// What every kernel computes for one chunk, row r and query head h (q as attend_chunk's):
//   s_p = scale · q·k_p for the chunk's positions p the row sees, then (softcap > 0)
//   s_p = softcap · tanh(s_p / softcap); the partial is m = max s_p, l = Σ e^(s_p − m),
//   o = Σ e^(s_p − m) · v_p, with v_p the value row read as F32 (exact for every KvType).
// For F32 / F16 keys, q·k_p is the F32 dot product of q and the key read as F32. For Q8_0 / Q4_0
// keys it is an int8 dot product: q is quantized per block of 32 by attend_quantize_query
// (d_q = max|q| / 127, q_i = q_i · (127 / max|q|) rounded to the nearest, ties to even), and
//   q·k_p = Σ_b (d_k,b · d_q,b) · Σ_{i in b} q_i · k_i      (the inner sum exact in int32),
// k_i the block's int8 values (Q4_0: nibble − 8), d_k,b its F16 scale, the blocks added in order
// from 0 as s ← fma(d_k,b · d_q,b, Σ_b, s): every kernel's int8 scores are the reference's bits.
// Otherwise the kernels differ from the reference only in the order of float additions.
//
// Subnormal floats are flushed to zero while a kernel runs (FlushSubnormals, x86: MXCSR FTZ and
// DAZ): a decode row's value sums start each chunk at 0, and positions whose weight e^(s − m) is
// tiny (a score ~90 below the chunk's maximum: common at depth, where most positions barely
// count) made subnormal sums, each costing a microcode assist of ~100 cycles on the x86 cores
// here; a row whose scores spread that wide decoded ~16× slower (qmm_gbench_attention, scale 100).
// It changes a result only where a subnormal (below 1.2e-38) would have been kept, the same way
// for every kernel, thread and split, so the bits stay independent of them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "llm/ops.h"
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace qmm::llm {

// Flushes subnormal inputs and results to zero for its lifetime (restoring the caller's mode):
// x86's MXCSR FTZ | DAZ. Elsewhere nothing (AArch64 cores take subnormals at full speed).
class FlushSubnormals {
 public:
#if defined(__SSE__)
  // (LDMXCSR only when the mode changes: a kernel called per chunk under a caller that already
  // flushes reads the register and writes nothing.)
  FlushSubnormals() : saved_(_mm_getcsr()) {
    if ((saved_ & kFtzDaz) != kFtzDaz) _mm_setcsr(saved_ | kFtzDaz);
  }
  ~FlushSubnormals() {
    if ((saved_ & kFtzDaz) != kFtzDaz) _mm_setcsr(saved_);
  }

 private:
  static constexpr unsigned kFtzDaz = 0x8040;  // bits 15 (flush to zero) and 6 (denormals are zero)
  unsigned saved_;
#else
  FlushSubnormals() {}  // user-provided: a guard object, so no unused-variable warning where it does nothing
#endif
 public:
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;
};

using AttendChunkFn = void (*)(const float* q, size_t q_stride, size_t heads, const KvHead& kv, size_t head_dim, size_t chunk,
                               size_t pos0, size_t rows, float scale, float softcap, float* scratch, float* part);

struct AttendKernel {
  const char* name;    // "attend_avx512": what --trace and QMM_ATTENTION say
  uint32_t features;   // core/cpu.h Feature bits the CPU needs
  AttendChunkFn chunk;
  bool key_panel;      // tiles of prefill rows score the keys from a key-major panel (attend_chunk_impl.h)
};

// This build's kernels, best first (the reference last).
std::span<const AttendKernel> attend_kernels();
// The kernel this process uses: QMM_ATTENTION's (an unknown name or one this CPU cannot run is
// an error) or the first the CPU runs. Chosen once.
const AttendKernel& attend_kernel();
// Whether keys of type t are scored by int8 dot products.
inline bool attend_int8_keys(KvType t) { return t == KvType::q8_0 || t == KvType::q4_0; }

// One query head quantized for int8 Q·K: qs[i] = q[i] · 127 / max|q in block b| rounded to the nearest
// (ties to even), d[b] = max|q in block b| / 127
// (0 for an all-zero block; NaN and qs = 0 when the block is not finite, so its scores are NaN as
// the F32 dot's would be). head_dim % 32 == 0.
void attend_quantize_query(const float* q, size_t head_dim, int8_t* qs, float* d);

}  // namespace qmm::llm
