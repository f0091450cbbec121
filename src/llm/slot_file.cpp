#include "llm/slot_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "gguf/atomic_file.h"

namespace qmm::llm {
namespace {

constexpr char kMagic[8] = {'Q', 'M', 'M', 'S', 'L', 'O', 'T', '\0'};
constexpr uint32_t kVersion = 1;

// The header, little-endian as written by the machines qmm runs on (x86-64, AArch64).
struct Header {
  char magic[8];
  uint32_t version;
  uint8_t type_k, type_v, pad[2];
  uint64_t fingerprint;
  uint64_t n_tokens;
};
static_assert(sizeof(Header) == 32);

uint64_t mix(uint64_t h, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  fail(Status::invalid_argument, "slot file '" + path + "': " + why);
}

}  // namespace

uint64_t model_fingerprint(const Model& m, const State& s) {
  const Config& c = m.config();
  uint64_t h = 0xcbf29ce484222325ull;
  h = mix(h, c.arch.data(), c.arch.size());
  for (size_t v : {c.n_embd, c.n_layer, c.n_head, c.n_head_kv, c.head_dim, c.n_ff, c.n_vocab, c.n_rot, c.n_swa}) {
    const uint64_t x = v;
    h = mix(h, &x, sizeof x);
  }
  const std::vector<float>& rope = m.rope_freqs(false, s.n_ctx());
  h = mix(h, rope.data(), rope.size() * sizeof(float));
  // Some weights: the embeddings of a few tokens (two models of one shape differ there).
  std::vector<float> row(c.n_embd);
  for (size_t t : {size_t{0}, size_t{1}, c.n_vocab / 2, c.n_vocab - 1}) {
    m.embed(static_cast<int32_t>(std::min(t, c.n_vocab - 1)), row.data());
    h = mix(h, row.data(), row.size() * sizeof(float));
  }
  return h;
}

size_t save_slot_file(const std::string& path, const Model& m, const State& s, size_t seq, std::span<const int32_t> tokens) {
  check_arg(s.kv_copyable(), "slots of a sliding-window model cannot be saved (their ring caches keep only the window)");
  check_arg(tokens.size() == s.pos(seq), "save: the slot's tokens and cache disagree");
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.type_k = static_cast<uint8_t>(s.kv_types().k);
  h.type_v = static_cast<uint8_t>(s.kv_types().v);
  h.fingerprint = model_fingerprint(m, s);
  h.n_tokens = tokens.size();
  std::vector<uint8_t> kv(s.kv_copy_bytes(tokens.size()));
  s.kv_read(seq, 0, tokens.size(), kv.data());
  AtomicFile f(path, WriteOptions{});
  f.write(&h, sizeof h);
  f.write(tokens.data(), tokens.size_bytes());
  f.write(kv.data(), kv.size());
  f.commit();
  return sizeof h + tokens.size_bytes() + kv.size();
}

std::vector<int32_t> load_slot_file(const std::string& path, const Model& m, State& s, size_t seq, size_t* bytes) {
  check_arg(s.kv_copyable(), "slots of a sliding-window model cannot be restored (their ring caches keep only the window)");
  // O_NONBLOCK: a FIFO put in its place must not hang the open (it is refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) bad(path, std::string("cannot open it: ") + std::strerror(errno));
  std::unique_ptr<FILE, int (*)(FILE*)> f(::fdopen(fd, "rb"), &std::fclose);
  if (!f) {
    ::close(fd);
    bad(path, std::string("cannot open it: ") + std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) bad(path, "not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  Header h{};
  if (size < sizeof h || std::fread(&h, sizeof h, 1, f.get()) != 1) bad(path, "too short to be a slot file");
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) bad(path, "not a qmm slot file");
  if (h.version != kVersion) bad(path, "version " + std::to_string(h.version) + ", this qmm reads version " + std::to_string(kVersion));
  const KvTypes kv = s.kv_types();
  if (h.type_k != static_cast<uint8_t>(kv.k) || h.type_v != static_cast<uint8_t>(kv.v)) {
    bad(path, "saved with another KV cache type (this server's is -ctk " + std::string(kv_type_name(kv.k)) + " -ctv " +
                  kv_type_name(kv.v) + ")");
  }
  if (h.fingerprint != model_fingerprint(m, s)) bad(path, "saved by another model (or another context size)");
  if (h.n_tokens == 0 || h.n_tokens >= s.n_ctx()) {
    bad(path, std::to_string(h.n_tokens) + " tokens, a slot holds 1.." + std::to_string(s.n_ctx() - 1));
  }
  const size_t n = static_cast<size_t>(h.n_tokens);
  const uint64_t want = sizeof h + n * sizeof(int32_t) + s.kv_copy_bytes(n);
  if (size != want) bad(path, std::to_string(size) + " bytes, its header says " + std::to_string(want));
  std::vector<int32_t> tokens(n);
  std::vector<uint8_t> data(s.kv_copy_bytes(n));
  if (std::fread(tokens.data(), sizeof(int32_t), n, f.get()) != n || std::fread(data.data(), 1, data.size(), f.get()) != data.size()) {
    bad(path, "truncated while being read");
  }
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<size_t>(t) >= m.config().n_vocab) bad(path, "token id " + std::to_string(t) + " is outside the vocabulary");
  }
  s.truncate(seq, 0);
  s.kv_write(seq, 0, n, data.data());
  if (bytes) *bytes = static_cast<size_t>(want);
  return tokens;
}

}  // namespace qmm::llm
