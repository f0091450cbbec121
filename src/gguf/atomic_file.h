// Writing a file without ever losing one (`qmm quantize`, `qmm synth`, the GGUF writer):
//  - the bytes go to an unnamed file in OUT's directory (O_TMPFILE), mode 0666 & ~umask like
//    any new file, which no signal (not even SIGKILL) can leave behind; commit() fsyncs it and
//    links it in place (without --force: linkat, which never replaces; with it: under a unique
//    temporary name, then renamed over OUT atomically) and fsyncs the directory, so OUT is
//    either the old file or the whole new one. Where O_TMPFILE or /proc is missing, a named
//    temporary (O_CREAT|O_EXCL|O_NOFOLLOW: never an existing file, never a planted link);
//  - OUT may not be one of the inputs (same device and inode), and an existing OUT is
//    replaced only with `replace` (the CLI's --force); without it the final rename refuses
//    to replace a file that appeared meanwhile (RENAME_NOREPLACE);
//  - a named temporary is removed when the writer fails or is destroyed uncommitted, and on
//    SIGINT / SIGTERM / SIGHUP (the signal is then re-raised);
//  - OUT that is a character device (/dev/null, /dev/full) is written in place; a directory,
//    FIFO or socket is refused. Write errors (ENOSPC, EIO) are one-line qmm::Error (io).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace qmm {

struct WriteOptions {
  bool replace = true;              // an existing OUT may be replaced
  std::vector<std::string> inputs;  // files being read: OUT must not be one of them
};

class AtomicFile {
 public:
  AtomicFile(const std::string& path, const WriteOptions& opt);
  ~AtomicFile();  // uncommitted: the temporary is removed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* p, size_t n);
  size_t pos() const { return pos_; }
  void commit();
  const std::string& temp_path() const { return tmp_; }  // for tests

 private:
  void flush();
  void write_fd(const uint8_t* p, size_t n);
  [[noreturn]] void io_error(const char* what, int err);

  int create_unique(const std::string& dir, const std::function<int(const std::string&)>& create);
  void sync_dir() const;
  std::string path_, tmp_;  // tmp_ is empty while the file is unnamed (O_TMPFILE)
  int fd_ = -1;
  bool direct_ = false;  // a character device written in place
  bool replace_ = true;
  bool armed_ = false;  // the signal handler removes tmp_
  std::vector<uint8_t> buf_;
  size_t pos_ = 0;
};

}  // namespace qmm
