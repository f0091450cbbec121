#include "layout_probe.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>

#include "core/blocks.h"
#include "core/error.h"

namespace qmm::cli {
namespace {

constexpr int64_t kUnchanged = -1;
constexpr int64_t kMixed = -2;

// Fills `out` (zeroed, packed_bytes long) with the packing of the source in which the items
// with marked[i] != 0 carry mark value number `variant` (0 or 1) and the others the baseline.
using PackFn = std::function<void(const std::vector<uint8_t>& marked, int variant, uint8_t* out)>;

// Per nibble: the item it holds, kUnchanged or kMixed (see the header).
std::vector<int64_t> attribute(size_t items, size_t bytes, const PackFn& pack, size_t* runs) {
  std::vector<uint8_t> marked(items, 0), base(bytes, 0), out(bytes);
  pack(marked, 0, base.data());
  ++*runs;
  const int bits = items <= 1 ? 1 : static_cast<int>(std::bit_width(items - 1));
  std::vector<uint64_t> ones(2 * bytes, 0), zeros(2 * bytes, 0);
  for (int j = 0; j < bits; ++j) {
    for (int pol = 0; pol < 2; ++pol) {
      for (size_t i = 0; i < items; ++i) marked[i] = ((i >> j) & 1) == static_cast<size_t>(pol);
      std::vector<uint64_t>& seen = pol ? ones : zeros;
      for (int variant = 0; variant < 2; ++variant) {
        std::fill(out.begin(), out.end(), 0);
        pack(marked, variant, out.data());
        ++*runs;
        for (size_t b = 0; b < bytes; ++b) {
          const unsigned d = out[b] ^ base[b];
          if (d & 0x0f) seen[2 * b] |= uint64_t{1} << j;
          if (d & 0xf0) seen[2 * b + 1] |= uint64_t{1} << j;
        }
      }
    }
  }
  const uint64_t all = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  std::vector<int64_t> item(2 * bytes);
  for (size_t nib = 0; nib < 2 * bytes; ++nib) {
    const uint64_t o = ones[nib], z = zeros[nib];
    if ((o | z) == 0) {
      item[nib] = kUnchanged;
    } else if ((o & z) != 0 || (o | z) != all || o >= items) {
      item[nib] = kMixed;
    } else {
      item[nib] = static_cast<int64_t>(o);
    }
  }
  return item;
}

// Data items are row-major elements (row·k + col), scale items row-major blocks (row·blocks + b).
void combine(LayoutMap& map, const std::vector<int64_t>& data, const std::vector<int64_t>& scale) {
  const size_t blocks = map.k / kBlock;
  map.nibbles.assign(2 * map.packed_bytes, Owner{});
  for (size_t nib = 0; nib < map.nibbles.size(); ++nib) {
    Owner& o = map.nibbles[nib];
    if (data[nib] >= 0) {
      o = {Owner::data, static_cast<uint32_t>(data[nib] / map.k), static_cast<uint32_t>(data[nib] % map.k)};
    } else if (!scale.empty() && scale[nib] >= 0) {
      o = {Owner::scale, static_cast<uint32_t>(scale[nib] / blocks), static_cast<uint32_t>(scale[nib] % blocks)};
    } else if (data[nib] == kMixed || (!scale.empty() && scale[nib] == kMixed)) {
      o = {Owner::mixed, 0, 0};
    }
  }
}

template <class Packer>
void fill_panels(LayoutMap& map, const Packer& packer) {
  const TileParams& p = map.params;
  for (size_t r = 0; r < map.rows; r += map.panel_rows) {
    map.panel_offsets.push_back(packer.packed_offset(r, map.k, map.panel_rows, p.kr, p.sr));
  }
}

// Mark values: each differs from the baseline in every nibble (of its own encoding, and
// together with the other variant in the encodings packers convert it to).
constexpr uint32_t kF32Marks[2] = {0x3FEDCBA9u, 0xC1234567u};  // ~1.858, ~-10.2; baseline 0
constexpr float kAmaxMarks[2] = {100.0f, 0.37f};                // block amax; baseline 1
constexpr uint16_t kF16Marks[2] = {0x3DEB, 0xC215};             // baseline 0
constexpr uint16_t kScaleBase = 0x3C00;                         // d = 1.0
constexpr uint16_t kScaleMarks[2] = {0x2B17, 0x4D29};
constexpr uint8_t kNibbleMarks[2] = {0x3, 0xC};                 // baseline 8 (value 0)
constexpr int8_t kInt8Marks[2] = {0x5B, -0x4A};                 // baseline 0

float f32_mark(int v) { return std::bit_cast<float>(kF32Marks[v]); }

}  // namespace

LayoutMap probe_lhs(const LhsPacker& packer, size_t m, size_t k, const TileParams& p) {
  LayoutMap map;
  map.side = Side::lhs;
  map.packer = packer.name;
  map.rows = m;
  map.k = k;
  map.params = p;
  map.panel_rows = p.mr;
  map.packed_bytes = packer.packed_size(m, k, p.mr, p.kr, p.sr);
  fill_panels(map, packer);
  std::vector<float> x(m * k);
  const size_t stride = k * sizeof(float);
  const auto data = attribute(m * k, map.packed_bytes, [&](const std::vector<uint8_t>& marked, int v, uint8_t* out) {
    for (size_t i = 0; i < m * k; ++i) x[i] = marked[i] ? f32_mark(v) : 0.0f;
    packer.run(m, k, p.mr, p.kr, p.sr, x.data(), stride, out);
  }, &map.packer_runs);
  // Scales: every 32-block is {a, 0, ..., 0}; a marked block changes a (and so its scale) but
  // not its quantized data. Only meaningful when k is a multiple of 32.
  std::vector<int64_t> scale;
  if (k % kBlock == 0) {
    const size_t blocks = k / kBlock;
    scale = attribute(m * blocks, map.packed_bytes, [&](const std::vector<uint8_t>& marked, int v, uint8_t* out) {
      std::fill(x.begin(), x.end(), 0.0f);
      for (size_t i = 0; i < m * blocks; ++i) x[i * kBlock] = marked[i] ? kAmaxMarks[v] : 1.0f;
      packer.run(m, k, p.mr, p.kr, p.sr, x.data(), stride, out);
    }, &map.packer_runs);
  }
  combine(map, data, scale);
  return map;
}

LayoutMap probe_rhs(const RhsPacker& packer, size_t n, size_t k, const TileParams& p) {
  LayoutMap map;
  map.side = Side::rhs;
  map.packer = packer.name;
  map.src_type = packer.src_type;
  map.rows = n;
  map.k = k;
  map.params = p;
  map.panel_rows = p.nr;
  map.packed_bytes = packer.packed_size(n, k, p.nr, p.kr, p.sr);
  fill_panels(map, packer);
  const size_t blocks = k / kBlock;
  std::vector<uint8_t> src(n * row_bytes(packer.src_type, k));
  auto run = [&](uint8_t* out) { packer.run(n, k, p.nr, p.kr, p.sr, src.data(), out); };
  std::vector<int64_t> data, scale;
  size_t* runs = &map.packer_runs;
  switch (packer.src_type) {
    case WeightType::q4_0: {
      auto* q = reinterpret_cast<BlockQ4_0*>(src.data());
      data = attribute(n * k, map.packed_bytes, [&](const std::vector<uint8_t>& marked, int v, uint8_t* out) {
        for (size_t i = 0; i < n * k; ++i) {
          BlockQ4_0& blk = q[i / kBlock];
          const size_t j = i % kBlock;
          const unsigned nib = marked[i] ? kNibbleMarks[v] : 8u;
          uint8_t& byte = blk.qs[j % 16];
          byte = static_cast<uint8_t>(j < 16 ? (byte & 0xf0) | nib : (byte & 0x0f) | nib << 4);
          blk.d = kScaleBase;
        }
        run(out);
      }, runs);
      scale = attribute(n * blocks, map.packed_bytes, [&](const std::vector<uint8_t>& marked, int v, uint8_t* out) {
        for (size_t i = 0; i < n * blocks; ++i) {
          std::memset(q[i].qs, 0x88, sizeof q[i].qs);
          q[i].d = marked[i] ? kScaleMarks[v] : kScaleBase;
        }
        run(out);
      }, runs);
      break;
    }
    case WeightType::q8_0: {
      auto* q = reinterpret_cast<BlockQ8_0*>(src.data());
      data = attribute(n * k, map.packed_bytes, [&](const std::vector<uint8_t>& marked, int v, uint8_t* out) {
        for (size_t i = 0; i < n * k; ++i) {
          q[i / kBlock].qs[i % kBlock] = marked[i] ? kInt8Marks[v] : int8_t{0};
          q[i / kBlock].d = kScaleBase;
        }
        run(out);
      }, runs);
      scale = attribute(n * blocks, map.packed_bytes, [&](const std::vector<uint8_t>& marked, int v, uint8_t* out) {
        for (size_t i = 0; i < n * blocks; ++i) {
          std::memset(q[i].qs, 0, sizeof q[i].qs);
          q[i].d = marked[i] ? kScaleMarks[v] : kScaleBase;
        }
        run(out);
      }, runs);
      break;
    }
    case WeightType::f16: {
      auto* h = reinterpret_cast<uint16_t*>(src.data());
      data = attribute(n * k, map.packed_bytes, [&](const std::vector<uint8_t>& marked, int v, uint8_t* out) {
        for (size_t i = 0; i < n * k; ++i) h[i] = marked[i] ? kF16Marks[v] : uint16_t{0};
        run(out);
      }, runs);
      break;
    }
    case WeightType::f32: {
      auto* f = reinterpret_cast<float*>(src.data());
      data = attribute(n * k, map.packed_bytes, [&](const std::vector<uint8_t>& marked, int v, uint8_t* out) {
        for (size_t i = 0; i < n * k; ++i) f[i] = marked[i] ? f32_mark(v) : 0.0f;
        run(out);
      }, runs);
      break;
    }
    default:  // K-quants, IQ4_NL (kernels/ref/rhs_pack_nxk_kquants.h), qc8 / qc4 (kernels/ref/layouts_c.h)
      fail(Status::unsupported, std::string("qmm layout does not draw ") + type_name(packer.src_type) +
                                    " packers yet (their headers in src/kernels/ref document the layouts)");
  }
  combine(map, data, scale);
  return map;
}

size_t unit_nibbles(const LayoutMap& map) {
  size_t unit = 0;
  for (size_t nib = 0; nib < map.nibbles.size();) {
    size_t end = nib + 1;
    while (end < map.nibbles.size() && map.nibbles[end] == map.nibbles[nib]) ++end;
    if (map.nibbles[nib].kind == Owner::data && (unit == 0 || end - nib < unit)) unit = end - nib;
    nib = end;
  }
  return unit ? unit : 2;
}

std::vector<Cell> cells(const LayoutMap& map) {
  // First pass: maximal runs.
  std::vector<Cell> runs;
  for (size_t nib = 0; nib < map.nibbles.size();) {
    size_t end = nib + 1;
    while (end < map.nibbles.size() && map.nibbles[end] == map.nibbles[nib]) ++end;
    runs.push_back({nib, end, map.nibbles[nib]});
    nib = end;
  }
  const size_t unit = unit_nibbles(map);
  // Second pass: cut padding and mixed runs at unit-aligned nibbles so they draw as a grid.
  std::vector<Cell> out;
  for (const Cell& c : runs) {
    if (c.owner.kind == Owner::data || c.owner.kind == Owner::scale) {
      out.push_back(c);
      continue;
    }
    for (size_t b = c.nib_begin; b < c.nib_end;) {
      const size_t e = std::min(c.nib_end, (b / unit + 1) * unit);
      out.push_back({b, e, c.owner});
      b = e;
    }
  }
  return out;
}

namespace {
size_t find_owner(const LayoutMap& map, const Owner& o, size_t* count) {
  size_t first = SIZE_MAX;
  *count = 0;
  for (size_t nib = 0; nib < map.nibbles.size(); ++nib) {
    if (map.nibbles[nib] == o) {
      if (first == SIZE_MAX) first = nib;
      ++*count;
    }
  }
  return first;
}
Owner data_owner(size_t r, size_t c) { return {Owner::data, static_cast<uint32_t>(r), static_cast<uint32_t>(c)}; }
Owner scale_owner(size_t r, size_t b) { return {Owner::scale, static_cast<uint32_t>(r), static_cast<uint32_t>(b)}; }
}  // namespace

size_t find_data(const LayoutMap& map, size_t row, size_t col) {
  size_t n;
  return find_owner(map, data_owner(row, col), &n);
}
size_t find_scale(const LayoutMap& map, size_t row, size_t block) {
  size_t n;
  return find_owner(map, scale_owner(row, block), &n);
}
size_t count_data(const LayoutMap& map, size_t row, size_t col) {
  size_t n;
  find_owner(map, data_owner(row, col), &n);
  return n;
}
size_t count_scale(const LayoutMap& map, size_t row, size_t block) {
  size_t n;
  find_owner(map, scale_owner(row, block), &n);
  return n;
}

std::vector<Region> regions(const LayoutMap& map, size_t begin, size_t end) {
  std::vector<Region> out;
  for (size_t nib = 2 * begin; nib < 2 * end && nib < map.nibbles.size(); ++nib) {
    const Owner::Kind k = map.nibbles[nib].kind;
    if (!out.empty() && out.back().kind == k) {
      out.back().end = (nib + 2) / 2;
    } else {
      out.push_back({k, nib / 2, (nib + 2) / 2});
    }
  }
  return out;
}

const char* kind_name(Owner::Kind k) {
  switch (k) {
    case Owner::pad: return "padding";
    case Owner::data: return "data";
    case Owner::scale: return "scales";
    case Owner::mixed: return "derived";
  }
  return "?";
}

}  // namespace qmm::cli
