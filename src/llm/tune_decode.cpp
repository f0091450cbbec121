// Model::tune_steps: the whole-step pass of the tuner (matmul/tune.h) over real decode steps.
#include <chrono>

#include "llm/model.h"

namespace qmm::llm {

const TuneReport& Model::tune_steps(ThreadPool& pool, const KernelFilter& filter, const StepTuneOptions& opt) {
  std::vector<PackedWeights*> ws;
  for (const PackedWeights* w : weights()) ws.push_back(const_cast<PackedWeights*>(w));  // (this model's own)
  Context ctx(pool);
  State s(*this, kTuneSteps, 1, ctx);
  const auto n_vocab = static_cast<int32_t>(cfg_.n_vocab);
  // The same tokens from position 0 every time, each step timed on its own (the pairs compare
  // step j of one candidate with step j of another).
  auto steps = [&] {
    using clock = std::chrono::steady_clock;
    std::vector<double> t(kTuneSteps);
    s.reset();
    int32_t tok = 1 % n_vocab;
    for (double& seconds : t) {
      const clock::time_point t0 = clock::now();
      forward(*this, s, &tok, 1);
      seconds = std::chrono::duration<double>(clock::now() - t0).count();
      tok = (tok * 7 + 1) % n_vocab;
    }
    return t;
  };
  tuning_.threads = ctx.threads();
  qmm::tune_steps(ws, filter, tuning_, opt, steps);
  return tuning_;
}

}  // namespace qmm::llm
