// qmm info: what the CPU has and which kernels each weight type gets, and why not the others.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "args.h"
#include "core/cpu.h"
#include "kernels/kernel_list.h"
#include "matmul/select.h"
#include "matmul/tune.h"
#include "qmm/qmm.h"
#include "verbs.h"

namespace qmm::cli {

int cmd_info(int argc, char** argv) {
  std::string kernels, disable;
  bool all = false;
  Args args("info", "Print the detected CPU features and, per weight type, the selected GEMM and GEMV.", argc - 1,
            argv + 1);
  args.str("--kernels", &kernels, "LIST", "allow only these ISAs / variants (like QMM_KERNELS)")
      .str("--disable", &disable, "LIST", "exclude these ISAs / variants (like QMM_DISABLE)")
      .flag("-a,--all", &all, "also list every variant of the kernel list");
  args.parse();
  const KernelFilter filter = kernel_overrides(kernels, disable, "--kernels/--disable");
  const CpuInfo& cpu = cpu_info();
  std::printf("qmm %s\n", qmm_version());
  std::printf("cpu:       %s%s%s\n", cpu.arch.c_str(), cpu.brand.empty() ? "" : " ", cpu.brand.c_str());
  std::printf("features:  %s\n", feature_names(cpu.features).c_str());
  if (cpu.has(kFeatSME)) std::printf("SVL:       %zu bits (%zu bytes)\n", cpu.svl_bytes * 8, cpu.svl_bytes);
  std::string isas;
  for (Isa isa : isa_list()) {
    const bool ok = unavailable_reason(isa, cpu).empty();
    isas += std::string(isas.empty() ? "" : ", ") + isa_name(isa) + (ok ? "" : " (absent)");
  }
  std::printf("ISAs:      %s   (priority order)\n", isas.c_str());
  if (!filter.allow.empty() || !filter.deny.empty()) {
    std::string a, d;
    for (const auto& t : filter.allow) a += (a.empty() ? "" : ",") + t;
    for (const auto& t : filter.deny) d += (d.empty() ? "" : ",") + t;
    std::printf("override:  allow=[%s] disable=[%s]\n", a.c_str(), d.c_str());
  }
  for (const TypeInfo& info : type_table()) {  // the GGUF types the kernels take
    if (!info.target()) continue;
    const WeightType t = info.type();
    const KernelPair pair = select_kernels(t, filter, cpu);
    std::printf("\n%s weights:\n", type_name(t));
    // The GEMMs widest rows first: the GEMM, then each tier; each serves from the next one's `below` (2 for the last).
    const Ukernel* g = pair.gemm;
    for (size_t i = 0;; ++i) {
      const bool next = i < pair.few.size() && pair.few[i].gemm;
      const size_t from = next ? pair.few[i].below : 2;
      std::printf("  GEMM (m >= %zu):%*s%s\n", from, from < 10 ? 2 : 1, "", g->name);
      if (!next) break;
      g = pair.few[i].gemm;
    }
    std::printf("  GEMV (m = 1):   %s\n", pair.gemv->name);
    if (pair.wide) {
      std::printf("  GEMM for activations beyond %g: %s\n", static_cast<double>(pair.gemm->lhs->max_abs), pair.wide->name);
    }
    for (const auto& s : pair.skipped) std::printf("  skipped        %s\n", s.c_str());
  }
  std::printf("\ndecode plans tuned by measurement (qmm tune; QMM_TUNE=0 or --no-tune keeps the defaults):\n");
  for (const std::string& line : describe_tune_cache()) std::printf("  %s\n", line.c_str());
  if (all) {
    std::printf("\nkernel list (%zu variants, best first):\n", kernel_list().size());
    int type_width = 0, name_width = 0;  // columns as wide as the longest type and kernel name
    for (const Ukernel* u : kernel_list()) {
      type_width = std::max(type_width, static_cast<int>(std::strlen(type_name(u->type))));
      name_width = std::max(name_width, static_cast<int>(std::strlen(u->name)));
    }
    for (const Ukernel* u : kernel_list()) {
      const std::string why = unavailable_reason(*u, cpu);
      std::printf("  %-*s %-5s %-*s %s\n", type_width, type_name(u->type), u->gemv ? "gemv" : "gemm", name_width,
                  u->name, why.empty() ? "available" : why.c_str());
    }
  }
  return 0;
}

}  // namespace qmm::cli
