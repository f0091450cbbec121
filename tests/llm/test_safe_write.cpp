// The data-loss reproducers of `qmm quantize` / `qmm synth` (issue 11): an input named like
// the old fixed temporary, two writers of one OUT, a link planted at a temporary name, an
// existing (read-only, 0600) OUT, IN == OUT, a signal during the write, a full disk, and
// `qmm run > /dev/full`. Each runs the real command line.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "../temp_dirs.h"
#include "qmm_child.h"
#include "test_models.h"

namespace qmm::test {
namespace {

namespace fs = std::filesystem;

std::string bytes_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A fresh directory per test.
fs::path test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  static const std::string root = test::temp_dir("qmm_safe_write");
  const fs::path d = fs::path(root) / info->name();
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

fs::path model_in(const fs::path& dir, const std::string& name = "m.gguf") {
  fs::copy_file(stories260k_path(), dir / name);
  return dir / name;
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool one_line(const std::string& err) { return !err.empty() && err.find('\n') == err.size() - 1; }

TEST(SafeWrite, InputNamedLikeTheOldTemporaryIsKept) {
  QMM_REQUIRE_STORIES260K();
  const fs::path d = test_dir();
  const fs::path in = model_in(d, "x.gguf.tmp");
  const ChildResult r = run_qmm({"quantize", in, d / "x.gguf", "q4_0", "-t", "1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(bytes_of(in), bytes_of(stories260k_path()));
  EXPECT_EQ(run_qmm({"gguf", d / "x.gguf"}).code, 0);
  EXPECT_EQ(listing(d), (std::vector<std::string>{"x.gguf", "x.gguf.tmp"}));
}

TEST(SafeWrite, ConcurrentWritersNeverMixTheirFiles) {
  QMM_REQUIRE_STORIES260K();
  const fs::path d = test_dir();
  const fs::path in = model_in(d);
  ASSERT_EQ(run_qmm({"quantize", in, d / "ref_q4.gguf", "q4_0", "-t", "1"}).code, 0);
  ASSERT_EQ(run_qmm({"quantize", in, d / "ref_f32.gguf", "f32", "-t", "1"}).code, 0);
  const std::string q4 = bytes_of(d / "ref_q4.gguf"), f32 = bytes_of(d / "ref_f32.gguf");
  for (int round = 0; round < 6; ++round) {
    const bool force = round % 2 == 0;
    fs::remove(d / "c.gguf");
    std::vector<std::string> a{"quantize", in, d / "c.gguf", "q4_0", "-t", "1"}, b{"quantize", in, d / "c.gguf", "f32", "-t", "1"};
    if (force) a.push_back("-f"), b.push_back("-f");
    Child ca(a), cb(b);
    const ChildResult ra = ca.wait(30), rb = cb.wait(30);
    const std::string out = bytes_of(d / "c.gguf");
    EXPECT_TRUE(out == q4 || out == f32) << "round " << round << ": the result is neither writer's file";
    if (force) {
      EXPECT_EQ(ra.code, 0) << ra.err;
      EXPECT_EQ(rb.code, 0) << rb.err;
    } else {  // exactly one wins; the other says the file exists
      EXPECT_EQ((ra.code == 0) + (rb.code == 0), 1) << ra.err << rb.err;
      EXPECT_NE((ra.err + rb.err).find("exists"), std::string::npos) << ra.err << rb.err;
      EXPECT_EQ(out, ra.code == 0 ? q4 : f32);
    }
    EXPECT_EQ(listing(d).size(), 4u) << "a temporary was left behind";
  }
}

TEST(SafeWrite, LinkPlantedAtATemporaryNameIsNotFollowed) {
  QMM_REQUIRE_STORIES260K();
  const fs::path d = test_dir();
  const fs::path in = model_in(d);
  std::ofstream(d / "victim") << "precious";
  fs::create_symlink(d / "victim", d / "out.gguf.tmp");  // the old fixed name
  for (int i = 0; i < 4; ++i) fs::create_symlink(d / "victim", d / (".out.gguf.planted" + std::to_string(i) + ".tmp"));
  const ChildResult r = run_qmm({"quantize", in, d / "out.gguf", "q8_0", "-t", "1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(bytes_of(d / "victim"), "precious");
  EXPECT_TRUE(fs::is_symlink(d / "out.gguf.tmp"));
  EXPECT_EQ(listing(d).size(), 8u);  // m, out, victim, 5 links: no temporary left
}

TEST(SafeWrite, AnExistingOutputNeedsForceAndGetsAFreshMode) {
  QMM_REQUIRE_STORIES260K();
  const fs::path d = test_dir();
  const fs::path in = model_in(d);
  for (const fs::perms mode : {fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read,
                               fs::perms::owner_read | fs::perms::owner_write}) {
    const fs::path out = d / "out.gguf";
    fs::remove(out);
    std::ofstream(out) << "keep me";
    fs::permissions(out, mode);
    for (const char* verb : {"quantize", "synth"}) {
      const ChildResult r = verb == std::string("quantize") ? run_qmm({"quantize", in, out, "q8_0", "-t", "1"})
                                                            : run_qmm({"synth", "tiny", "-o", out, "-t", "1"});
      EXPECT_EQ(r.code, 1) << verb;
      EXPECT_TRUE(one_line(r.err)) << r.err;
      EXPECT_NE(r.err.find("exists (use --force to replace it)"), std::string::npos) << r.err;
      EXPECT_EQ(bytes_of(out), "keep me");
      EXPECT_EQ(fs::status(out).permissions(), mode);
    }
    const ChildResult r = run_qmm({"quantize", in, out, "q8_0", "-t", "1", "--force"});
    EXPECT_EQ(r.code, 0) << r.err;
    const mode_t mask = ::umask(0);
    ::umask(mask);
    EXPECT_EQ(static_cast<mode_t>(fs::status(out).permissions()), 0666 & ~mask);  // a new file's mode
  }
  EXPECT_EQ(run_qmm({"synth", "tiny", "-o", d / "out.gguf", "-t", "1", "-f"}).code, 0);
}

TEST(SafeWrite, TheInputIsNeverTheOutput) {
  QMM_REQUIRE_STORIES260K();
  const fs::path d = test_dir();
  const fs::path in = model_in(d);
  fs::create_symlink(in, d / "link.gguf");
  for (const fs::path& out : {in, d / "link.gguf", d / "." / "m.gguf"}) {
    for (bool force : {false, true}) {
      std::vector<std::string> args{"quantize", in, out, "q8_0", "-t", "1"};
      if (force) args.push_back("-f");
      const ChildResult r = run_qmm(args);
      EXPECT_EQ(r.code, 1) << out;
      EXPECT_TRUE(one_line(r.err)) << r.err;
      EXPECT_NE(r.err.find("is the input file"), std::string::npos) << r.err;
    }
  }
  EXPECT_EQ(bytes_of(in), bytes_of(stories260k_path()));
  EXPECT_EQ(listing(d), (std::vector<std::string>{"link.gguf", "m.gguf"}));
}

// SIGINT / SIGTERM in the middle of writing a 600 MB model: no temporary (and no OUT) left.
TEST(SafeWrite, ASignalDuringTheWriteLeavesNoTemporary) {
  const fs::path d = test_dir();
  // The writer has its output open once one of its descriptors leads into d: an unnamed
  // O_TMPFILE ("d/#123 (deleted)") or, where that is unavailable, a named temporary.
  auto writing = [&](pid_t pid) {
    std::error_code ec;
    for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      if (fs::read_symlink(fd.path(), ec).string().starts_with(d.string() + "/")) return true;
    }
    return false;
  };
  for (int sig : {SIGTERM, SIGINT, SIGKILL}) {
    Child c({"synth", "llama-1b", "-o", d / "big.gguf", "-t", "1"});
    bool seen = false;
    for (int i = 0; i < 5000 && !seen; ++i) {
      seen = writing(c.pid());
      if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(seen) << "the output was never opened";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(c.pid(), sig);
    const ChildResult r = c.wait(60);
    EXPECT_EQ(r.signal, sig) << r.err;
    EXPECT_EQ(listing(d), std::vector<std::string>{}) << "signal " << sig;
  }
}

TEST(SafeWrite, WriteErrorsAreOneLineErrors) {
  QMM_REQUIRE_STORIES260K();
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  for (const ChildResult& r : {run_qmm({"synth", "tiny", "-o", "/dev/full", "-t", "1"}),
                               run_qmm({"quantize", stories260k_path(), "/dev/full", "q8_0", "-t", "1"})}) {
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  }
  const fs::path d = test_dir();
  const ChildResult dir = run_qmm({"synth", "tiny", "-o", d, "-t", "1"});
  EXPECT_EQ(dir.code, 1);
  EXPECT_NE(dir.err.find("is a directory"), std::string::npos) << dir.err;
  const ChildResult none = run_qmm({"synth", "tiny", "-o", d / "absent" / "x.gguf", "-t", "1"});
  EXPECT_EQ(none.code, 1);
  EXPECT_TRUE(one_line(none.err)) << none.err;
}

TEST(SafeWrite, OutputToAFullStdoutIsAnError) {
  QMM_REQUIRE_STORIES260K();
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  for (const std::vector<std::string>& args : {std::vector<std::string>{"run", "-m", stories260k_path(), "-n", "4", "--temp", "0", "-t", "1"},
                                               std::vector<std::string>{"gguf", stories260k_path()},
                                               std::vector<std::string>{"info"}}) {
    const ChildResult r = Child(args, "/dev/full").wait(10);
    EXPECT_EQ(r.code, 1) << args[0];
    EXPECT_NE(r.err.find("cannot write to standard output"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace qmm::test
