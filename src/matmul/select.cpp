#include "matmul/select.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

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

// Every ISA of every architecture: names of another one are accepted and ignored, so one
// QMM_DISABLE=sme2 or QMM_KERNELS=avx2,i8mm works on every machine.
constexpr Isa kAllIsas[] = {Isa::scalar, Isa::avx2, Isa::avxvnni, Isa::avx512vnni, Isa::amx, Isa::amxbf16, Isa::dotprod, Isa::i8mm, Isa::sme2, Isa::neon};

bool is_local_isa(const std::string& name) {
  Isa isa;
  return parse_isa(name, &isa);
}

// An ISA of another architecture, or a variant name whose ISA token is one ("..._sme2_mopa").
bool is_foreign(const std::string& name) {
  for (Isa i : kAllIsas) {
    const std::string isa = isa_name(i);
    if (is_local_isa(isa)) continue;
    if (name == isa) return true;
    if (name.rfind("matmul_clamp_", 0) != 0) continue;
    for (const std::string& stem : {isa, isa == "avx512vnni" ? std::string("avx512") : isa}) {  // "..._avx512_fma"
      if (name.find("_" + stem + "_") != std::string::npos || name.ends_with("_" + stem)) return true;
    }
  }
  return false;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The name nearest to `t`: one that starts with it first ("avx512" -> "avx512vnni", not the
// nearer "avx2"), else the fewest edits.
std::string closest_name(const std::string& t) {
  std::string best;
  size_t best_d = SIZE_MAX;
  auto consider = [&](const std::string& n) {
    const size_t edits = edit_distance(t, n);
    if (const size_t d = n.rfind(t, 0) == 0 ? edits : edits + (size_t{1} << 20); d < best_d) {
      best = n;
      best_d = d;
    }
  };
  for (Isa i : kAllIsas) consider(isa_name(i));
  for (const Ukernel* u : kernel_list()) consider(u->name);
  return best;
}

// Keeps the names of this build, moves those of another architecture to `ignored`, and fails
// on anything else with the closest valid name.
std::vector<std::string> check_names(const std::vector<std::string>& tokens, const std::string& what,
                                     std::vector<std::string>* ignored) {
  std::vector<std::string> kept;
  for (const auto& t : tokens) {
    if (is_local_isa(t) || find_kernel(t)) {
      kept.push_back(t);
    } else if (const char* why = retired_kernel_name(t)) {
      fail(Status::invalid_argument, what + ": '" + t + "' " + why);
    } else if (is_foreign(t)) {
      ignored->push_back(t);
    } else {
      fail(Status::invalid_argument, what + ": unknown ISA or kernel '" + t + "'; did you mean '" + closest_name(t) +
                                         "'? (qmm info -a lists the kernels)");
    }
  }
  return kept;
}

KernelFilter checked_filter(const std::string& allow_csv, const std::string& deny_csv, const std::string& allow_what,
                            const std::string& deny_what) {
  KernelFilter f;
  const std::vector<std::string> allow = split_csv(allow_csv);
  f.allow = check_names(allow, allow_what, &f.ignored);
  // An allow-list of other architectures' names only allows nothing vectorised here.
  if (f.allow.empty() && !allow.empty()) f.allow.push_back(isa_name(Isa::scalar));
  f.deny = check_names(split_csv(deny_csv), deny_what, &f.ignored);
  return f;
}

bool same_rhs(const Ukernel& a, const Ukernel& b) { return shares_packed_rhs(a, b); }

}  // namespace

bool shares_packed_rhs(const Ukernel& a, const Ukernel& b) {
  if (a.rhs != b.rhs || a.type != b.type) return false;
  const TileParams pa = kernel_params(a), pb = kernel_params(b);
  return pa.nr == pb.nr && pa.kr == pb.kr && pa.sr == pb.sr;
}

std::vector<const Ukernel*> gemv_candidates(const Ukernel& gemm, const KernelFilter& filter, const CpuInfo& cpu) {
  std::vector<const Ukernel*> out;
  for (const Ukernel* u : kernel_list()) {
    if (u->gemv && same_rhs(*u, gemm) && unavailable_reason(*u, cpu).empty() && filter.permits(*u)) out.push_back(u);
  }
  if (out.empty()) out.push_back(&gemm);
  return out;
}

bool KernelFilter::permits(const Ukernel& u) const {
  if (u.isa == Isa::scalar) return true;
  if (!allow.empty() && !names(allow, u)) return false;
  return !names(deny, u);
}

KernelFilter parse_kernel_filter(const std::string& allow_csv, const std::string& deny_csv, const std::string& what) {
  return checked_filter(allow_csv, deny_csv, what, what);
}

KernelFilter kernel_filter_from_env() {
  const char* allow = std::getenv("QMM_KERNELS");
  const char* deny = std::getenv("QMM_DISABLE");
  return checked_filter(allow ? allow : "", deny ? deny : "", "QMM_KERNELS", "QMM_DISABLE");
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
  out.ignored.insert(out.ignored.end(), b.ignored.begin(), b.ignored.end());
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
    // Below its SVL floor a GEMM runs only where the allow-list names it.
    const bool named = std::find(filter.allow.begin(), filter.allow.end(), u.name) != filter.allow.end();
    if (cpu.svl_bytes < gemm_min_svl_bytes(u) && !named) {
      pair.skipped.push_back(std::string(u.name) + ": executes more instructions per MAC than the next below SVL " +
                             std::to_string(gemm_min_svl_bytes(u) * 8));
      return false;
    }
    return true;
  };
  // A GEMV variant named exactly in the allow-list brings the GEMM that shares its packed RHS
  // (the weights are packed for the GEMM), of its own ISA where there is one: `--kernels <a
  // GEMV>` must not fall back to scalar. An ISA name allows only that ISA's kernels.
  auto partner_of_named_gemv = [&](const Ukernel& g, bool same_isa) {
    if (!unavailable_reason(g, cpu).empty() || names(filter.deny, g) || cpu.svl_bytes < gemm_min_svl_bytes(g)) {
      return false;
    }
    for (const Ukernel* v : kernel_list()) {
      const bool named = std::find(filter.allow.begin(), filter.allow.end(), v->name) != filter.allow.end();
      if (v->gemv && v->type == type && named && same_rhs(*v, g) && (!same_isa || v->isa == g.isa) &&
          unavailable_reason(*v, cpu).empty()) {
        return true;
      }
    }
    return false;
  };
  for (bool same_isa : {true, false}) {
    for (const Ukernel* u : kernel_list()) {
      if (!pair.gemm && u->type == type && !u->gemv && partner_of_named_gemv(*u, same_isa)) pair.gemm = u;
    }
  }
  for (const Ukernel* u : kernel_list()) {
    if (!pair.gemm && u->type == type && !u->gemv && usable(*u)) pair.gemm = u;
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
  // The first GEMM after `above` in the list that reads the GEMM's packed RHS, runs here, is
  // permitted and passes `ok` (nullptr: none): the row tiers' and the wide GEMM's search.
  auto next_gemm = [&](const Ukernel* above, auto ok) -> const Ukernel* {
    bool after = false;
    for (const Ukernel* u : kernel_list()) {
      if (u == above) {
        after = true;
      } else if (after && !u->gemv && same_rhs(*u, *pair.gemm) && unavailable_reason(*u, cpu).empty() && filter.permits(*u) && ok(*u)) {
        return u;
      }
    }
    return nullptr;
  };
  const Ukernel* above = pair.gemm;  // each tier: the next GEMM after the one above it in the list
  for (FewRows& tier : pair.few) {
    const size_t rows = gemm_min_rows(*above);
    if (rows <= 2) break;
    above = next_gemm(above, [](const Ukernel&) { return true; });
    if (!above) break;
    tier = {above, rows};
  }
  if (pair.gemm->lhs->max_abs < INFINITY) {
    pair.wide = next_gemm(pair.gemm, [](const Ukernel& u) { return u.lhs->max_abs == INFINITY; });
  }
  return pair;
}

size_t gemm_min_svl_bytes(const Ukernel&) {
  // None now. The F16-activation Q4_0 GEMM had 32 (below SVL 256 it executed more instructions
  // per MAC than the int8 one); since it dequantizes each panel's weights once for all row tiles
  // it executes fewer at every SVL: 64 x 256 x 512, kernels alone, counted under qemu 11, SVL
  // 512 / 256 / 128: 38,023 / 114,243 / 412,515 against 69,095 / 197,815 / 642,775 (docs/arm.md).
  // With one row tile (m <= SVL/32) it still dequantizes per tile: ~4 % more than the int8 GEMM
  // at SVL 128, 0.65x at 512.
  return 0;
}

size_t gemm_min_rows(const Ukernel& u) {
  // 2-vCPU Xeon (Sapphire/Emerald Rapids class), n 4096, k 2048, against the AMX-INT8 GEMM
  // (AVX-512 VNNI's for IQ4_NL): BF16 wins from 64 rows on (Q4_0 at load ~4: 32 rows 541-569
  // against 638-648 GOPS, 64 rows 745-802 against 661-706).
  // AMX-INT8 against AVX-512 VNNI (Q4_0, n 8192, k 2048, 1 thread, 2026-11-27, load ~2): the
  // 16-row tiles waste most of their products below 12 rows (m 4: 0.877 against 0.388 ms;
  // m 8: 0.987 / 0.612; m 12: 1.023 / 1.141; m 16: 1.021 / 1.209): batched decode of a few
  // sequences (serve's slots) runs on the VNNI GEMM. The two give the same bits (KernelTwins).
  if (u.isa == Isa::amx) return 12;
  // The F16-activation SME2 Q4_K GEMM dequantizes each panel once per call: with one row tile
  // (m <= VL = SVL/32) below SVL 512 the int8 Q4_K GEMM executes fewer instructions (64 x 256
  // x 512 cut to m = VL, qemu 11: SVL 128 60,895 against 80,688, SVL 256 34,999 against
  // 40,680; SVL 512 22,435 against 21,796; two tiles on, the F16 GEMM at every SVL).
  // The F16-activation Q6_K GEMM likewise (SVL 128 100,476 against 117,768, SVL 256 58,564
  // against 59,232; SVL 512 38,568 against 31,064).
  // The F16-activation Q5_K GEMM dequantizes more per weight (5 bits: no LUTI4): with one row
  // tile the int8 Q5_K GEMM counts fewer at every SVL (SVL 512 27,141 against 37,397, 256
  // 44,409 / 71,861, 128 79,905 / 143,037); from two tiles the F16 one (SVL 512 44,645 against
  // 54,057, 256 83,941 / 88,513).
  if (u.isa == Isa::sme2 && u.lhs->max_abs < INFINITY &&
      (u.type == WeightType::q4_k || u.type == WeightType::q5_k || u.type == WeightType::q6_k)) {
    const TileParams p = kernel_params(u);
    return p.mr < 16 || u.type == WeightType::q5_k ? p.mr + 1 : 0;
  }
  return u.isa == Isa::amxbf16 ? 64 : 0;
}

}  // namespace qmm
