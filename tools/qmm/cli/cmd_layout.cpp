// qmm layout: draw where every source element lands in a packed buffer, for any packer of the
// kernel list, any shape and any SVL. The positions come from running the packer itself
// (layout_probe.h), the drawing from layout_text.cpp / layout_svg.cpp.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "args.h"
#include "core/blocks.h"
#include "core/cpu.h"
#include "kernels/kernel_list.h"
#include "qmm/layout/layout_probe.h"
#include "qmm/layout/layout_render.h"
#include "verbs.h"

namespace qmm::cli {
namespace {

constexpr size_t kMaxElements = size_t{1} << 22;  // probing cost grows as elements · log2(elements)

std::string packer_names(bool lhs) {
  std::string out;
  for (const PackerPreset& p : packer_presets()) {
    const char* name = lhs ? p.lhs->name : p.rhs->name;
    if (out.find(name) == std::string::npos) out += std::string(out.empty() ? "" : ", ") + name;
  }
  return out;
}

// The preset a --kernel or --packer names (for --packer: the first kernel using that packer).
const PackerPreset& find_preset(bool lhs, const std::string& kernel, const std::string& packer) {
  for (const PackerPreset& p : packer_presets()) {
    if (!kernel.empty() && kernel == p.kernel) return p;
    if (kernel.empty() && packer == (lhs ? p.lhs->name : p.rhs->name)) return p;
  }
  if (!kernel.empty()) throw UsageError("unknown kernel '" + kernel + "' (qmm info --all lists them)");
  for (const PackerPreset& p : packer_presets()) {
    if (packer == (lhs ? p.rhs->name : p.lhs->name)) {
      throw UsageError("'" + packer + "' is an " + (lhs ? "RHS" : "LHS") + " packer: use qmm layout " + (lhs ? "rhs" : "lhs"));
    }
  }
  throw UsageError("unknown " + std::string(lhs ? "LHS" : "RHS") + " packer '" + packer + "' (known: " + packer_names(lhs) + ")");
}

bool use_color() {
  const char* no = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) && (no == nullptr || *no == '\0');
}

}  // namespace

int cmd_layout(int argc, char** argv) {
  std::string side, kernel, packer, format, output;
  size_t m = 0, n = 0, k = 0, svl = 0, mr = 0, nr = 0, kr = 0, sr = 0, width = 0;
  Args args("layout",
            "Draw where every element of a matrix lands in the buffer a packer writes, found by running the packer "
            "on marked inputs. Cells: rrcc = source row rr, column cc; S rr.bb = scale of row rr, block bb.",
            argc - 1, argv + 1);
  args.positional("lhs|rhs", &side, "which operand: lhs (F32 activations [m, k]) or rhs (weights [n, k])")
      .str("--kernel", &kernel, "NAME", "the packer and parameters of this kernel (any architecture's SME2 too)")
      .str("--packer", &packer, "NAME", "this packer, with the parameters of the first kernel using it")
      .size("-m", &m, "LHS rows")
      .size("-n", &n, "RHS rows (output columns)")
      .size("-k", &k, "columns (the reduction dimension)")
      .size("--svl", &svl, "SME streaming vector length in bits, a power of two in 128..2048 (default: this CPU's, else 512)")
      .size("--mr", &mr, "override mr")
      .size("--nr", &nr, "override nr")
      .size("--kr", &kr, "override kr (a power of two <= 32)")
      .size("--sr", &sr, "override sr (a power of two <= 32)")
      .size("--width", &width, "bytes per drawn line of the packed buffer (default: 16 cells text, 64 cells SVG)")
      .choice("--format", &format, {"text", "svg"}, "output format (default: svg when -o ends in .svg, else text)")
      .str("-o,--output", &output, "FILE", "write to FILE instead of stdout");
  args.parse();

  if (side != "lhs" && side != "rhs") throw UsageError("the operand must be 'lhs' or 'rhs', got '" + side + "'");
  const bool lhs = side == "lhs";
  if (kernel.empty() == packer.empty()) throw UsageError("give exactly one of --kernel NAME or --packer NAME");
  const size_t rows = lhs ? m : n;
  if (rows == 0) throw UsageError(lhs ? "missing -m (LHS rows)" : "missing -n (RHS rows)");
  if (k == 0) throw UsageError("missing -k");
  if (lhs ? n != 0 : m != 0) throw UsageError(lhs ? "-n is for rhs layouts" : "-m is for lhs layouts");
  if (svl != 0 && (svl < 128 || svl > 2048 || (svl & (svl - 1)) != 0)) {
    throw UsageError("--svl must be a power of two in 128..2048 bits, got " + std::to_string(svl));
  }
  for (size_t* v : {&kr, &sr}) {
    if (*v != 0 && (*v > 32 || (*v & (*v - 1)) != 0)) throw UsageError("--kr/--sr must be a power of two <= 32");
  }
  if (rows > kMaxElements / k) throw UsageError("too large to draw: at most 4M elements");

  const PackerPreset& preset = find_preset(lhs, kernel, packer);
  if (is_channel_type(preset.rhs->src_type)) {
    throw UsageError("qmm layout does not draw the per-channel packers yet (kernels/ref/layouts_c.h documents them)");
  }
  if (is_block_type(preset.rhs->src_type) && k % kBlock != 0) {
    throw UsageError("k must be a multiple of 32 for " + std::string(lhs ? preset.lhs->name : preset.rhs->name) + ", got " +
                     std::to_string(k));
  }
  const size_t cpu_svl = cpu_info().svl_bytes * 8;
  const size_t svl_bits = svl ? svl : cpu_svl ? cpu_svl : 512;
  TileParams p = preset.params(svl_bits / 8);
  std::string origin = std::string("params of ") + preset.kernel;
  if (preset.isa == Isa::sme2) origin += " at SVL " + std::to_string(svl_bits);
  if (mr || nr || kr || sr) origin += ", overridden";
  if (std::max(mr, nr) > 4096) throw UsageError("--mr/--nr must be at most 4096");
  if (mr) p.mr = mr;
  if (nr) p.nr = nr;
  if (kr) p.kr = kr;
  if (sr) p.sr = sr;

  const LayoutMap map = lhs ? probe_lhs(*preset.lhs, m, k, p) : probe_rhs(*preset.rhs, n, k, p);
  if (format.empty()) format = output.size() > 4 && output.substr(output.size() - 4) == ".svg" ? "svg" : "text";
  const size_t unit = unit_nibbles(map);  // nibbles per smallest cell
  const size_t line_bytes = width ? width : std::max<size_t>((format == "svg" ? 64 : 16) * unit / 2, 1);
  const std::string drawn = format == "svg" ? render_svg(map, origin, line_bytes)
                                            : render_text(map, origin, line_bytes, output.empty() && use_color());
  if (output.empty()) {
    std::fwrite(drawn.data(), 1, drawn.size(), stdout);
    return 0;
  }
  std::ofstream f(output, std::ios::binary);
  f << drawn;
  f.close();
  if (!f) throw std::runtime_error("cannot write " + output);
  return 0;
}

}  // namespace qmm::cli
