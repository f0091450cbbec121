// The microkernel contract (docs/design.md §3). A microkernel never allocates, never starts
// threads and never reads a global; everything it needs comes through its arguments.
//
// The NaN policy (include/qmm/qmm.h states it for users). Every packer and kernel follows it,
// and tests/test_kernels.cpp (NonFiniteInputsFollowTheNaNPolicy) and tests/test_packers.cpp
// (LhsNonFiniteBlocksMatchReference) check it for every variant of the kernel list:
//  - No float -> int conversion ever sees NaN or ±Inf (undefined behaviour in C++; SIMD
//    conversions give arbitrary integers). A quantizing LHS packer finds the 32-blocks whose
//    |x| max is not finite, or whose scale is not finite once rounded to its stored format,
//    and writes for them a NaN scale and zero quants (quantize_block_qsi8d32 does it for plain
//    C++ packers; kFp16NaN in core/fp16.h). An RHS packer stores a weight block scale that
//    is not finite as NaN (fp16_scale_or_nan). A new format (K-quants) does the same with its
//    own scales and minimums.
//  - The kernel's F32 epilogue carries the NaN to the outputs: acc += isum · (s_lhs · s_rhs)
//    makes the poisoned row (LHS) or column (RHS) NaN, and nothing may drop it: the clamp is
//    min(max(v, lo), hi) with NaN-propagating operations. x86 _mm*_max_ps(a, b) returns b when
//    either is NaN, so write _mm*_min_ps(hi, _mm*_max_ps(lo, v)); Arm FMAX / FMIN (vmaxq_f32,
//    svmax) propagate NaN, FMAXNM / FMINNM and SME2 FCLAMP return the number: never use them
//    on outputs. Scalar: std::min(std::max(v, lo), hi).
//  - Float kernels (F32 / F16 weights) need nothing more: F32 FMA arithmetic is the policy.
//  - Callers (the C API, the driver) never pass NaN clamp bounds or lo > hi.
//
// Packing parameters (mr, nr, kr, sr) tie a matmul kernel to its packers. They are read
// through `params(svl_bytes)` because SME kernels derive them from the streaming vector
// length (other kernels ignore it); tools can so ask for the layout at any SVL.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/blocks.h"

namespace qmm {

// Sizes: callers (the C API, the driver) pass only shapes with rows and k in 1..kMaxDim and
// rows·k <= kMaxElements (2^40), and panel starts likewise. Then no packer's size or offset
// arithmetic in size_t can overflow (for any layout below 2^20 bytes per element and tiles
// below 2^16), and packers need not check.
constexpr size_t kMaxDim = size_t{1} << 31;
constexpr size_t kMaxElements = size_t{1} << 40;
static_assert(sizeof(size_t) == 8, "qmm's size limits assume a 64-bit size_t");

// Instruction sets, in no particular order; the kernel list gives the priority.
// neon: base Armv8-A Advanced SIMD (every aarch64 CPU), for kernels that need nothing newer.
// amx: AMX-INT8 tile products; amxbf16: AMX-BF16 tile products (BF16 activations and weights).
enum class Isa : uint8_t { scalar, avx2, avxvnni, avx512vnni, amx, dotprod, i8mm, sme2, neon, amxbf16 };

const char* isa_name(Isa isa);
uint32_t isa_features(Isa isa);  // Feature bits (core/cpu.h) the ISA needs

struct TileParams {
  size_t mr, nr, kr, sr;   // packing parameters
  size_t m_step, n_step;   // sub-matmuls may start only at multiples of these
};

// The K values of one row a packed LHS holds together, rows interleaved chunk by chunk (a
// kernel name's LHS token p<mr>x<chunk>, docs/design.md §4): kr, kr/sr (KleidiAI's packers,
// which interleave each kr-chunk's sr sub-blocks), or the whole 32-value block whatever kr says
// (the AMX tile rows). tests/test_kleidiai_names.cpp checks every name against it.
enum class LhsChunk : uint8_t { kr, kr_over_sr, block };

// F32 activations [m, k] (row stride in bytes) -> packed LHS. Packs whole mr-row panels:
// `lhs_packed` points at the panel of row 0 of `lhs`; rows beyond m in the last panel are zero.
struct LhsPacker {
  const char* name;
  size_t (*packed_size)(size_t m, size_t k, size_t mr, size_t kr, size_t sr);
  // Byte offset of the panel holding row m_idx (m_idx a multiple of mr).
  size_t (*packed_offset)(size_t m_idx, size_t k, size_t mr, size_t kr, size_t sr);
  void (*run)(size_t m, size_t k, size_t mr, size_t kr, size_t sr, const float* lhs, size_t lhs_stride,
              void* lhs_packed);
  // A plain C++ twin writing the same bytes (tests compare byte for byte); nullptr when this
  // packer is itself plain reference code.
  const LhsPacker* reference = nullptr;
  LhsChunk chunk = LhsChunk::kr;
  // Whether a packed row carries its quantization scales (per 32-block beside block-quantized
  // weights, per row otherwise); false: the values themselves, rounded (the BF16 packers).
  bool block_scales = true;
  // The largest |activation| the packed format holds (F16: 65504); beyond it (or non-finite) the
  // packer writes NaN. The matmul driver gives such calls to PackedWeights::wide() instead.
  float max_abs = INFINITY;
};

inline size_t lhs_chunk(const LhsPacker& p, const TileParams& t) {
  return p.chunk == LhsChunk::block ? 32 : p.chunk == LhsChunk::kr_over_sr ? t.kr / t.sr : t.kr;
}

// GGUF rows [n, k] of `src_type` -> packed RHS (once, at load). `rhs_packed` must be zeroed
// by the caller and hold packed_size bytes.
struct RhsPacker {
  const char* name;
  WeightType src_type;
  size_t (*packed_size)(size_t n, size_t k, size_t nr, size_t kr, size_t sr);
  // Byte offset of the panel holding row n_idx (n_idx a multiple of nr).
  size_t (*packed_offset)(size_t n_idx, size_t k, size_t nr, size_t kr, size_t sr);
  void (*run)(size_t n, size_t k, size_t nr, size_t kr, size_t sr, const void* rhs, void* rhs_packed);
  // A plain C++ twin writing the same bytes; nullptr when this packer is itself reference code.
  const RhsPacker* reference = nullptr;
};

// dst[m, n] = clamp(lhs · rhsᵀ, min, max). `lhs_packed` / `rhs_packed` point at the panels of
// the sub-matmul's first row / column; dst at its first element; dst_stride_row in bytes.
using MatmulFn = void (*)(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed,
                          float* dst, size_t dst_stride_row, float clamp_min, float clamp_max);

struct Ukernel {
  const char* name;  // KleidiAI grammar: matmul_clamp_<dst>_<lhs>_<rhs>_<tile>_<isa>_<technique>
  Isa isa;
  WeightType type;   // GGUF weight type the RHS packer takes
  bool gemv;         // true: m == 1 only
  TileParams (*params)(size_t svl_bytes);
  const LhsPacker* lhs;
  const RhsPacker* rhs;
  MatmulFn run;
  // A plain C++ kernel computing the same arithmetic over the same packers (the tests compare
  // with it at F32-summation-order tolerance); nullptr: the scalar GEMM (GEMV) of the weight
  // type is the reference, at the quantized kernels' tolerance. Set where the kernel's
  // numerics are not the int8 path's (the AMX-BF16 GEMMs).
  const Ukernel* reference = nullptr;
  // On a GEMV: the GEMM that serves 2 to 4 rows (batched decode) while this GEMV is a weight's
  // decode plan (PackedWeights::kernel_for) — the plan's GEMM twin over the same packed RHS whose
  // few-row streams prefetch as this GEMV's does (the x86 `..._dpbusdl1` pairs), with the
  // GEMM's bits. nullptr: the GEMM's own few-row path.
  const Ukernel* few_rows = nullptr;
};

// Helpers over a kernel's own parameters.
inline size_t lhs_packed_size(const Ukernel& u, const TileParams& p, size_t m, size_t k) {
  return u.lhs->packed_size(m, k, p.mr, p.kr, p.sr);
}
inline size_t lhs_packed_offset(const Ukernel& u, const TileParams& p, size_t m_idx, size_t k) {
  return u.lhs->packed_offset(m_idx, k, p.mr, p.kr, p.sr);
}
inline size_t rhs_packed_size(const Ukernel& u, const TileParams& p, size_t n, size_t k) {
  return u.rhs->packed_size(n, k, p.nr, p.kr, p.sr);
}
inline size_t rhs_packed_offset(const Ukernel& u, const TileParams& p, size_t n_idx, size_t k) {
  return u.rhs->packed_offset(n_idx, k, p.nr, p.kr, p.sr);
}
inline size_t dst_offset(size_t m_idx, size_t n_idx, size_t dst_stride_row) {
  return m_idx * dst_stride_row + n_idx * sizeof(float);
}

}  // namespace qmm
