// Kernel selection (DESIGN.md §3): per weight type, the best available GEMM of the kernel
// list and the GEMV of the same ISA that reads the same packed RHS; user overrides.
#pragma once
#include <string>
#include <vector>

#include "core/cpu.h"
#include "kernels/ukernel.h"

namespace qmm {

// Allow-list / deny-list of ISA names ("avx2") or exact variant names. Empty allow = all.
// The scalar variants are always allowed: they are the last resort for every type.
struct KernelFilter {
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  bool permits(const Ukernel& u) const;
};

// Parses comma-separated lists; throws qmm::Error naming the valid names when a token names
// neither an ISA of this architecture nor a variant of the list. `what` prefixes the message.
KernelFilter parse_kernel_filter(const std::string& allow_csv, const std::string& deny_csv,
                                 const std::string& what = "kernel override");
// QMM_KERNELS (allow) and QMM_DISABLE (deny) from the environment.
KernelFilter kernel_filter_from_env();
// Both: the environment, narrowed further by an API/flag filter.
KernelFilter merge(const KernelFilter& a, const KernelFilter& b);

struct KernelPair {
  const Ukernel* gemm = nullptr;
  const Ukernel* gemv = nullptr;  // reads the GEMM's packed RHS; the GEMM itself if the ISA has none
  std::vector<std::string> skipped;  // "name: reason" for every better variant passed over
};

KernelPair select_kernels(WeightType type, const KernelFilter& filter, const CpuInfo& cpu);

// Why an ISA / a variant cannot run here ("" if it can).
std::string unavailable_reason(Isa isa, const CpuInfo& cpu);
inline std::string unavailable_reason(const Ukernel& u, const CpuInfo& cpu) { return unavailable_reason(u.isa, cpu); }

}  // namespace qmm
