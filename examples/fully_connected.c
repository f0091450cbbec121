/* An XNNPack-style fully-connected operator on qmm's microkernel API (per-channel int4 weights,
 * per-row int8 activations, the family frameworks run through KleidiAI):
 *   create: quantize F32 weights per output channel (QC4 rows, include/qmm/qmm.h) and pack them
 *           once for the GEMM and the GEMV variant;
 *   run:    quantize+pack the activations, then split N at n_step over the operator's own
 *           pthreads, each calling the microkernel on its columns; bias and clip in the kernel.
 * It runs the operator as a framework builds it (the best variants), then on every QC4 variant the
 * CPU runs (each ISA's GEMM and GEMV) and checks each output against a plain F32 computation: |y - y_f32| <= 0.15 * S + 1e-5
 * with S = sum |x|·|w| (int4 weights: half a step of max|w|/7 per weight, plus the 8-bit
 * activations), and that every output lies in [lo, hi]. Exit code 0 on success. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qmm/qmm.h>

enum { N = 200, K = 160, THREADS = 3 };

static void check(qmm_status status, const char* what) {
  if (status != QMM_OK) {
    fprintf(stderr, "%s failed: %s\n", what, qmm_last_error());
    exit(1);
  }
}

static void* xmalloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

/* The first variant this CPU runs for QC4 weights, GEMV (gemv = 1) or GEMM. */
static size_t find_variant(int gemv, qmm_ukernel_info* info) {
  for (size_t i = 0; i < qmm_ukernel_count(); ++i) {
    check(qmm_ukernel_get(i, info), "qmm_ukernel_get");
    if (info->type == QMM_TYPE_QC4 && info->is_gemv == gemv && info->available) return i;
  }
  fprintf(stderr, "no QC4 kernel\n");
  exit(1);
}

/* QC4 row (f32 scale, f32 bias, nibbles): symmetric, scale = max|w| / 7. */
static void quantize_qc4_row(const float* w, float bias, size_t k, unsigned char* row) {
  float amax = 0.0f;
  for (size_t c = 0; c < k; ++c) amax = fmaxf(amax, fabsf(w[c]));
  const float scale = amax / 7.0f, inv = scale > 0.0f ? 1.0f / scale : 0.0f;
  memcpy(row, &scale, 4);
  memcpy(row + 4, &bias, 4);
  memset(row + 8, 0, (k + 1) / 2);
  for (size_t c = 0; c < k; ++c) {
    long q = lroundf(w[c] * inv);
    q = q < -8 ? -8 : q > 7 ? 7 : q;
    row[8 + c / 2] |= (unsigned char)(((unsigned)q & 0xf) << (4 * (c % 2)));
  }
}

typedef struct {
  size_t index[2];        /* [0] GEMM, [1] GEMV */
  qmm_ukernel_info info[2];
  void* rhs_packed[2];
  size_t n, k;
} fc_op;

/* gemm / gemv: the variants the operator runs for m > 1 and m = 1. */
static void fc_create(fc_op* op, size_t gemm, size_t gemv, size_t n, size_t k, const float* w, const float* bias) {
  op->n = n;
  op->k = k;
  const size_t row_bytes = 8 + (k + 1) / 2;
  unsigned char* rows = xmalloc(n * row_bytes);
  for (size_t j = 0; j < n; ++j) quantize_qc4_row(w + j * k, bias[j], k, rows + j * row_bytes);
  for (int g = 0; g < 2; ++g) {
    op->index[g] = g ? gemv : gemm;
    check(qmm_ukernel_get(op->index[g], &op->info[g]), "qmm_ukernel_get");
    const size_t bytes = qmm_ukernel_rhs_packed_size(op->index[g], n, k);
    if (bytes == 0) check(QMM_ERR_INTERNAL, "qmm_ukernel_rhs_packed_size");
    op->rhs_packed[g] = xmalloc(bytes);
    check(qmm_ukernel_pack_rhs(op->index[g], n, k, rows, op->rhs_packed[g]), "qmm_ukernel_pack_rhs");
  }
  free(rows);
}

static void fc_destroy(fc_op* op) {
  for (int g = 0; g < 2; ++g) free(op->rhs_packed[g]);
}

typedef struct {
  const fc_op* op;
  int g;
  size_t m, n0, n1;
  const void* lhs_packed;
  float* y;
  float lo, hi;
  qmm_status status;
} fc_task;

static void* fc_worker(void* arg) {
  fc_task* t = arg;
  const fc_op* op = t->op;
  const size_t index = op->index[t->g];
  t->status = QMM_OK;
  if (t->n0 >= t->n1) return NULL;
  const char* rhs = (const char*)op->rhs_packed[t->g] + qmm_ukernel_rhs_packed_offset(index, t->n0, op->k);
  t->status = qmm_ukernel_run(index, t->m, t->n1 - t->n0, op->k, t->lhs_packed, rhs, t->y + t->n0,
                              op->n * sizeof(float), t->lo, t->hi);
  return NULL;
}

/* y[m, n] = clamp(x[m, k] · Wᵀ + bias, lo, hi). */
static void fc_run(const fc_op* op, size_t m, const float* x, float* y, float lo, float hi) {
  const int g = m == 1;
  const size_t index = op->index[g], n_step = op->info[g].n_step;
  void* lhs_packed = xmalloc(qmm_ukernel_lhs_packed_size(index, m, op->k));
  check(qmm_ukernel_pack_lhs(index, m, op->k, x, op->k * sizeof(float), lhs_packed), "qmm_ukernel_pack_lhs");
  /* Columns split at n_step multiples: each thread gets whole steps. */
  const size_t steps = (op->n + n_step - 1) / n_step, per = (steps + THREADS - 1) / THREADS;
  pthread_t threads[THREADS];
  fc_task tasks[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    size_t n0 = (size_t)i * per * n_step, n1 = n0 + per * n_step;
    if (n0 > op->n) n0 = op->n;
    if (n1 > op->n) n1 = op->n;
    tasks[i] = (fc_task){op, g, m, n0, n1, lhs_packed, y, lo, hi, QMM_OK};
    if (pthread_create(&threads[i], NULL, fc_worker, &tasks[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      exit(1);
    }
  }
  for (int i = 0; i < THREADS; ++i) {
    pthread_join(threads[i], NULL);
    check(tasks[i].status, "qmm_ukernel_run");
  }
  free(lhs_packed);
}

static float frand(uint32_t* s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

/* Runs m rows through the operator and compares with F32; returns the number of bad outputs. */
static int check_batch(const fc_op* op, size_t m, const float* w, const float* bias, uint32_t* seed) {
  const float lo = -2.0f, hi = 2.5f;
  float* x = xmalloc(m * K * sizeof(float));
  float* y = xmalloc(m * N * sizeof(float));
  for (size_t i = 0; i < m * K; ++i) x[i] = frand(seed);
  fc_run(op, m, x, y, lo, hi);
  int bad = 0;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < N; ++j) {
      double ref = bias[j], s = 0.0;
      for (size_t c = 0; c < K; ++c) {
        ref += (double)x[i * K + c] * w[j * K + c];
        s += fabs((double)x[i * K + c] * w[j * K + c]);
      }
      ref = ref < lo ? lo : ref > hi ? hi : ref;
      const float got = y[i * N + j];
      if (!(got >= lo && got <= hi) || fabs(got - ref) > 0.15 * s + 1e-5) {
        if (bad++ < 5) fprintf(stderr, "m=%zu (%zu, %zu): got %g, want %g (S = %g)\n", m, i, j, got, ref, s);
      }
    }
  }
  free(x);
  free(y);
  return bad;
}

/* Builds the operator on variants gemm / gemv and checks batches of 1, 5 and 9 rows. */
static int check_operator(size_t gemm, size_t gemv, const float* w, const float* bias) {
  uint32_t seed = 11;
  fc_op op;
  fc_create(&op, gemm, gemv, N, K, w, bias);
  int bad = 0;
  for (size_t m = 1; m <= 9; m += 4) bad += check_batch(&op, m, w, bias, &seed);
  printf("fully connected %dx%d, QC4: GEMM %s, GEMV %s: %s\n", N, K, op.info[0].name, op.info[1].name,
         bad ? "FAILED" : "ok");
  fc_destroy(&op);
  return bad;
}

int main(void) {
  uint32_t seed = 7;
  float* w = xmalloc((size_t)N * K * sizeof(float));
  float bias[N];
  for (size_t i = 0; i < (size_t)N * K; ++i) w[i] = frand(&seed) * 0.2f;
  for (size_t j = 0; j < N; ++j) bias[j] = frand(&seed);
  /* The operator as a framework builds it (the best variants), then on every QC4 GEMM this CPU
   * runs, each paired with the best GEMV: every ISA's kernels against the F32 result. */
  qmm_ukernel_info info;
  const size_t best_gemv = find_variant(1, &info);
  int bad = check_operator(find_variant(0, &info), best_gemv, w, bias);
  for (size_t i = 0; i < qmm_ukernel_count(); ++i) {
    check(qmm_ukernel_get(i, &info), "qmm_ukernel_get");
    if (info.type != QMM_TYPE_QC4 || !info.available) continue;
    bad += info.is_gemv ? check_operator(find_variant(0, &info), i, w, bias) : check_operator(i, best_gemv, w, bias);
  }
  free(w);
  if (bad) {
    printf("%d outputs off\n", bad);
    return 1;
  }
  printf("ok\n");
  return 0;
}
