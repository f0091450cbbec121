// qmm tune: measures the decode plans of a model on this machine again (matmul/tune.h), prints
// every candidate with its time, and stores the choice in the tuning cache for later loads.
#include <cstdio>

#include "args.h"
#include "llm_session.h"
#include "verbs.h"

namespace qmm::cli {

int cmd_tune(int argc, char** argv) {
  ModelFlags mf;
  Args args("tune",
            "Time every decode plan of a model's weights that needs no repack (each GEMV reading the packed\n"
            "weights, each column chunk per thread) with the model's thread count in pairs of rounds, keep the\n"
            "fastest where, paired with the default run for run, it is at least 1% faster and faster at a 99%\n"
            "confidence bound, and store the choice in the tuning cache\n"
            "($XDG_CACHE_HOME/qmm/tune.txt, else ~/.cache/qmm/tune.txt). Loads tune on their own the first time\n"
            "on a CPU; this re-measures and prints the table.",
            argc - 1, argv + 1);
  mf.add_to(args);
  args.parse();
  if (mf.no_tune) throw UsageError("--no-tune contradicts qmm tune");
  mf.retune = true;
  const LoadedModel lm = LoadedModel::load(mf);
  std::printf("%s", lm.model->tuning().table().c_str());
  return 0;
}

}  // namespace qmm::cli
