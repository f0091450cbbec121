// libFuzzer target of model loading: the input is written to a memory file and loaded the way
// `qmm run` loads a model (Model::load: hyper-parameters, every tensor checked and packed;
// the tokenizer), then a prompt is encoded and decoded and two tokens run through the forward
// pass. Any input must load or throw qmm::Error — no crash, no sanitizer report, no huge
// allocation (run with -rss_limit_mb / -malloc_limit_mb).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "llm/model.h"
#include "text/tokenizer.h"

namespace {

// The input as a file the loader opens by path (/proc/self/fd/N of a memfd).
std::string as_file(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("fuzz_model", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) __builtin_trap();
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qmm::llm;
  static qmm::Context ctx(1);
  const std::string path = as_file(data, size);
  try {
    const Model m = Model::load(path, {}, ctx.pool());
    const Tokenizer tok = Tokenizer::from_gguf(m.file());
    std::vector<int32_t> ids = tok.encode("Once upon a time, <s> \xe2\x96\x81x\xff", tok.add_bos());
    (void)tok.decode(ids);
    TextStream text(tok, true);
    for (int32_t id : ids) (void)text.push(id);
    (void)text.flush();
    std::erase_if(ids, [&](int32_t id) { return id < 0 || static_cast<size_t>(id) >= m.config().n_vocab; });
    if (ids.empty()) ids.push_back(0);
    ids.resize(std::min<size_t>(ids.size(), 2));
    State s(m, 4, 2, ctx);
    (void)forward(m, s, ids.data(), ids.size());
  } catch (const qmm::Error&) {
    // rejected with a message: fine
  }
  return 0;
}
