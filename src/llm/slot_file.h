// Slot files: one sequence's tokens and K/V cache on disk (`qmm serve`'s POST
// /slots/{id}?action=save|restore, llama-server's). A file is hostile input when read back:
// a versioned header names the model (a fingerprint of its shape, its RoPE for this context
// size and some of its weights) and the cache types; the file's size must be exactly what the
// header says, every token must be in the vocabulary, and anything else is a one-line
// Error(invalid_argument) before the sequence is touched (Generator::restore_slot empties the
// slot first, so a failed restore leaves it empty).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llm/model.h"

namespace qmm::llm {

// What identifies the cache a model computes in `s` (two files agree only for the same model).
uint64_t model_fingerprint(const Model& m, const State& s);

// Writes `tokens` (the positions `seq` holds) and their K/V to `path` (atomically); returns
// the bytes written.
size_t save_slot_file(const std::string& path, const Model& m, const State& s, size_t seq, std::span<const int32_t> tokens);

// Reads a slot file into `seq` (any cache it held is dropped); returns its tokens.
// `bytes` (optional): the bytes read.
std::vector<int32_t> load_slot_file(const std::string& path, const Model& m, State& s, size_t seq, size_t* bytes = nullptr);

}  // namespace qmm::llm
