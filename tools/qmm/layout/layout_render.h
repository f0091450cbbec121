// Renderers of a probed layout (layout_probe.h): a terminal grid and an SVG picture.
// Both draw the packed buffer as lines of `width_bytes` bytes, one cell per source element
// (labelled rrcc = row rr, column cc) or block scale (S rr.bb = row rr, block bb).
#pragma once
#include <string>
#include <vector>

#include "layout_probe.h"

namespace qmm::cli {

// `origin` says where the parameters came from, e.g. "params of <kernel> at SVL 512".
std::vector<std::string> layout_legend(const LayoutMap& map, const std::string& origin, size_t width_bytes);
std::string cell_label(const LayoutMap& map, const Owner& o);

std::string render_text(const LayoutMap& map, const std::string& origin, size_t width_bytes, bool color);
std::string render_svg(const LayoutMap& map, const std::string& origin, size_t width_bytes);

}  // namespace qmm::cli
