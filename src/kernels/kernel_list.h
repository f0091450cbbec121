// The one kernel list (docs/design.md §3): every matmul variant this build contains, best first.
// Dispatch (matmul/select), the tests and the benchmarks all iterate it. Adding a variant is its
// file pair (named for its ISA) and its line in kernel_list_<arch>.inc; the build compiles,
// declares and (x86 emulated tests) wraps every file of the folder (docs/design.md §10).
#pragma once
#include <span>
#include <string_view>

#include "kernels/ukernel.h"

namespace qmm {

std::span<const Ukernel* const> kernel_list();
const Ukernel* find_kernel(std::string_view name);  // nullptr if absent
// A name qmm used once and gave up because KleidiAI gives it to another layout: the message that
// refuses it (saying the new name), or nullptr. Callers refuse, never map: a framework asking for
// KleidiAI's kernel by that name must not get qmm's different bytes.
const char* retired_kernel_name(std::string_view name);
std::span<const Isa> isa_list();                    // the ISAs of this architecture, best first
bool parse_isa(std::string_view name, Isa* out);

// A kernel's parameters on this CPU (its SVL where it has SME).
TileParams kernel_params(const Ukernel& u);

// The NEON twin of an SME2 GEMM (the hybrid SME + NEON split, docs/design.md §6): a kernel
// that reads the SME2 kernel's packed operands at this CPU's SVL and gives its bits, or nullptr
// (no twin for that kernel, or the CPU lacks DotProd or SME). Not in the kernel list.
MatmulFn neon_twin(const Ukernel& sme2_gemm);

// How each kernel packs, for tools that draw or check layouts (`qmm layout`): every variant of
// this build's list, plus the SME2 variants on every architecture (their packers and params are
// portable code, kernels/sme2_params.h), in priority order with SME2 first as in the Arm list.
struct PackerPreset {
  const char* kernel;
  Isa isa;
  const LhsPacker* lhs;
  const RhsPacker* rhs;
  TileParams (*params)(size_t svl_bytes);
};
std::span<const PackerPreset> packer_presets();

}  // namespace qmm
