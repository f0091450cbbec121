// Terminal rendering of a probed layout: the packed buffer as lines of cells.
#include <algorithm>
#include <cstdio>
#include <string>

#include "core/blocks.h"
#include "layout_render.h"

namespace qmm::cli {
namespace {

size_t digits(size_t max_value) {
  size_t d = 1;
  for (; max_value >= 10; max_value /= 10) ++d;
  return std::max<size_t>(d, 2);
}

std::string padded(size_t v, size_t width) {
  std::string s = std::to_string(v);
  return std::string(width > s.size() ? width - s.size() : 0, '0') + s;
}

std::string fmt(const char* f, size_t a, size_t b = 0, size_t c = 0, size_t d = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

// A distinct 256-colour foreground per source row; neighbours differ strongly.
int row_colour(uint32_t row) {
  static const int kPalette[] = {196, 33, 214, 40, 201, 51, 226, 129, 208, 27, 118, 163, 45, 220, 93, 34};
  return kPalette[row % (sizeof kPalette / sizeof kPalette[0])];
}

}  // namespace

namespace {

// One cell (or its part on this line) of `nibs` nibbles, padded to its slots.
std::string draw_cell(const LayoutMap& map, const Cell& c, size_t nibs, size_t unit, size_t slot, bool color) {
  const size_t slots = std::max<size_t>((nibs + unit - 1) / unit, 1);
  const size_t w = slots * slot - 1;
  std::string label = cell_label(map, c.owner);
  if (label.size() > w) {  // "S 01.00" -> "S0100" -> "S"
    label.erase(std::remove_if(label.begin(), label.end(), [](char ch) { return ch == ' ' || ch == '.'; }), label.end());
    if (label.size() > w) label = label.substr(0, 1);
  }
  size_t vis = 0;  // visible width: "·" is one column in two bytes
  for (unsigned char ch : label) vis += (ch & 0xc0) != 0x80;
  std::string cell = label + std::string(w > vis ? w - vis : 0, ' ');
  const Owner& o = c.owner;
  if (color && (o.kind == Owner::data || o.kind == Owner::scale)) {
    return "\x1b[" + std::string(o.kind == Owner::scale ? "1;4;" : "") + "38;5;" + std::to_string(row_colour(o.row)) + "m" +
           cell + "\x1b[0m";
  }
  return color ? "\x1b[2m" + cell + "\x1b[0m" : cell;
}

}  // namespace

std::string cell_label(const LayoutMap& map, const Owner& o) {
  switch (o.kind) {
    case Owner::data: return padded(o.row, digits(map.rows - 1)) + padded(o.col, digits(map.k - 1));
    case Owner::scale:
      return "S " + padded(o.row, digits(map.rows - 1)) + "." + padded(o.col, digits(std::max<size_t>(map.k / kBlock, 1) - 1));
    case Owner::mixed: return "**";
    case Owner::pad: return "··";
  }
  return "?";
}

std::vector<std::string> layout_legend(const LayoutMap& map, const std::string& origin, size_t width_bytes) {
  const TileParams& p = map.params;
  const bool lhs = map.side == Side::lhs;
  std::vector<std::string> out;
  out.push_back(std::string(lhs ? "LHS" : "RHS") + " packer " + map.packer + "   (" + origin + ")");
  out.push_back(std::string("source ") + type_name(map.src_type) + fmt(lhs ? " [m=%zu, k=%zu]" : " [n=%zu, k=%zu]", map.rows, map.k) +
                fmt("   mr=%zu nr=%zu kr=%zu sr=%zu", p.mr, p.nr, p.kr, p.sr) +
                fmt("   packed %zu bytes in %zu panel(s) of %zu rows", map.packed_bytes, map.panel_offsets.size(),
                    map.panel_rows));
  const size_t shown = std::min<size_t>(map.panel_offsets.size(), 6);
  for (size_t i = 0; i < shown; ++i) {
    const size_t begin = map.panel_offsets[i];
    const size_t end = i + 1 < map.panel_offsets.size() ? map.panel_offsets[i + 1] : map.packed_bytes;
    std::string line = fmt("panel %zu  rows %zu..%zu  @%zu:", i, i * map.panel_rows,
                           std::min(map.rows, (i + 1) * map.panel_rows) - 1, begin);
    // Per kind (in order of first appearance): one range, or its extent and number of ranges.
    const auto regs = regions(map, begin, end);
    for (Owner::Kind kind : {Owner::data, Owner::scale, Owner::mixed, Owner::pad}) {
      size_t count = 0, bytes = 0, first = 0, last = 0;
      for (const Region& r : regs) {
        if (r.kind != kind) continue;
        if (count++ == 0) first = r.begin;
        last = r.end;
        bytes += r.end - r.begin;
      }
      if (count == 0) continue;
      line += std::string("  ") + kind_name(kind) + fmt(" %zu B in [%zu, %zu)", bytes, first, last);
      if (count > 1) line += fmt(" (%zu pieces)", count);
    }
    out.push_back(line);
  }
  if (shown < map.panel_offsets.size()) out.push_back(fmt("... %zu more panels", map.panel_offsets.size() - shown));
  out.push_back("cells: rrcc = element (row rr, column cc); S rr.bb = scale of row rr, 32-block bb; "
                "·· = padding or constant (no probe changed it); ** = derived from several elements");
  out.push_back(fmt("positions found by running the packer %zu times on marked inputs; %zu bytes per line",
                    map.packer_runs, width_bytes));
  return out;
}

std::string render_text(const LayoutMap& map, const std::string& origin, size_t width_bytes, bool color) {
  std::string out;
  for (const std::string& l : layout_legend(map, origin, width_bytes)) out += l + "\n";
  const size_t unit = unit_nibbles(map);
  const size_t slot = digits(map.rows - 1) + digits(map.k - 1) + 1;  // label + one space
  const size_t line_nibs = 2 * width_bytes;
  const std::vector<Cell> all = cells(map);
  const size_t off_width = std::to_string(map.packed_bytes).size();
  size_t ci = 0;
  for (size_t panel = 0; panel < map.panel_offsets.size(); ++panel) {
    const size_t pbegin = 2 * map.panel_offsets[panel];
    const size_t pend = panel + 1 < map.panel_offsets.size() ? 2 * map.panel_offsets[panel + 1] : map.nibbles.size();
    out += fmt("\n── panel %zu: rows %zu..%zu ──\n", panel, panel * map.panel_rows,
               std::min(map.rows, (panel + 1) * map.panel_rows) - 1);
    Owner::Kind last_kind = Owner::pad;
    for (size_t line = pbegin; line < pend; line += line_nibs) {
      const size_t line_end = std::min(line + line_nibs, pend);
      const Owner::Kind kind = map.nibbles[line].kind;
      if (kind != last_kind && kind != Owner::pad) {
        out += std::string("  ") + kind_name(kind) + ":\n";
        last_kind = kind;
      }
      const std::string off = std::to_string(line / 2);
      std::string text = std::string(off_width - off.size(), ' ') + off + " │ ";
      while (ci < all.size() && all[ci].nib_end <= line) ++ci;
      for (size_t c = ci; c < all.size() && all[c].nib_begin < line_end; ++c) {
        text += draw_cell(map, all[c], std::min(all[c].nib_end, line_end) - std::max(all[c].nib_begin, line), unit, slot, color) + " ";
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
  }
  return out;
}

}  // namespace qmm::cli
