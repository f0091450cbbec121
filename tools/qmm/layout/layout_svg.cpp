// SVG rendering of a probed layout: the source matrix on the left (one colour per row), the
// packed buffer on the right as lines of cells in the same colours, with panel, block and
// scale boundaries drawn. Kept small: CSS classes per row, one text element per cell.
#include <algorithm>
#include <cstdio>
#include <string>

#include "core/blocks.h"
#include "layout_render.h"

namespace qmm::cli {
namespace {

constexpr int kCellH = 15;       // cell height, px
constexpr int kBaseline = 11;    // text baseline below a cell's top
constexpr int kCharW = 6;        // monospace advance at 10px (DejaVu Sans Mono: 6.02)
constexpr int kMargin = 20;
constexpr int kGap = 60;         // between the source and the packed buffer
constexpr int kOffsetW = 46;     // byte offsets left of the packed lines
constexpr int kNoteW = 110;      // annotations right of the packed lines

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

std::string text(double x, double y, const std::string& s, const char* cls = nullptr) {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + (cls ? std::string(" class=\"") + cls + "\"" : "") + ">" +
         esc(s) + "</text>\n";
}

std::string rect(double x, double y, double w, double h, const std::string& cls) {
  return "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) + "\" class=\"" + cls +
         "\"/>\n";
}

std::string line(double x1, double y1, double x2, double y2, const char* cls) {
  return "<path d=\"M" + num(x1) + " " + num(y1) + "L" + num(x2) + " " + num(y2) + "\" class=\"" + cls + "\"/>\n";
}

std::string cell_class(const Owner& o) {
  switch (o.kind) {
    case Owner::data: return std::string("r").append(std::to_string(o.row));
    case Owner::scale: return std::string("s").append(std::to_string(o.row));
    case Owner::mixed: return "x";
    case Owner::pad: return "p";
  }
  return "p";
}

// Hue per row by the golden angle: neighbouring rows get clearly different colours.
int row_hue(size_t row) { return static_cast<int>(static_cast<double>(row) * 137.508) % 360; }

std::string style(size_t rows) {
  std::string css =
      "text{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:10px;text-anchor:middle;fill:#111}\n"
      ".t{font-size:17px;font-weight:bold;text-anchor:start;font-family:'DejaVu Sans',Helvetica,Arial,sans-serif}\n"
      ".l{font-size:12px;text-anchor:start;font-family:'DejaVu Sans',Helvetica,Arial,sans-serif}\n"
      ".h{font-size:13px;font-weight:bold;text-anchor:start;font-family:'DejaVu Sans',Helvetica,Arial,sans-serif}\n"
      ".o{font-size:9px;text-anchor:end;fill:#555}\n.a{font-size:11px;text-anchor:start;fill:#333}\n"
      ".b{font-weight:bold}\nrect{stroke:#fff;stroke-width:1}\n.p{fill:#eee}\n.x{fill:#999}\n"
      ".g1{stroke:#000;stroke-width:2.5;fill:none}\n.g2{stroke:#444;stroke-width:1.2;fill:none}\n"
      ".g3{stroke:#000;stroke-width:1;stroke-dasharray:4 3;fill:none}\n";
  for (size_t r = 0; r < rows; ++r) {
    const int h = row_hue(r);
    css += ".r" + std::to_string(r) + "{fill:hsl(" + std::to_string(h) + ",80%,84%)}.s" + std::to_string(r) + "{fill:hsl(" +
           std::to_string(h) + ",70%,62%)}\n";
  }
  return css;
}

// The packed buffer as drawn: lines of width_bytes per panel, each panel after a caption line.
struct Line {
  size_t begin, end;  // nibbles
  int y;              // relative to the packed block
  bool panel_start;
};
struct Plan {
  std::vector<Line> lines;
  std::vector<std::pair<size_t, int>> captions;  // panel, y
  int height = 0;
};

Plan plan_lines(const LayoutMap& map, size_t line_nibs) {
  Plan plan;
  int y = 24;
  for (size_t p = 0; p < map.panel_offsets.size(); ++p) {
    const size_t pb = 2 * map.panel_offsets[p];
    const size_t pe = p + 1 < map.panel_offsets.size() ? 2 * map.panel_offsets[p + 1] : map.nibbles.size();
    plan.captions.push_back({p, y});
    y += kCellH + 4;
    for (size_t l = pb; l < pe; l += line_nibs) {
      plan.lines.push_back({l, std::min(l + line_nibs, pe), y, l == pb});
      y += kCellH;
    }
    y += 8;
  }
  plan.height = y;
  return plan;
}

// Source matrix at (x, y): a row of cells per source row, labelled rrcc; block and panel lines.
std::string draw_source(const LayoutMap& map, int cw, int x, int y) {
  std::string s = text(x, y + 14,
                       std::string("source: ") + type_name(map.src_type) + " [" + std::to_string(map.rows) + ", " +
                           std::to_string(map.k) + "], row-major, one colour per row",
                       "h");
  const int gx = x + 34, gy = y + 40;  // grid origin
  s += "<g transform=\"translate(" + std::to_string(gx) + "," + std::to_string(gy - 4) + ")\">";
  for (size_t c = 0; c < map.k; ++c) {
    s += "<text x=\"" + std::to_string(c * cw + cw / 2) + "\" class=\"o\" style=\"text-anchor:middle\">" + std::to_string(c) + "</text>";
  }
  s += "</g>\n";
  for (size_t r = 0; r < map.rows; ++r) {
    const int yy = gy + static_cast<int>(r) * kCellH;
    // Group origin on the text baseline, so the labels need no y.
    s += "<g transform=\"translate(" + std::to_string(gx) + "," + std::to_string(yy + kBaseline) + ")\">";
    s += rect(0, -kBaseline, static_cast<double>(map.k) * cw, kCellH, std::string("r").append(std::to_string(r)));
    s += "<text x=\"-6\" class=\"o\">" + std::to_string(r) + "</text>";
    for (size_t c = 0; c < map.k; ++c) {
      s += "<text x=\"" + std::to_string(c * cw + cw / 2) + "\">" +
           cell_label(map, {Owner::data, static_cast<uint32_t>(r), static_cast<uint32_t>(c)}) + "</text>";
    }
    s += "</g>\n";
  }
  const double w = static_cast<double>(map.k) * cw, h = static_cast<double>(map.rows) * kCellH;
  for (size_t b = 1; map.k % kBlock == 0 && b < map.k / kBlock; ++b) {
    s += line(gx + static_cast<double>(b * kBlock) * cw, gy, gx + static_cast<double>(b * kBlock) * cw, gy + h, "g2");
  }
  for (size_t r = 0; r <= map.rows; r += map.panel_rows) {
    s += line(gx, gy + static_cast<double>(r) * kCellH, gx + w, gy + static_cast<double>(r) * kCellH, "g1");
  }
  if (map.rows % map.panel_rows) s += line(gx, gy + h, gx + w, gy + h, "g1");
  return s + line(gx, gy, gx, gy + h, "g1") + line(gx + w, gy, gx + w, gy + h, "g1");
}

// The cells of one packed line, in a group at (0, baseline): one rect per run of equal class,
// one label per element or scale. `ci` is the first cell that may touch the line.
std::string draw_cells(const LayoutMap& map, const std::vector<Cell>& all, size_t ci, const Line& ln, size_t unit, int cw) {
  std::string s, labels, run_cls;
  double run_x = -1, run_end = 0;
  for (size_t c = ci; c < all.size() && all[c].nib_begin < ln.end; ++c) {
    const size_t b = std::max(all[c].nib_begin, ln.begin), e = std::min(all[c].nib_end, ln.end);
    const double x0 = static_cast<double>(b - ln.begin) / static_cast<double>(unit) * cw;
    const double x1 = static_cast<double>(e - ln.begin) / static_cast<double>(unit) * cw;
    const std::string cls = cell_class(all[c].owner);
    if (cls != run_cls) {
      if (run_x >= 0) s += rect(run_x, -kBaseline, run_end - run_x, kCellH, run_cls);
      run_x = x0;
      run_cls = cls;
    }
    run_end = x1;
    const Owner& o = all[c].owner;
    if (o.kind == Owner::data || o.kind == Owner::scale) {
      std::string label = cell_label(map, o);
      if (static_cast<double>(label.size() * kCharW) > x1 - x0) label.erase(std::remove(label.begin(), label.end(), ' '), label.end());
      labels += "<text x=\"" + num((x0 + x1) / 2) + "\"" + (o.kind == Owner::scale ? " class=\"b\"" : "") + ">" + label + "</text>";
    }
  }
  if (run_x >= 0) s += rect(run_x, -kBaseline, run_end - run_x, kCellH, run_cls);
  return s + labels;
}

// Packed buffer at (x, y), in memory order, cells in the colour of their source row; notes
// on the right where scales or a new k-block start.
std::string draw_packed(const LayoutMap& map, const Plan& plan, size_t width_bytes, size_t unit, size_t slots, int cw, int x,
                        int y) {
  std::string s = text(x, y + 14,
                       "packed buffer: " + std::to_string(map.packed_bytes) + " bytes, " + std::to_string(width_bytes) +
                           " per line, memory order left to right (byte offsets left)",
                       "h");
  const int bx = x + kOffsetW;  // x of the first cell
  const double line_w = static_cast<double>(slots) * cw;
  for (const auto& [p, cy] : plan.captions) {
    s += text(x, y + cy + 12,
              "panel " + std::to_string(p) + ": rows " + std::to_string(p * map.panel_rows) + "–" +
                  std::to_string(std::min(map.rows, (p + 1) * map.panel_rows) - 1) + " @ byte " +
                  std::to_string(map.panel_offsets[p]),
              "a\" style=\"font-weight:bold");
  }
  const std::vector<Cell> all = cells(map);
  size_t ci = 0;
  Owner::Kind last_kind = Owner::pad;
  int64_t last_block = -1;
  for (const Line& ln : plan.lines) {
    const int yy = y + ln.y;
    if (ln.panel_start) {
      last_kind = Owner::pad;
      last_block = -1;
    }
    // Notes where a region or a k-block starts (dashed line above unless a panel starts).
    const Owner& first = map.nibbles[ln.begin];
    std::string note;
    if (first.kind == Owner::scale && last_kind != Owner::scale) note = "scales";
    if (first.kind == Owner::data && map.k % kBlock == 0 && static_cast<int64_t>(first.col / kBlock) != last_block) {
      note = "k-block " + std::to_string(first.col / kBlock);
      last_block = first.col / kBlock;
    }
    if (first.kind != Owner::pad) last_kind = first.kind;
    if (!note.empty()) {
      if (!ln.panel_start) s += line(bx, yy, bx + line_w, yy, "g3");
      s += text(bx + line_w + 8, yy + 11, note, "a");
    }
    while (ci < all.size() && all[ci].nib_end <= ln.begin) ++ci;
    s += "<g transform=\"translate(" + std::to_string(bx) + "," + std::to_string(yy + kBaseline) + ")\">";
    s += "<text x=\"-6\" class=\"o\">" + std::to_string(ln.begin / 2) + "</text>";
    s += draw_cells(map, all, ci, ln, unit, cw) + "</g>\n";
  }
  for (const auto& [p, cy] : plan.captions) s += line(bx, y + cy + kCellH + 4, bx + line_w, y + cy + kCellH + 4, "g1");
  return s;
}

}  // namespace

std::string render_svg(const LayoutMap& map, const std::string& origin, size_t width_bytes) {
  const size_t unit = unit_nibbles(map);
  const int label_chars = static_cast<int>(cell_label(map, {Owner::data, 0, 0}).size());
  const int cw = label_chars * kCharW + 6;  // cell width, even: centres are whole pixels
  const size_t slots = std::max<size_t>(2 * width_bytes / unit, 1);
  const std::vector<std::string> legend = layout_legend(map, origin, width_bytes);
  const Plan plan = plan_lines(map, 2 * width_bytes);

  // Source and packed blocks side by side, or stacked when that keeps the picture closer to square.
  const int src_w = 34 + static_cast<int>(map.k) * cw, src_h = 40 + static_cast<int>(map.rows) * kCellH;
  const int pk_w = kOffsetW + static_cast<int>(slots) * cw + kNoteW, pk_h = plan.height;
  const int head = kMargin + 40 + static_cast<int>(legend.size()) * 17;
  const int side_w = src_w + kGap + pk_w, side_h = std::max(src_h, pk_h);
  const int stack_w = std::max(src_w, pk_w), stack_h = src_h + 30 + pk_h;
  const bool stacked = std::max(stack_w, stack_h) < std::max(side_w, side_h);
  const int width = 2 * kMargin + std::max(stacked ? stack_w : side_w, 900);
  const int height = head + (stacked ? stack_h : side_h) + kMargin;

  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
       "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) + "\">\n";
  s += "<style>\n" + style(map.rows) + "</style>\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
       "\" style=\"fill:#fff;stroke:none\"/>\n";
  s += text(kMargin, kMargin + 16,
            std::string(map.side == Side::lhs ? "LHS " : "RHS ") + type_name(map.src_type) + " [" +
                std::to_string(map.rows) + " × " + std::to_string(map.k) + "]  →  " + map.packer,
            "t");
  for (size_t i = 0; i < legend.size(); ++i) s += text(kMargin, kMargin + 40 + 17 * static_cast<double>(i), legend[i], "l");
  s += draw_source(map, cw, kMargin, head);
  s += draw_packed(map, plan, width_bytes, unit, slots, cw, stacked ? kMargin : kMargin + src_w + kGap,
                   stacked ? head + src_h + 30 : head);
  return s + "</svg>\n";
}

}  // namespace qmm::cli
