// The Generator's slots between requests: counters, and the save / restore / erase of
// `qmm serve`'s /slots (slot files: slot_file.h).
#include "core/error.h"
#include "llm/generate.h"
#include "llm/slot_file.h"

namespace qmm::llm {
namespace {

void check_idle(const Generator& g, int slot) {
  check_arg(slot >= 0 && static_cast<size_t>(slot) < g.options().n_slots, "slot " + std::to_string(slot) + " does not exist");
  if (g.busy(slot)) fail(Status::unsupported, "slot " + std::to_string(slot) + " is processing a request");
}

}  // namespace

GeneratorCounters Generator::counters() const {
  GeneratorCounters c;
  c.prompt_tokens = prompt_total_;
  c.cached_tokens = cached_total_;
  if (cache_) {
    c.cache_bytes = cache_->bytes();
    c.cache_budget = cache_->budget();
    c.cache_blocks = cache_->blocks();
  }
  return c;
}

size_t Generator::save_slot(int slot, const std::string& path) {
  check_idle(*this, slot);
  const Slot& s = slots_[static_cast<size_t>(slot)];
  check_arg(!s.cached.empty(), "slot " + std::to_string(slot) + " holds no tokens");
  return save_slot_file(path, model_, state_, static_cast<size_t>(slot), s.cached);
}

size_t Generator::restore_slot(int slot, const std::string& path) {
  check_idle(*this, slot);
  Slot& s = slots_[static_cast<size_t>(slot)];
  s.cached.clear();  // (load_slot_file leaves the slot empty when it fails)
  state_.truncate(static_cast<size_t>(slot), 0);
  size_t bytes = 0;
  s.cached = load_slot_file(path, model_, state_, static_cast<size_t>(slot), &bytes);
  return bytes;
}

size_t Generator::erase_slot(int slot) {
  check_idle(*this, slot);
  Slot& s = slots_[static_cast<size_t>(slot)];
  const size_t n = s.cached.size();
  s.cached.clear();
  state_.truncate(static_cast<size_t>(slot), 0);
  return n;
}

}  // namespace qmm::llm
