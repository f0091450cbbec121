// qmm bench limits: the machine's measured limits, the yardstick of every other figure.
#include <cstdio>

#include "qmm/cli/args.h"
#include "bench_verbs.h"
#include "limits.h"

namespace qmm::cli {

int bench_limits(int argc, char** argv) {
  size_t threads = 1;
  bool json = false;
  Args args("bench limits", "Measure DRAM and cache read bandwidth and peak int8 / FP32 throughput.", argc - 1, argv + 1);
  args.size("-t,--threads", &threads, "threads (default 1)").flag("--json", &json, "print JSON");
  args.parse();
  const MachineLimits l = measure_limits(static_cast<int>(threads));
  print_limits(l, json);
  return 0;
}

}  // namespace qmm::cli
