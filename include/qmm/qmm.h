/* qmm: quantized matrix-multiplication microkernels for LLM inference on CPUs.
 *
 * Stable C API (C ABI, no C++ types). Typical use:
 *   qmm_weights* w;  qmm_weights_pack(QMM_TYPE_Q4_0, n, k, gguf_rows, NULL, &w);   // once, at load
 *   qmm_context* c;  qmm_context_create(4, &c);                                      // threads + scratch
 *   qmm_matmul(w, m, x, k * 4, y, n * 4, -INFINITY, INFINITY, c);                   // every matmul
 * Every call returns QMM_OK or an error code; qmm_last_error() (per thread) says what was wrong.
 * Frameworks with their own threading use the per-variant microkernel calls at the end. */
#ifndef QMM_QMM_H
#define QMM_QMM_H

#include <stddef.h>

/* QMM_API marks the C API: the library is built with hidden visibility, so these functions are
 * the only symbols a shared libqmm exports. */
#ifndef QMM_API
#if defined(__GNUC__) || defined(__clang__)
#define QMM_API __attribute__((visibility("default")))
#else
#define QMM_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define QMM_VERSION_MAJOR 0
#define QMM_VERSION_MINOR 1
#define QMM_VERSION_PATCH 0

typedef enum qmm_status {
  QMM_OK = 0,
  QMM_ERR_INVALID_ARGUMENT = 1, /* null pointer, zero or overflowing size, bad k, bad name */
  QMM_ERR_UNSUPPORTED = 2,      /* type or shape no kernel handles */
  QMM_ERR_OUT_OF_MEMORY = 3,
  QMM_ERR_IO = 4,
  QMM_ERR_INTERNAL = 5
} qmm_status;

/* Weight types, numbered as GGML/GGUF number them. Calls take the type as an int and report an
 * unknown one (QMM_ERR_UNSUPPORTED); the two bounds make every int a valid qmm_type value, so
 * (qmm_type)-1 is well defined in C++ too.
 * QC8 / QC4 are qmm's per-channel types (numbered outside GGML's range, never in a GGUF file):
 * one F32 scale and one F32 bias per output channel (row of W), symmetric int8 / int4 values,
 * activations quantized per row (asymmetric int8), as frameworks use KleidiAI. Their rows, as
 * qmm_weights_pack and qmm_ukernel_pack_rhs take them: f32 scale, f32 bias (little-endian, no
 * alignment needed), then QC8: k int8; QC4: (k+1)/2 bytes, element 2i in the low nibble of byte
 * i and 2i+1 in the high one, signed int4 (two's complement). Weight = q * scale. */
typedef enum qmm_type {
  QMM_TYPE_F32 = 0,
  QMM_TYPE_F16 = 1,
  QMM_TYPE_Q4_0 = 2,
  QMM_TYPE_Q8_0 = 8,
  QMM_TYPE_Q4_K = 12,
  QMM_TYPE_Q5_K = 13,
  QMM_TYPE_Q6_K = 14,
  QMM_TYPE_IQ4_NL = 20,
  QMM_TYPE_QC8 = 1024,
  QMM_TYPE_QC4 = 1025,
  QMM_TYPE_FORCE_INT_MIN = -0x7fffffff - 1,
  QMM_TYPE_FORCE_INT = 0x7fffffff
} qmm_type;

typedef struct qmm_weights qmm_weights;
typedef struct qmm_context qmm_context;

QMM_API const char* qmm_version(void);       /* "0.1.0" */
QMM_API const char* qmm_cpu_info(void);      /* "x86_64 <brand>; features: avx2 fma ..." */
QMM_API const char* qmm_last_error(void);    /* message of this thread's last failed call ("" if none) */

/* Pack options: NULL means defaults (environment QMM_KERNELS / QMM_DISABLE apply). */
typedef struct qmm_pack_options {
  const char* kernels; /* allow-list: comma-separated ISA or variant names, or NULL */
  const char* disable; /* deny-list, or NULL */
  qmm_context* context;/* pack with this context's threads, or NULL */
} qmm_pack_options;

/* Sizes: every n, m, k is 1..2^31 with n*k and m*k at most 2^40; anything else (zero, or a size
 * that would overflow) is QMM_ERR_INVALID_ARGUMENT. Float pointers and byte strides are
 * multiples of 4. */

/* Packs GGUF rows [n, k] of `type` (a qmm_type value, k contiguous) once. k % 32 == 0 for
 * Q4_0 / Q8_0. */
QMM_API qmm_status qmm_weights_pack(int type, size_t n, size_t k, const void* data, const qmm_pack_options* options,
                            qmm_weights** out);
/* Quantizes F32 weights [n, k] (k contiguous) per output channel and packs them once:
 * type QMM_TYPE_QC8 (scale = max|w|/127) or QMM_TYPE_QC4 (scale = max|w|/7, values -8..7),
 * q = round(w / scale). bias: n F32 values added to the outputs, or NULL for none. Any k up to
 * 65536 (2^16: the kernels' int32 sums are exact up to there; QC8 / QC4 in qmm_weights_pack and
 * the qmm_ukernel_* calls have the same bound).
 * A row holding NaN or ±Inf gets a NaN scale (its output column is NaN); other types are
 * QMM_ERR_UNSUPPORTED (use qmm_weights_pack). */
QMM_API qmm_status qmm_weights_pack_f32(int type, size_t n, size_t k, const float* weights, const float* bias,
                                        const qmm_pack_options* options, qmm_weights** out);
/* The chosen kernel names (gemv = 1: the m == 1 kernel), or NULL for a NULL handle. */
QMM_API const char* qmm_weights_kernel(const qmm_weights* w, int gemv);
QMM_API size_t qmm_weights_packed_bytes(const qmm_weights* w);
QMM_API void qmm_weights_free(qmm_weights* w);

/* A thread pool (threads >= 1) plus scratch. One call at a time per context: a call made while
 * another thread's call uses the same context (qmm_matmul, qmm_weights_pack with
 * options->context) fails with QMM_ERR_INVALID_ARGUMENT and touches nothing. Free a context
 * only when no call uses it (qmm_context_free waits for a call still running). */
QMM_API qmm_status qmm_context_create(int threads, qmm_context** out);
QMM_API void qmm_context_free(qmm_context* c);

/* dst[m, n] = clamp(lhs[m, k] · Wᵀ, min, max); strides in bytes. ctx NULL: one thread.
 * clamp_min <= clamp_max, neither NaN (-INFINITY / INFINITY: no clamp).
 *
 * NaN and ±Inf in lhs or in the weights propagate as F32 arithmetic would, identically on every
 * kernel and with no undefined behaviour on any path:
 *   - Q4_0 / Q8_0 weights: activations are quantized per 32-element block of k. A block that
 *     holds NaN or ±Inf (or values beyond its binary16 scale, |x| >= 65520 * 127) makes every
 *     output of its row NaN. A weight block whose scale d is NaN or ±Inf makes every output of
 *     its column NaN (qmm's quantizers give a block with a non-finite F32 value a NaN d).
 *   - QC8 / QC4 weights: activations are quantized per row. A row that holds NaN or ±Inf makes
 *     every output of its row NaN; a channel whose scale is NaN or ±Inf makes its column NaN.
 *     The bias is added in F32 (a NaN or ±Inf bias gives what F32 addition gives).
 *   - F32 / F16 weights: each output is what F32 arithmetic gives in any summation order: NaN
 *     when one of its products is NaN (a NaN input, or ±Inf times 0) or they hold both +Inf and
 *     -Inf, else ±Inf when one is infinite.
 * Every other output is bit for bit what it is without the non-finite input. The clamp keeps
 * NaN (clamp(NaN) = NaN) and clamps ±Inf like any number. */
QMM_API qmm_status qmm_matmul(const qmm_weights* w, size_t m, const float* lhs, size_t lhs_stride, float* dst,
                      size_t dst_stride, float clamp_min, float clamp_max, qmm_context* ctx);

/* ---- Microkernel level: every variant of the kernel list, by index ---- */
typedef struct qmm_ukernel_info {
  const char* name;       /* e.g. matmul_clamp_f32_qsi8d32p4x4_qsi4c32p8x4_4x8_scalar */
  const char* isa;        /* "scalar", "avx512vnni", "sme2", ... */
  const char* lhs_packer; /* e.g. lhs_quant_pack_qsi8d32p_f32 */
  const char* rhs_packer; /* e.g. rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0 */
  qmm_type type;
  int is_gemv;            /* 1: m == 1 only */
  int available;          /* 1: this CPU can run it */
  size_t mr, nr, kr, sr, m_step, n_step;
} qmm_ukernel_info;

QMM_API size_t qmm_ukernel_count(void);
/* The size / offset getters return 0 for a bad index, a variant this CPU cannot run, or a zero
 * or too large (overflowing) shape, and set qmm_last_error(). */
QMM_API qmm_status qmm_ukernel_get(size_t index, qmm_ukernel_info* out);
QMM_API qmm_status qmm_ukernel_find(const char* name, size_t* index);
QMM_API size_t qmm_ukernel_lhs_packed_size(size_t index, size_t m, size_t k);
QMM_API size_t qmm_ukernel_lhs_packed_offset(size_t index, size_t m_idx, size_t k);
QMM_API size_t qmm_ukernel_rhs_packed_size(size_t index, size_t n, size_t k);
QMM_API size_t qmm_ukernel_rhs_packed_offset(size_t index, size_t n_idx, size_t k);
QMM_API qmm_status qmm_ukernel_pack_lhs(size_t index, size_t m, size_t k, const float* lhs, size_t lhs_stride,
                                void* lhs_packed);
/* rhs_packed must hold qmm_ukernel_rhs_packed_size bytes; this call zeroes it first. */
QMM_API qmm_status qmm_ukernel_pack_rhs(size_t index, size_t n, size_t k, const void* rhs, void* rhs_packed);
/* lhs_packed / rhs_packed point at the panels of rows m_idx / n_idx (multiples of m_step / n_step).
 * Made to be called per tile from the caller's threads: a valid call checks its arguments in
 * about 90 instructions and allocates nothing (the first call builds the checks' table). */
QMM_API qmm_status qmm_ukernel_run(size_t index, size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed,
                           float* dst, size_t dst_stride_row, float clamp_min, float clamp_max);

#ifdef __cplusplus
}
#endif
#endif /* QMM_QMM_H */
