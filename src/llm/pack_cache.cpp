#include "llm/pack_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/weight_types.h"
#include "kernels/kernel_list.h"
#include "gguf/atomic_file.h"
#include "matmul/tune.h"

namespace qmm::llm {
namespace {

constexpr char kMagic[8] = {'Q', 'M', 'M', 'P', 'A', 'C', 'K', '1'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeader = 32, kEntry = 176, kNameBytes = 136, kPage = 4096;
constexpr size_t kMaxKey = size_t{64} << 10, kMaxEntries = size_t{1} << 20;

struct RawEntry {  // kEntry bytes on disk
  uint32_t kind, type;
  uint64_t n, k, offset, bytes;
  char name[kNameBytes];
};
static_assert(sizeof(RawEntry) == kEntry);

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

size_t round_page(size_t x) { return (x + kPage - 1) / kPage * kPage; }

}  // namespace

uint64_t fnv1a(const void* p, size_t n, uint64_t h) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

std::string default_pack_dir() {
  const std::string d = tune_cache_dir();
  return d.empty() ? d : d + "/packs";
}

PackId pack_id(const gguf::File& f, const std::string& convert_to, const KernelFilter& filter) {
  char real[PATH_MAX];
  const std::string path = ::realpath(f.path().c_str(), real) ? std::string(real) : f.path();
  std::string kernels;
  for (const TypeInfo& info : type_table()) {  // every type the kernels take
    if (!info.native) continue;
    kernels += std::string(type_name(info.type())) + ":" + select_kernels(info.type(), filter, cpu_info()).gemm->name + " ";
  }
  const std::span<const uint8_t> header = f.header_bytes();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(header.data(), header.size())));
  PackId id;
  id.key = "qmm pack cache " + std::to_string(kVersion) + "\ncpu " + tune_key() + "\ngguf " + path + "\nsize " +
           std::to_string(f.file_size()) + "\nmtime " + std::to_string(f.mtime_ns()) + "\nheader " + hex + "\nconvert " +
           (convert_to.empty() ? "none" : convert_to) + "\nkernels " + kernels + "\n";
  // The name leaves out the build and the GGUF's state: a new build or a changed GGUF replaces
  // the model's file instead of leaving a stale one beside it.
  const std::string config = path + "\n" + convert_to + "\n" + kernels;
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(config.data(), config.size())));
  id.file_name = std::string(hex) + ".qpk";
  return id;
}

PackFile::~PackFile() {
  if (base_) ::munmap(const_cast<uint8_t*>(base_), size_);
}

std::shared_ptr<const PackFile> PackFile::open(const std::string& path, const std::string& key, std::string* why) {
  why->clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno != ENOENT) *why = std::string("cannot open: ") + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    *why = "not a regular file";
    return nullptr;
  }
  const auto size = static_cast<size_t>(st.st_size);
  if (size < kHeader) {
    ::close(fd);
    *why = "truncated (" + std::to_string(size) + " bytes)";
    return nullptr;
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    *why = std::string("cannot mmap: ") + std::strerror(errno);
    return nullptr;
  }
  std::shared_ptr<PackFile> pf(new PackFile);
  pf->base_ = static_cast<const uint8_t*>(p);
  pf->size_ = size;
  const uint8_t* b = pf->base_;
  auto bad = [&](const std::string& what) {
    *why = what;
    return nullptr;
  };
  if (std::memcmp(b, kMagic, 8) != 0) return bad("not a qmm pack file");
  if (load<uint32_t>(b + 8) != kVersion) return bad("pack format version " + std::to_string(load<uint32_t>(b + 8)));
  const size_t key_len = load<uint32_t>(b + 12);
  const uint64_t n = load<uint64_t>(b + 16);
  if (key_len > kMaxKey || n > kMaxEntries) return bad("header out of range");
  const size_t table_end = kHeader + key_len + static_cast<size_t>(n) * kEntry;
  if (table_end > size) return bad("truncated (" + std::to_string(size) + " bytes)");
  if (load<uint64_t>(b + 24) != fnv1a(b + kHeader, table_end - kHeader)) return bad("header checksum mismatch");
  if (key_len != key.size() || std::memcmp(b + kHeader, key.data(), key_len) != 0) {
    return bad("made for another GGUF, build or CPU (stale)");
  }
  size_t end = round_page(table_end);
  for (uint64_t i = 0; i < n; ++i) {
    const auto e = load<RawEntry>(b + kHeader + key_len + i * kEntry);
    if (std::memchr(e.name, 0, kNameBytes) == nullptr || e.kind > PackEntry::raw) return bad("bad entry " + std::to_string(i));
    if (e.offset != end || e.offset % kPage != 0 || e.bytes > size - e.offset) {
      return bad("entry " + std::to_string(i) + " is outside the file (truncated?)");
    }
    end = e.offset + e.bytes;
    if (i + 1 < n) end = round_page(end);
    pf->entries_.push_back({static_cast<PackEntry::Kind>(e.kind), e.type, e.n, e.k, e.offset, e.bytes, e.name});
  }
  if (end != size) return bad("size " + std::to_string(size) + " is not the " + std::to_string(end) + " its table gives");
  return pf;
}

void write_pack_file(const std::string& path, const std::string& key, const std::vector<PackItem>& items) {
  check_arg(key.size() <= kMaxKey && items.size() <= kMaxEntries, "pack file too large");
  // The directory and its parents.
  for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) fail(Status::io, dir + ": cannot create: " + std::strerror(errno));
  }
  std::vector<RawEntry> table(items.size());
  size_t end = round_page(kHeader + key.size() + items.size() * kEntry);
  for (size_t i = 0; i < items.size(); ++i) {
    RawEntry& e = table[i];
    std::memset(&e, 0, sizeof e);
    const PackItem& it = items[i];
    if (it.w) {
      e.kind = PackEntry::weights;
      e.type = static_cast<uint32_t>(it.w->type());
      e.n = it.w->n();
      e.k = it.w->k();
      e.bytes = it.w->bytes();
      check_arg(std::strlen(it.w->gemm().name) < kNameBytes, "kernel name too long for a pack file");
      std::strcpy(e.name, it.w->gemm().name);
    } else {
      e.kind = PackEntry::raw;
      e.type = it.raw_type;
      e.bytes = it.raw_bytes;
    }
    e.offset = end;
    end = e.offset + e.bytes;
    if (i + 1 < items.size()) end = round_page(end);
  }
  std::vector<uint8_t> head(kHeader + key.size() + table.size() * kEntry);
  std::memcpy(head.data(), kMagic, 8);
  const auto key_len = static_cast<uint32_t>(key.size());
  const uint64_t n = items.size();
  std::memcpy(head.data() + 8, &kVersion, 4);
  std::memcpy(head.data() + 12, &key_len, 4);
  std::memcpy(head.data() + 16, &n, 8);
  std::memcpy(head.data() + kHeader, key.data(), key.size());
  if (!table.empty()) std::memcpy(head.data() + kHeader + key.size(), table.data(), table.size() * kEntry);
  const uint64_t sum = fnv1a(head.data() + kHeader, head.size() - kHeader);
  std::memcpy(head.data() + 24, &sum, 8);

  AtomicFile out(path, WriteOptions{});
  out.write(head.data(), head.size());
  static const std::vector<uint8_t> zeros(kPage);
  for (size_t i = 0; i < items.size(); ++i) {
    out.write(zeros.data(), table[i].offset - out.pos());
    const PackItem& it = items[i];
    out.write(it.w ? it.w->data() : it.raw, table[i].bytes);
  }
  out.commit();
}

}  // namespace qmm::llm
