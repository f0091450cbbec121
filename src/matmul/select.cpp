#include "matmul/select.h"

#include <cstdlib>

#include "core/error.h"
#include "kernels/kernel_list.h"

namespace qmm {
namespace {

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string tok = s.substr(start, end - start);
    while (!tok.empty() && tok.back() == ' ') tok.pop_back();
    while (!tok.empty() && tok.front() == ' ') tok.erase(tok.begin());
    if (!tok.empty()) out.push_back(tok);
    start = end + 1;
  }
  return out;
}

bool names(const std::vector<std::string>& list, const Ukernel& u) {
  for (const auto& t : list) {
    if (t == u.name || t == isa_name(u.isa)) return true;
  }
  return false;
}

void validate(const std::vector<std::string>& tokens, const std::string& what) {
  for (const auto& t : tokens) {
    Isa isa;
    if (parse_isa(t, &isa) || find_kernel(t)) continue;
    std::string valid;
    for (Isa i : isa_list()) valid += std::string(valid.empty() ? "" : ", ") + isa_name(i);
    for (const Ukernel* u : kernel_list()) valid += std::string(", ") + u->name;
    fail(Status::invalid_argument, what + ": unknown ISA or kernel '" + t + "'; valid names: " + valid);
  }
}

bool same_rhs(const Ukernel& a, const Ukernel& b) {
  if (a.rhs != b.rhs || a.type != b.type) return false;
  const TileParams pa = kernel_params(a), pb = kernel_params(b);
  return pa.nr == pb.nr && pa.kr == pb.kr && pa.sr == pb.sr;
}

}  // namespace

bool KernelFilter::permits(const Ukernel& u) const {
  if (u.isa == Isa::scalar) return true;
  if (!allow.empty() && !names(allow, u)) return false;
  return !names(deny, u);
}

KernelFilter parse_kernel_filter(const std::string& allow_csv, const std::string& deny_csv, const std::string& what) {
  KernelFilter f{split_csv(allow_csv), split_csv(deny_csv)};
  validate(f.allow, what);
  validate(f.deny, what);
  return f;
}

KernelFilter kernel_filter_from_env() {
  const char* allow = std::getenv("QMM_KERNELS");
  const char* deny = std::getenv("QMM_DISABLE");
  KernelFilter f{split_csv(allow ? allow : ""), split_csv(deny ? deny : "")};
  validate(f.allow, "QMM_KERNELS");
  validate(f.deny, "QMM_DISABLE");
  return f;
}

KernelFilter merge(const KernelFilter& a, const KernelFilter& b) {
  // An allow-list on both sides means the intersection: keep b's when present (narrower use).
  KernelFilter out = a;
  if (!b.allow.empty()) {
    if (a.allow.empty()) {
      out.allow = b.allow;
    } else {
      out.allow.clear();
      for (const auto& t : b.allow) {
        for (const auto& s : a.allow) {
          if (s == t) out.allow.push_back(t);
        }
      }
      if (out.allow.empty()) out.allow.push_back("scalar");
    }
  }
  out.deny.insert(out.deny.end(), b.deny.begin(), b.deny.end());
  return out;
}

std::string unavailable_reason(Isa isa, const CpuInfo& cpu) {
  const uint32_t need = isa_features(isa);
  if (cpu.has(need)) return "";
  return "CPU lacks " + feature_names(need & ~cpu.features);
}

KernelPair select_kernels(WeightType type, const KernelFilter& filter, const CpuInfo& cpu) {
  KernelPair pair;
  auto usable = [&](const Ukernel& u) -> bool {
    if (std::string why = unavailable_reason(u, cpu); !why.empty()) {
      pair.skipped.push_back(std::string(u.name) + ": " + why);
      return false;
    }
    if (!filter.permits(u)) {
      pair.skipped.push_back(std::string(u.name) + ": excluded by the kernel override");
      return false;
    }
    return true;
  };
  // A GEMV variant named in the allow-list brings the GEMM that shares its packed RHS (the
  // weights are packed for the GEMM): `--kernels <a GEMV>` must not fall back to scalar.
  auto partner_of_named_gemv = [&](const Ukernel& g) {
    if (!unavailable_reason(g, cpu).empty() || names(filter.deny, g)) return false;
    for (const Ukernel* v : kernel_list()) {
      if (v->gemv && v->type == type && names(filter.allow, *v) && same_rhs(*v, g) && unavailable_reason(*v, cpu).empty()) {
        return true;
      }
    }
    return false;
  };
  for (const Ukernel* u : kernel_list()) {
    if (u->type != type || u->gemv) continue;
    if (partner_of_named_gemv(*u) || usable(*u)) {
      pair.gemm = u;
      break;
    }
  }
  if (!pair.gemm) fail(Status::unsupported, std::string("no kernel for weight type ") + type_name(type));
  // The GEMV: the best usable one reading the same packed RHS, of any ISA (e.g. the I8MM GEMM
  // pairs with the DotProd GEMV: I8MM has no GEMV instruction of its own, and DotProd comes
  // with every I8MM CPU).
  for (const Ukernel* u : kernel_list()) {
    if (u->gemv && same_rhs(*u, *pair.gemm) && usable(*u)) {
      pair.gemv = u;
      break;
    }
  }
  if (!pair.gemv) pair.gemv = pair.gemm;
  return pair;
}

}  // namespace qmm
