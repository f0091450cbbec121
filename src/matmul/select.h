// Kernel selection (docs/design.md §3): per weight type, the best available GEMM of the kernel
// list and the GEMV of the same ISA that reads the same packed RHS; user overrides.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "core/cpu.h"
#include "kernels/ukernel.h"

namespace qmm {

// Allow-list / deny-list of ISA names ("avx2") or exact variant names. Empty allow = all.
// The scalar variants are always allowed: they are the last resort for every type.
// Names of another architecture's ISAs and variants ("sme2" on x86) are accepted and kept in
// `ignored` (a tool may mention them); an allow-list of nothing but such names allows scalar.
struct KernelFilter {
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  std::vector<std::string> ignored;
  bool permits(const Ukernel& u) const;
};

// Parses comma-separated lists; throws qmm::Error (with the closest valid name) when a token
// names no ISA of any architecture, no variant of the list and no other architecture's
// variant. `what` prefixes the message.
KernelFilter parse_kernel_filter(const std::string& allow_csv, const std::string& deny_csv,
                                 const std::string& what = "kernel override");
// QMM_KERNELS (allow) and QMM_DISABLE (deny) from the environment.
KernelFilter kernel_filter_from_env();
// Both: the environment, narrowed further by an API/flag filter.
KernelFilter merge(const KernelFilter& a, const KernelFilter& b);

struct FewRows {
  const Ukernel* gemm = nullptr;  // nullptr: no such tier
  size_t below = 0;
};

struct KernelPair {
  const Ukernel* gemm = nullptr;
  const Ukernel* gemv = nullptr;  // reads the GEMM's packed RHS; the GEMM itself if the ISA has none
  // For 1 < m < few[i].below rows: few[i].gemm, the next usable GEMMs on the same packed RHS
  // (gemm_min_rows), each serving the rows below the one before it: few[1]'s range is inside
  // few[0]'s (the AMX-BF16 GEMM from 64 rows, AMX-INT8 from 12, AVX-512 VNNI below).
  std::array<FewRows, 2> few{};
  // For a GEMM whose activations hold a narrower range (LhsPacker::max_abs: the F16-activation
  // GEMM), the next usable GEMM on the same packed RHS without that limit: the calls whose
  // activations leave the range run on it (nullptr: none).
  const Ukernel* wide = nullptr;
  std::vector<std::string> skipped;  // "name: reason" for every better variant passed over
};

KernelPair select_kernels(WeightType type, const KernelFilter& filter, const CpuInfo& cpu);

// Whether a and b read the same packed RHS (same packer and packing parameters).
bool shares_packed_rhs(const Ukernel& a, const Ukernel& b);
// The GEMVs usable here under `filter` that read `gemm`'s packed RHS, in list order (the
// selected one first); `gemm` itself when there is none. The tuner's candidates.
std::vector<const Ukernel*> gemv_candidates(const Ukernel& gemm, const KernelFilter& filter, const CpuInfo& cpu);

// Rows from which GEMM u beats the next GEMM of its weight type on the same packed RHS; 0: from
// 2 rows on. The AMX-BF16 GEMMs dequantize the weights once per call, which pays off only over
// enough rows (measured, docs/performance-amx.md "AMX-BF16 GEMMs").
size_t gemm_min_rows(const Ukernel& u);
// Streaming vector length (bytes) from which SME2 GEMM u executes fewer instructions per MAC than
// the next GEMM of its weight type; 0: at every SVL. Below it, selection passes u over (unless
// the allow-list names it). None has one now (select.cpp).
size_t gemm_min_svl_bytes(const Ukernel& u);

// Why an ISA / a variant cannot run here ("" if it can).
std::string unavailable_reason(Isa isa, const CpuInfo& cpu);
inline std::string unavailable_reason(const Ukernel& u, const CpuInfo& cpu) { return unavailable_reason(u.isa, cpu); }

}  // namespace qmm
