// qmm tune: measures the decode plans of a model on this machine again (matmul/tune.h), prints
// every candidate with its time, and stores the choice in the tuning cache for later loads.
#include <cstdio>
#include <cstdlib>
#include <string>

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
            "on a CPU; this re-measures and prints the table.\n"
            "Then the whole-step pass: the model decodes real steps (4 tokens a run) with the per-class plans and\n"
            "with each other GEMV over a packed layout's weights (one layout at a time, and all at once), in pairs\n"
            "of rounds decided the same way (what decode runs between GEMVs, and the CPU's clock, count here);\n"
            "the winner is stored in the same file for this model and thread count, and loads apply it.",
            argc - 1, argv + 1);
  mf.add_to(args);
  bool no_steps = false;
  double step_budget = -1;  // (unset: 20)
  args.flag("--no-steps", &no_steps, "per-class pass only: no whole-step pass (a stored whole-step choice stays)")
      .real("--step-budget", &step_budget, "seconds after which the whole-step pass starts no new pair of rounds (default 20)");
  args.parse();
  if (mf.no_tune) throw UsageError("--no-tune contradicts qmm tune");
  if (!tune_enabled_by_env()) throw UsageError("QMM_TUNE=" + std::string(std::getenv("QMM_TUNE")) + " contradicts qmm tune");
  if (no_steps && step_budget != -1) throw UsageError("--step-budget contradicts --no-steps");
  if (step_budget == -1) step_budget = 20;
  if (!(step_budget > 0 && step_budget <= 3600)) throw UsageError("--step-budget must be in (0, 3600] seconds");
  mf.retune = true;
  const LoadedModel lm = LoadedModel::load(mf);
  if (!no_steps) {
    StepTuneOptions so;
    so.budget_seconds = step_budget;
    lm.model->tune_steps(lm.ctx->pool(), lm.filter, so);
  }
  std::printf("%s", lm.model->tuning().table().c_str());
  return 0;
}

}  // namespace qmm::cli
