// Where every source element lands in a packed buffer, found by running the real packer
// (`qmm layout`). Nothing here knows a layout: the probe marks source elements, packs, and
// records which nibbles of the packed bytes changed. A packer change therefore changes the map.
//
// Probing: item i (an element, or a block scale) is "marked" in probe (bit j, polarity p) when
// bit j of i equals p; marked items get a value different from the baseline (two values per
// probe, so that every nibble of the item's packed form changes in at least one of them). A
// nibble that changed exactly in the probes where its item's bits say so belongs to that item;
// one that changed in both polarities of a bit depends on several items (e.g. a sum or a block
// scale derived from the data); one that never changed is padding. 4·log2(items) + 1 packer
// runs per pass: 49 for a 64x64 Q4_0 matrix.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ukernel.h"

namespace qmm::cli {

enum class Side { lhs, rhs };

// What one nibble of the packed buffer holds.
struct Owner {
  enum Kind : uint8_t { pad, data, scale, mixed };
  Kind kind = pad;
  uint32_t row = 0;  // source row (m for the LHS, n for the RHS)
  uint32_t col = 0;  // data: source column; scale: 32-block index
  bool operator==(const Owner&) const = default;
};

struct LayoutMap {
  Side side = Side::lhs;
  std::string packer;
  WeightType src_type = WeightType::f32;  // the packer's input type (F32 for every LHS packer)
  size_t rows = 0, k = 0;                 // source matrix [rows, k]
  TileParams params{};
  size_t panel_rows = 0;                  // mr (LHS) or nr (RHS)
  std::vector<size_t> panel_offsets;      // packer's packed_offset of each panel
  size_t packed_bytes = 0;
  std::vector<Owner> nibbles;             // 2 per byte: [2b] = low nibble, [2b + 1] = high nibble
  size_t packer_runs = 0;
};

LayoutMap probe_lhs(const LhsPacker& packer, size_t m, size_t k, const TileParams& p);
LayoutMap probe_rhs(const RhsPacker& packer, size_t n, size_t k, const TileParams& p);

// A run of nibbles with one owner: one element, one scale, or one padding unit.
struct Cell {
  size_t nib_begin, nib_end;  // [begin, end) in nibbles
  Owner owner;
};
// Maximal runs of equal owners; padding runs are cut into pieces of unit_nibbles(map).
std::vector<Cell> cells(const LayoutMap& map);
// Nibbles of the smallest data cell (1 for 4-bit data, 2 for int8, 4 for f16, 8 for f32).
size_t unit_nibbles(const LayoutMap& map);

// First nibble holding (row, col) data / the scale of (row, block); SIZE_MAX if none.
size_t find_data(const LayoutMap& map, size_t row, size_t col);
size_t find_scale(const LayoutMap& map, size_t row, size_t block);
// Number of nibbles holding (row, col) data / the scale of (row, block).
size_t count_data(const LayoutMap& map, size_t row, size_t col);
size_t count_scale(const LayoutMap& map, size_t row, size_t block);

// Contiguous ranges of one kind inside [begin, end) bytes, for legends: "data [0, 2048)".
struct Region {
  Owner::Kind kind;
  size_t begin, end;  // bytes (nibble-rounded outward)
};
std::vector<Region> regions(const LayoutMap& map, size_t begin, size_t end);
const char* kind_name(Owner::Kind k);

}  // namespace qmm::cli
