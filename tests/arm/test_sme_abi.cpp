// The SME ABI obligations of every SME2 kernel, under the emulator:
//  - callee-saved x19-x28 and d8-d15 hold the caller's values after the call (SMSTART zeroes
//    the vector registers, so a streaming kernel must save d8-d15 itself);
//  - the kernel returns in non-streaming mode with ZA off (SVCR.SM = SVCR.ZA = 0);
//  - a caller's live ZA survives (the kernel honours the lazy-save protocol: __arm_new("za"));
//  - a signal delivered while the kernel runs in streaming mode, with a handler doing
//    floating-point work, leaves the result bit-identical.
#include <asm/sigcontext.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/time.h>
#include <ucontext.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "arm_test_util.h"
#include "core/cpu.h"
#include "live_za.h"
#include "matmul/select.h"

extern "C" void qmm_abi_call(const void* call, uint64_t* out);

namespace qmm {
namespace {

// Layout read by tests/arm/abi_probe.S (offsets in the comments).
struct AbiCall {
  MatmulFn fn;                            // 0
  size_t m, n, k;                         // 8, 16, 24
  const void* lhs;                        // 32
  const void* rhs;                        // 40
  float* dst;                             // 48
  size_t stride;                          // 56
  float lo, hi;                           // 64, 68
  uint64_t d[8];                          // 72: canaries for d8-d15
  uint64_t x[10];                         // 136: canaries for x19-x28
};
static_assert(offsetof(AbiCall, d) == 72 && offsetof(AbiCall, x) == 136);

uint64_t read_svcr() {
  uint64_t v;
  __asm__ volatile("mrs %0, S3_3_C4_C2_2" : "=r"(v));  // SVCR: bit 0 SM, bit 1 ZA
  return v;
}

std::vector<const Ukernel*> sme2_kernels() {
  std::vector<const Ukernel*> out;
  for (const Ukernel* u : kernel_list()) {
    if (u->isa == Isa::sme2) out.push_back(u);
  }
  return out;
}

struct Problem {
  size_t m, n, k;
  armtest::Packed packed;
  std::vector<float> want;  // the kernel's result from a plain call
};

Problem make_problem(const Ukernel& u, size_t k) {
  const TileParams p = kernel_params(u);
  if (const size_t bl = block_len(u.type); bl > 32) k = (k + bl - 1) / bl * bl;  // K-quants: whole super-blocks
  Problem pr{u.gemv ? 1 : p.mr + 1, p.nr + 3, k, {}, {}};
  const std::vector<float> lhs = armtest::random_floats(pr.m * k, 11);
  const std::vector<uint8_t> rows = armtest::random_weights(u.type, pr.n, k, 12);
  pr.packed = armtest::pack_for(u, pr.m, pr.n, k, lhs, rows);
  pr.want = armtest::run_kernel(u, pr.m, pr.n, k, pr.packed, -1e30f, 1e30f);
  return pr;
}

class SmeAbi : public ::testing::TestWithParam<const Ukernel*> {
 protected:
  void SetUp() override {
    if (std::string why = unavailable_reason(*GetParam(), cpu_info()); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(SmeAbi, PreservesCalleeSavedRegistersAndLeavesStreamingMode) {
  const Ukernel& u = *GetParam();
  const Problem pr = make_problem(u, 96);
  std::vector<float> dst(pr.want.size(), 1e30f);
  AbiCall call{u.run, pr.m, pr.n, pr.k, pr.packed.lhs.data(), pr.packed.rhs.data(), dst.data(),
               (pr.n + 3) * sizeof(float), -1e30f, 1e30f, {}, {}};
  for (int i = 0; i < 8; ++i) call.d[i] = 0x3ff0d00dcafe0000ull + static_cast<uint64_t>(i) * 0x10001;
  for (int i = 0; i < 10; ++i) call.x[i] = 0x5eed000000000000ull + static_cast<uint64_t>(i) * 0x1234567;
  uint64_t after[18] = {};
  qmm_abi_call(&call, after);
  const uint64_t svcr = read_svcr();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(after[i], call.d[i]) << "d" << 8 + i << " clobbered";
  for (int i = 0; i < 10; ++i) EXPECT_EQ(after[8 + i], call.x[i]) << "x" << 19 + i << " clobbered";
  EXPECT_EQ(svcr & 1, 0u) << "returned in streaming mode";
  EXPECT_EQ(svcr & 2, 0u) << "returned with ZA on";
  EXPECT_EQ(dst, pr.want);
}

TEST_P(SmeAbi, CallersLiveZaSurvives) {
  const Ukernel& u = *GetParam();
  const Problem pr = make_problem(u, 64);
  std::vector<float> dst(pr.want.size(), 1e30f);
  const armtest::MatmulArgs a{pr.m, pr.n, pr.k, pr.packed.lhs.data(), pr.packed.rhs.data(), dst.data(),
                              (pr.n + 3) * sizeof(float), -1e30f, 1e30f};
  EXPECT_TRUE(armtest::za_survives_call(u.run, a));
  EXPECT_EQ(dst, pr.want);
}

std::atomic<int> g_signals{0};
std::atomic<int> g_interrupted_streaming{0};  // signals that arrived while SVCR.SM was 1
std::atomic<int> g_streaming_in_handler{0};
volatile double g_sink = 0.0;

// True if the signal frame's SVE record says the interrupted code was in streaming mode.
bool interrupted_in_streaming_mode(const ucontext_t* uc) {
  const auto* p = reinterpret_cast<const uint8_t*>(uc->uc_mcontext.__reserved);
  const uint8_t* end = p + sizeof(uc->uc_mcontext.__reserved);
  while (p + sizeof(_aarch64_ctx) <= end) {
    const auto* head = reinterpret_cast<const _aarch64_ctx*>(p);
    if (head->magic == 0 || head->size == 0) break;
    if (head->magic == SVE_MAGIC) return (reinterpret_cast<const sve_context*>(p)->flags & SVE_SIG_FLAG_SM) != 0;
    if (head->magic == EXTRA_MAGIC) {
      const auto* extra = reinterpret_cast<const extra_context*>(p);
      p = reinterpret_cast<const uint8_t*>(extra->datap);
      end = p + extra->size;
      continue;
    }
    p += head->size;
  }
  return false;
}

void on_alarm(int, siginfo_t*, void* context) {
  if (interrupted_in_streaming_mode(static_cast<const ucontext_t*>(context))) g_interrupted_streaming.fetch_add(1);
  if (read_svcr() & 1) g_streaming_in_handler.fetch_add(1);
  double x = 1.0;  // floating-point (and, compiled normally, NEON) work inside the handler
  for (int i = 0; i < 200; ++i) x = x * 1.000001 + 0.5 / (i + 1);
  g_sink = g_sink + x;
  g_signals.fetch_add(1);
}

TEST_P(SmeAbi, SignalDuringStreamingModeKeepsResult) {
  const Ukernel& u = *GetParam();
  const Problem pr = make_problem(u, 512);
  struct sigaction sa = {}, old = {};
  sa.sa_sigaction = on_alarm;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGALRM, &sa, &old), 0);
  g_signals = 0;
  g_interrupted_streaming = 0;
  g_streaming_in_handler = 0;
  itimerval t = {{0, 200}, {0, 200}}, off = {};
  ASSERT_EQ(setitimer(ITIMER_REAL, &t, nullptr), 0);
  const auto start = std::chrono::steady_clock::now();
  int runs = 0, bad = 0;
  while (g_interrupted_streaming.load() < 10 && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    const std::vector<float> got = armtest::run_kernel(u, pr.m, pr.n, pr.k, pr.packed, -1e30f, 1e30f);
    bad += got != pr.want;
    ++runs;
  }
  setitimer(ITIMER_REAL, &off, nullptr);
  sigaction(SIGALRM, &old, nullptr);
  EXPECT_EQ(bad, 0) << "of " << runs << " runs";
  EXPECT_EQ(g_streaming_in_handler.load(), 0) << "handler ran in streaming mode";
  if (g_interrupted_streaming.load() == 0) {
    GTEST_SKIP() << "none of " << g_signals.load() << " SIGALRMs in " << runs << " runs interrupted streaming mode";
  }
  RecordProperty("signals_in_streaming_mode", g_interrupted_streaming.load());
}

INSTANTIATE_TEST_SUITE_P(List, SmeAbi, ::testing::ValuesIn(sme2_kernels()),
                         [](const ::testing::TestParamInfo<const Ukernel*>& info) { return std::string(info.param->name); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SmeAbi);

}  // namespace
}  // namespace qmm
