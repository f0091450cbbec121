// qmm layout: positions found by probing the real packers, checked by hand against the
// formulas of docs/design.md §5, plus every packer of the list. The command's argument errors are
// CTest cases in CMakeLists.txt (they run the qmm binary, under the emulator when cross built).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "kernels/kernel_list.h"
#include "qmm/layout/layout_probe.h"
#include "qmm/layout/layout_render.h"

namespace qmm::cli {
namespace {

const PackerPreset& first_preset_with(const std::string& packer, bool lhs) {
  for (const PackerPreset& p : packer_presets()) {
    if (packer == (lhs ? p.lhs->name : p.rhs->name)) return p;
  }
  throw std::runtime_error("no preset uses " + packer);
}

// `qmm layout rhs --packer rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0 -n 64 -k 64 --svl 512`
LayoutMap rhs_q4_64x64_svl512() {
  const PackerPreset& p = first_preset_with("rhs_pack_nxk_qsi4c32ps1s0scalef16_qsu4c32s16s0", false);
  return probe_rhs(*p.rhs, 64, 64, p.params(512 / 8));
}

// `qmm layout lhs --packer lhs_quant_pack_qsi8d32p_f32 -m 16 -k 64 --svl 512`
LayoutMap lhs_q8_16x64_svl512() {
  const PackerPreset& p = first_preset_with("lhs_quant_pack_qsi8d32p_f32", true);
  return probe_lhs(*p.lhs, 16, 64, p.params(512 / 8));
}

TEST(Layout, PresetsDescribeSme2OnEveryArchitecture) {
  const PackerPreset& p = first_preset_with("lhs_quant_pack_qsi8d32p_f32", true);
  EXPECT_STREQ(p.kernel, "matmul_clamp_f32_qsi8d32p1vlx4_qsi4c32p4vlx4_1vlx4vl_sme2_mopa");
  const TileParams t = p.params(512 / 8);  // SVL 512: mr = 512/32, nr = 4·512/32
  EXPECT_EQ(t.mr, 16u);
  EXPECT_EQ(t.nr, 64u);
  EXPECT_EQ(t.kr, 4u);
  EXPECT_EQ(t.sr, 2u);
  EXPECT_EQ(p.params(128 / 8).mr, 4u);
  EXPECT_EQ(p.params(2048 / 8).nr, 256u);
}

// docs/design.md §5 qsi4c32ps1s0scalef16, nr = 64: element (r, c) with b = c/32, q = (c%32)/4, i = c%4
// is nibble i of the little-endian u16 at u16-index (b·8 + q)·nr + r, i.e. byte
// 2·((b·8 + q)·64 + r) + i/2, low nibble for even i. Nibble index = 2·byte + (i odd).
TEST(Layout, RhsQ4_0Svl512MatchesDesign) {
  const LayoutMap map = rhs_q4_64x64_svl512();
  EXPECT_EQ(map.packed_bytes, 2304u);  // nr·(k/32)·(16 + 2) = 64·2·18
  ASSERT_EQ(map.panel_offsets.size(), 1u);
  EXPECT_EQ(find_data(map, 0, 0), 0u);     // u16 0, bits [3:0]: byte 0 low
  EXPECT_EQ(find_data(map, 0, 1), 1u);     // bits [7:4]: byte 0 high
  EXPECT_EQ(find_data(map, 0, 2), 2u);     // bits [11:8]: byte 1 low
  EXPECT_EQ(find_data(map, 0, 3), 3u);     // bits [15:12]: byte 1 high
  EXPECT_EQ(find_data(map, 1, 0), 4u);     // u16 1 = row 1: byte 2 low
  EXPECT_EQ(find_data(map, 0, 4), 2u * 128);   // q = 1: u16 64 = byte 128 low
  EXPECT_EQ(find_data(map, 5, 7), 279u);   // q = 1, i = 3: u16 69 = byte 138, i = 3 -> byte 139 high
  EXPECT_EQ(find_data(map, 0, 16), 2u * 512);  // q = 4 (GGUF high nibbles): u16 256 = byte 512 low
  EXPECT_EQ(find_data(map, 17, 40), 2628u);  // b = 1, q = 2, i = 0: u16 (8 + 2)·64 + 17 = 657 = byte 1314 low
  EXPECT_EQ(find_data(map, 63, 63), 4095u);  // b = 1, q = 7, i = 3: u16 1023 = byte 2046, byte 2047 high
  // Scales after nr·k/2 = 2048 data bytes: (row r, block b) at byte 2048 + (b·64 + r)·2, 4 nibbles.
  EXPECT_EQ(find_scale(map, 0, 0), 2u * 2048);
  EXPECT_EQ(find_scale(map, 10, 1), 2u * (2048 + (64 + 10) * 2));
  EXPECT_EQ(find_scale(map, 63, 1), 2u * 2302);
  for (size_t r = 0; r < 64; ++r) {
    for (size_t c = 0; c < 64; ++c) ASSERT_EQ(count_data(map, r, c), 1u) << r << "," << c;
    for (size_t b = 0; b < 2; ++b) ASSERT_EQ(count_scale(map, r, b), 4u);
  }
}

// docs/design.md §5 qsi8d32p, mr = 16: int8 of (r, c) at byte (c/4)·16·4 + r·4 + c%4 (2 nibbles);
// f16 scale of (block b, row r) at byte 16·64 + (b·16 + r)·2.
TEST(Layout, LhsQsi8d32pSvl512MatchesDesign) {
  const LayoutMap map = lhs_q8_16x64_svl512();
  EXPECT_EQ(map.packed_bytes, 1088u);  // mr·(k/32)·34 = 16·2·34
  EXPECT_EQ(find_data(map, 0, 0), 0u);
  EXPECT_EQ(find_data(map, 0, 3), 2u * 3);
  EXPECT_EQ(find_data(map, 1, 0), 2u * 4);
  EXPECT_EQ(find_data(map, 0, 4), 2u * 64);
  EXPECT_EQ(find_data(map, 7, 33), 2u * (8 * 64 + 7 * 4 + 1));  // 541
  EXPECT_EQ(find_data(map, 15, 63), 2u * 1023);
  EXPECT_EQ(find_scale(map, 0, 0), 2u * 1024);
  EXPECT_EQ(find_scale(map, 3, 0), 2u * (1024 + 3 * 2));
  EXPECT_EQ(find_scale(map, 15, 1), 2u * (1024 + 31 * 2));  // 1086
  for (size_t r = 0; r < 16; ++r) {
    for (size_t c = 0; c < 64; ++c) ASSERT_EQ(count_data(map, r, c), 2u);
    for (size_t b = 0; b < 2; ++b) ASSERT_EQ(count_scale(map, r, b), 4u);
  }
}

// Every packer the list (or the SME2 presets) uses: each element lands in one place, of one
// size, each block scale too, for a shape with a partial last panel.
TEST(Layout, EveryPackerPlacesEveryElementOnce) {
  for (const PackerPreset& p : packer_presets()) {
    if (block_len(p.rhs->src_type) > 32 || p.rhs->src_type == WeightType::iq4_nl || is_channel_type(p.rhs->src_type)) {
      continue;  // not drawn yet
    }
    const TileParams t = p.params(256 / 8);
    const size_t k = 64, rows = 5;
    for (const bool lhs : {true, false}) {
      SCOPED_TRACE(std::string(p.kernel) + (lhs ? " lhs " : " rhs ") + (lhs ? p.lhs->name : p.rhs->name));
      const LayoutMap map = lhs ? probe_lhs(*p.lhs, rows, k, t) : probe_rhs(*p.rhs, rows, k, t);
      const size_t size = count_data(map, 0, 0);
      ASSERT_GT(size, 0u);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < k; ++c) ASSERT_EQ(count_data(map, r, c), size) << r << "," << c;
      }
      // The LHS of a Q4_0/Q8_0 kernel carries a scale per block (qsi8d32p), unless its packer
      // writes plain values (LhsPacker::block_scales false: the BF16 one).
      const bool scaled = is_block_type(p.rhs->src_type) && (!lhs || p.lhs->block_scales);
      for (size_t r = 0; r < rows && scaled; ++r) {
        for (size_t b = 0; b < k / 32; ++b) ASSERT_EQ(count_scale(map, r, b), 4u) << r << "," << b;
      }
    }
  }
}

TEST(Layout, TextShowsLabelsAndLegend) {
  const LayoutMap map = rhs_q4_64x64_svl512();
  const std::string t = render_text(map, "test", 8, false);
  EXPECT_NE(t.find("   0 │ 0000 0001 0002 0003 0100 0101 0102 0103 0200"), std::string::npos);
  EXPECT_NE(t.find("2048 │ S 00.00"), std::string::npos);
  EXPECT_NE(t.find("data 2048 B in [0, 2048)  scales 256 B in [2048, 2304)"), std::string::npos);
  const std::string svg = render_svg(map, "test", 32);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find(">S 63.01</text>"), std::string::npos);
}

}  // namespace
}  // namespace qmm::cli
