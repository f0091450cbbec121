/* The README's C example as a complete program: pack Q4_0 weights once, multiply a batch of
 * F32 activations (GEMM) and one row (GEMV), and check a result against a plain dot product.
 *   cc matmul.c $(pkg-config --cflags --libs qmm) -o matmul && ./matmul        (installed qmm)
 * Exit code 0 on success; every failing call prints qmm_last_error() and stops. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <qmm/qmm.h>

enum { N = 1024, K = 512, M = 4, BLOCK = 32, BLOCK_BYTES = 18 }; /* Q4_0: f16 scale + 16 bytes */

/* Stops the program on a failed call, with the library's message. */
static void check(qmm_status status, const char* what) {
  if (status != QMM_OK) {
    fprintf(stderr, "%s failed: %s\n", what, qmm_last_error());
    exit(1);
  }
}

/* GGUF Q4_0 rows [N, K]: every block has scale 1/16 (f16 0x2C00) and nibbles from a counter. */
static unsigned char* make_q4_0_rows(void) {
  unsigned char* rows = malloc((size_t)N * (K / BLOCK) * BLOCK_BYTES);
  if (!rows) return NULL;
  uint32_t state = 12345;
  for (size_t b = 0; b < (size_t)N * (K / BLOCK); ++b) {
    unsigned char* block = rows + b * BLOCK_BYTES;
    block[0] = 0x00; /* little-endian f16 0x2C00 = 0.0625 */
    block[1] = 0x2C;
    for (int i = 0; i < 16; ++i) {
      state = state * 1664525u + 1013904223u;
      block[2 + i] = (unsigned char)(state >> 24);
    }
  }
  return rows;
}

/* Weight (row n, column k) of those rows: element j of a block is the low nibble of qs[j],
 * element j + 16 its high nibble; value = (nibble - 8) * scale. */
static float q4_0_weight(const unsigned char* rows, size_t n, size_t k) {
  const unsigned char* block = rows + (n * (K / BLOCK) + k / BLOCK) * BLOCK_BYTES;
  const size_t j = k % BLOCK;
  const int nibble = j < 16 ? (block[2 + j] & 15) : (block[2 + j - 16] >> 4);
  return (float)(nibble - 8) * 0.0625f;
}

int main(void) {
  unsigned char* rows = make_q4_0_rows();
  float* x = malloc(sizeof(float) * M * K);
  float* y = malloc(sizeof(float) * M * N);
  if (!rows || !x || !y) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < (size_t)M * K; ++i) x[i] = (float)((int)(i % 17) - 8) / 8.0f;

  qmm_weights* w = NULL;
  qmm_context* ctx = NULL;
  check(qmm_weights_pack(QMM_TYPE_Q4_0, N, K, rows, NULL, &w), "qmm_weights_pack"); /* once, at load */
  check(qmm_context_create(2, &ctx), "qmm_context_create");                      /* threads + scratch */
  check(qmm_matmul(w, M, x, K * sizeof(float), y, N * sizeof(float), -INFINITY, INFINITY, ctx), "qmm_matmul");
  printf("qmm %s on %s\nGEMM %s\nGEMV %s\n", qmm_version(), qmm_cpu_info(), qmm_weights_kernel(w, 0),
         qmm_weights_kernel(w, 1));

  /* The activations are quantized to int8 per 32-block, so compare with a tolerance. */
  int bad = 0;
  for (size_t m = 0; m < M; ++m) {
    for (size_t n = 0; n < N; n += 97) {
      double ref = 0;
      for (size_t k = 0; k < K; ++k) ref += (double)x[m * K + k] * q4_0_weight(rows, n, k);
      if (fabs(ref - y[m * N + n]) > 0.02 * sqrt((double)K)) {
        fprintf(stderr, "y[%zu, %zu] = %g, expected %g\n", m, n, y[m * N + n], ref);
        bad = 1;
      }
    }
  }
  /* One row (m = 1): the GEMV kernel, on the same packed weights, within the same tolerance
     (its activations may be rounded otherwise than the GEMM's: F16 for an SME2 GEMM, int8 here). */
  float y1[N];
  check(qmm_matmul(w, 1, x, K * sizeof(float), y1, N * sizeof(float), -INFINITY, INFINITY, ctx), "qmm_matmul");
  for (size_t n = 0; n < N; ++n) {
    double ref = 0;
    for (size_t k = 0; k < K; ++k) ref += (double)x[k] * q4_0_weight(rows, n, k);
    if (fabs(ref - y1[n]) > 0.02 * sqrt((double)K)) {
      fprintf(stderr, "GEMV y[0, %zu] = %g, expected %g (GEMM %g)\n", n, y1[n], ref, y[n]);
      bad = 1;
      break;
    }
  }

  qmm_context_free(ctx);
  qmm_weights_free(w);
  free(rows);
  free(x);
  free(y);
  puts(bad ? "FAILED" : "ok");
  return bad;
}
