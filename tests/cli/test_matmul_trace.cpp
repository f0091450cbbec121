// MatmulTrace (tools/qmm/cli/llm_util.h): a trace left open by an error uninstalls its observer
// when it goes away, so a later matmul never calls into a dead object (the sanitizer stage sees
// the use after scope if it did).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "matmul/matmul.h"
#include "qmm/cli/llm_util.h"

namespace qmm::cli {
namespace {

TEST(MatmulTrace, ATraceLeftOpenUninstallsItsObserver) {
  const size_t n = 16, k = 32;
  std::vector<float> weights(n * k, 0.5f), x(k, 1.0f), y(n, 0.0f);
  const PackedWeights w = PackedWeights::pack(WeightType::f32, n, k, weights.data(), {});
  Context ctx(1);
  {
    MatmulTrace trace;
    trace.begin("left open");
    matmul(w, 1, x.data(), k * 4, y.data(), n * 4, -INFINITY, INFINITY, ctx);
  }  // no end(): an exception between begin and end
  matmul(w, 1, x.data(), k * 4, y.data(), n * 4, -INFINITY, INFINITY, ctx);
  EXPECT_FLOAT_EQ(y[0], 16.0f);
  MatmulTrace closed;  // and one that ended leaves nothing for its destructor to undo
  closed.begin("closed");
  closed.end();
  matmul(w, 1, x.data(), k * 4, y.data(), n * 4, -INFINITY, INFINITY, ctx);
  EXPECT_FLOAT_EQ(y[n - 1], 16.0f);
}

}  // namespace
}  // namespace qmm::cli
