// One name = one layout: every qmm kernel name (packer_presets(): this build's list plus the SME2
// variants on every architecture) against KleidiAI's kernels (tests/data/kleidiai_kernels.txt,
// facts read from KleidiAI's sources) and against the kernel's own params().
//  - A qmm kernel with a KleidiAI name has that kernel's mr, nr, kr, sr and packers (names
//    compared without _neon / _avx2 / _ref); one with another name has the mr, nr, kr, sr of
//    every KleidiAI kernel of the same operands and tile (the name up to the ISA and technique).
//  - Every name's panels say its own params: LHS `p<mr>x..`, RHS `p<nr>x..` (vl = SVL/32), the
//    tile `<m_step>x<n_step>`, and where a panel spells `x<kr>s<sr>` (docs/design.md §4), kr and sr;
//    an LHS `p<mr>x<chunk>` without `s` spells the K values of a row its packer holds together
//    (lhs_chunk: kr, kr/sr or the 32-block), except in KleidiAI's own names (bound above).
// Checked at SVL 128, 256 and 512 bits.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/kernel_list.h"

namespace qmm {
namespace {

struct KaiKernel {
  std::string name, mr, nr;
  size_t kr = 0, sr = 0;
  std::string lhs, rhs;
};

std::vector<KaiKernel> load_kleidiai() {
  std::ifstream f(QMM_KLEIDIAI_LIST);
  std::vector<KaiKernel> out;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    KaiKernel k;
    s >> k.name >> k.mr >> k.nr >> k.kr >> k.sr >> k.lhs >> k.rhs;
    if (!s) ADD_FAILURE() << "bad line in " << QMM_KLEIDIAI_LIST << ": " << line;
    out.push_back(k);
  }
  return out;
}

// "4vl" -> 4·vl, "8" -> 8.
size_t resolve(const std::string& v, size_t vl) {
  const bool is_vl = v.ends_with("vl");
  const size_t n = std::stoul(is_vl ? v.substr(0, v.size() - 2) : v);
  return is_vl ? n * vl : n;
}

std::string plain_packer(std::string n) {
  for (const char* suffix : {"_neon", "_avx2", "_ref"}) {
    if (n.ends_with(suffix)) n.resize(n.size() - std::string(suffix).size());
  }
  return n;
}

// matmul_clamp_<dst>_<lhs>_<rhs>_<tile>_<isa>[_<technique>] -> its fields.
std::vector<std::string> fields(const std::string& name) {
  std::vector<std::string> out;
  std::istringstream s(name);
  for (std::string t; std::getline(s, t, '_');) out.push_back(t);
  return out;
}
std::string operands_and_tile(const std::string& name) {
  const std::vector<std::string> f = fields(name);
  return f.size() < 6 ? name : f[3] + "_" + f[4] + "_" + f[5];
}

const size_t kSvls[] = {16, 32, 64};

TEST(KleidiAINames, EveryKernelNameMeansOneLayout) {
  const std::vector<KaiKernel> kai = load_kleidiai();
  ASSERT_GT(kai.size(), 40u) << "cannot read " << QMM_KLEIDIAI_LIST;
  size_t kai_named = 0;
  for (const PackerPreset& p : packer_presets()) {
    const std::string name = p.kernel;
    // KleidiAI's own name binds exactly; up to the ISA, every KleidiAI kernel of those operands
    // and tile binds (KleidiAI itself gives two layouts the QC4 GEMV's operands and tile, its SME
    // and SME2 ones, so only the exact name can take them).
    bool has_kai_name = false;
    for (const KaiKernel& k : kai) has_kai_name = has_kai_name || name == k.name;
    for (const KaiKernel& k : kai) {
      const bool same_name = name == k.name;
      if (has_kai_name ? !same_name : operands_and_tile(name) != operands_and_tile(k.name)) continue;
      kai_named += same_name;
      for (size_t svl : kSvls) {
        const TileParams t = p.params(svl);
        const size_t vl = svl / 4;
        EXPECT_TRUE(t.mr == resolve(k.mr, vl) && t.nr == resolve(k.nr, vl) && t.kr == k.kr && t.sr == k.sr)
            << name << " has (mr, nr, kr, sr) = (" << t.mr << ", " << t.nr << ", " << t.kr << ", " << t.sr
            << ") at SVL " << svl * 8 << " but KleidiAI's kai_" << k.name << " reads (" << resolve(k.mr, vl) << ", "
            << resolve(k.nr, vl) << ", " << k.kr << ", " << k.sr << "): rename it (docs/design.md §4)";
      }
      if (same_name && k.lhs != "-") {
        EXPECT_EQ(plain_packer(p.lhs->name), plain_packer(k.lhs)) << name;
      }
      if (same_name && k.rhs != "-") {
        EXPECT_EQ(plain_packer(p.rhs->name), plain_packer(k.rhs)) << name;
      }
    }
  }
  // The drop-ins exist (the SME2 ones on every architecture): Q4_0 GEMM + GEMV, QC8 GEMM + GEMV.
  EXPECT_GE(kai_named, 4u);
}

TEST(KleidiAINames, EveryNameSpellsItsOwnParams) {
  const std::vector<KaiKernel> kai = load_kleidiai();
  const std::regex panel(R"(^[a-z0-9]*?p([0-9]+)(vl)?x([0-9]+)(?:s([0-9]+))?$)");
  const std::regex tile(R"(^([0-9]+)(vl)?x([0-9]+)(vl)?(?:x[0-9]+)?$)");
  for (const PackerPreset& p : packer_presets()) {
    const std::string name = p.kernel;
    const std::vector<std::string> f = fields(name);
    ASSERT_GE(f.size(), 7u) << name;
    bool kai_name = false;
    for (const KaiKernel& k : kai) kai_name = kai_name || name == k.name;
    std::smatch l, r, t;
    ASSERT_TRUE(std::regex_match(f[3], l, panel)) << name << ": LHS field '" << f[3] << "'";
    ASSERT_TRUE(std::regex_match(f[4], r, panel)) << name << ": RHS field '" << f[4] << "'";
    ASSERT_TRUE(std::regex_match(f[5], t, tile)) << name << ": tile field '" << f[5] << "'";
    for (size_t svl : kSvls) {
      const TileParams tp = p.params(svl);
      const size_t vl = svl / 4;
      auto rows = [&](const std::ssub_match& n, const std::ssub_match& is_vl) {
        return std::stoul(n.str()) * (is_vl.matched ? vl : 1);
      };
      EXPECT_EQ(rows(l[1], l[2]), tp.mr) << name << " at SVL " << svl * 8;
      EXPECT_EQ(rows(r[1], r[2]), tp.nr) << name << " at SVL " << svl * 8;
      EXPECT_EQ(rows(t[1], t[2]), tp.m_step) << name << " at SVL " << svl * 8;
      EXPECT_EQ(rows(t[3], t[4]), tp.n_step) << name << " at SVL " << svl * 8;
      if (!l[4].matched && !kai_name) {
        EXPECT_EQ(std::stoul(l[3].str()), lhs_chunk(*p.lhs, tp)) << name << ": p<mr>x<chunk> spells the K chunk of "
                                                                   << p.lhs->name;
      }
      for (const std::smatch* m : {&l, &r}) {
        if (!(*m)[4].matched) continue;
        EXPECT_EQ(std::stoul((*m)[3].str()), tp.kr) << name << ": x<kr>s<sr> spells kr";
        EXPECT_EQ(std::stoul((*m)[4].str()), tp.sr) << name << ": x<kr>s<sr> spells sr";
      }
    }
  }
}

TEST(KleidiAINames, RetiredNameIsRefusedWithTheNewOne) {
  const char* old_name = "matmul_clamp_f32_qsi8d32p1x4_qsi4c32p8x4_1x8_scalar";
  EXPECT_EQ(find_kernel(old_name), nullptr);
  const char* why = retired_kernel_name(old_name);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why).find("matmul_clamp_f32_qsi8d32p1x4s2_qsi4c32p8x4s2_1x8_scalar"), std::string::npos);
  EXPECT_EQ(retired_kernel_name("matmul_clamp_f32_qsi8d32p1x4s2_qsi4c32p8x4s2_1x8_scalar"), nullptr);
  // KleidiAI's QC4 GEMV name, once qmm's kr 8 kernel's, now means KleidiAI's layout (the SME2 list).
  EXPECT_EQ(retired_kernel_name("matmul_clamp_f32_qai8dxp1x4_qsi4cxp4vlx4_1x4vl_sme2_sdot"), nullptr);
}

}  // namespace
}  // namespace qmm
