/* The C API header compiles as C (C11), and a type outside the enum is a plain int there. */
#include "qmm/qmm.h"

qmm_status qmm_test_c_pack_bad_type(void) {
  const unsigned char rows[64] = {0};
  qmm_weights* w = 0;
  return qmm_weights_pack((qmm_type)-1, 1, 32, rows, 0, &w);
}
