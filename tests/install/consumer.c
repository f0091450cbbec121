/* A tiny program against an installed qmm, built as C and as C++ (tests/install/run.sh):
 * packs F32 weights, multiplies one row and checks the result. */
#include <qmm/qmm.h>
#include <stdio.h>

int main(void) {
  float w_rows[4 * 32], x[32], y[4];
  for (int i = 0; i < 4 * 32; ++i) w_rows[i] = (float)(i / 32 + 1); /* row r is all r + 1 */
  for (int i = 0; i < 32; ++i) x[i] = 1.0f;
  qmm_weights* w = NULL;
  if (qmm_weights_pack(QMM_TYPE_F32, 4, 32, w_rows, NULL, &w) != QMM_OK ||
      qmm_matmul(w, 1, x, sizeof x, y, sizeof y, -1e30f, 1e30f, NULL) != QMM_OK) {
    fprintf(stderr, "consumer: %s\n", qmm_last_error());
    return 1;
  }
  qmm_weights_free(w);
  for (int r = 0; r < 4; ++r) {
    if (y[r] != 32.0f * (float)(r + 1)) {
      fprintf(stderr, "consumer: y[%d] = %g\n", r, (double)y[r]);
      return 1;
    }
  }
  printf("qmm %s: ok\n", qmm_version());
  return 0;
}
