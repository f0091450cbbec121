// Runs one kernel of the list once on a random M × N × K problem, between two marker calls,
// for scripts/count_instructions.py (executed instructions counted under qemu-aarch64):
//   count_kernel KERNEL_NAME M N K [capi | lhs]
//   count_kernel --list           (the kernels this CPU runs: "NAME gemm|gemv" per line)
//   count_kernel kai_NAME M N K   (KleidiAI's kernel NAME, where the build links it:
//                                  count_kleidiai.h; on its qmm twin's packed buffers)
// Everything between qmm_count_begin() and qmm_count_end() is the kernel call (including any
// SME ABI routine it calls); packing happens before. With `capi` a second begin..end pair holds
// the public call, qmm_ukernel_run (argument checks included), on the same packed operands. With
// `lhs` the one pair holds the kernel's LHS packer on the M × K activations instead (what the
// driver runs once per matmul before the kernels).
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "arm_test_util.h"
#include "count_kleidiai.h"
#include "core/cpu.h"
#include "kernels/kernel_list.h"
#include "matmul/select.h"
#include "qmm/qmm.h"

volatile int qmm_count_marker;
extern "C" __attribute__((noinline)) void qmm_count_begin() { qmm_count_marker = 1; }
extern "C" __attribute__((noinline)) void qmm_count_end() { qmm_count_marker = 2; }

int main(int argc, char** argv) {
  using namespace qmm;
  if (argc == 2 && std::string_view(argv[1]) == "--list") {
    for (const Ukernel* u : kernel_list()) {
      if (unavailable_reason(*u, cpu_info()).empty()) std::printf("%s %s\n", u->name, u->gemv ? "gemv" : "gemm");
    }
    return 0;
  }
  const bool capi = argc == 6 && std::string_view(argv[5]) == "capi";
  const bool lhs_only = argc == 6 && std::string_view(argv[5]) == "lhs";
  if (argc != 5 && !capi && !lhs_only) {
    std::fprintf(stderr, "usage: count_kernel KERNEL M N K [capi | lhs]\n");
    return 2;
  }
  const armtest::KaiKernel* kai = nullptr;
  for (const armtest::KaiKernel& c : armtest::kleidiai_kernels()) {
    if (std::string_view(argv[1]) == c.name) kai = &c;
  }
  if (std::string_view(argv[1]).starts_with("kai_") && (kai == nullptr || capi || lhs_only)) {
    std::fprintf(stderr, "count_kernel: %s is not a KleidiAI kernel this build links (scripts/kleidiai_build.sh, "
                         "-DQMM_KLEIDIAI_LIB; count_kleidiai.h), or with capi / lhs\n", argv[1]);
    return 2;
  }
  const Ukernel* u = find_kernel(kai ? kai->twin : argv[1]);
  const size_t m = std::strtoull(argv[2], nullptr, 10), n = std::strtoull(argv[3], nullptr, 10),
               k = std::strtoull(argv[4], nullptr, 10);
  if (!u || m == 0 || n == 0 || k == 0 || (u->gemv && m != 1)) {
    std::fprintf(stderr, "count_kernel: unknown kernel or bad shape\n");
    return 2;
  }
  // Cheap data (qemu runs the library's long-double random generator slowly, and logs it).
  auto data = [](size_t count, uint32_t seed) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>((static_cast<uint32_t>(i) * 2654435761u + seed) >> 20) / 2048.0f - 1.0f;
    return v;
  };
  const std::vector<float> w = data(n * k, 7);
  std::vector<uint8_t> rows(n * row_bytes(u->type, k));
  quantize_rows(u->type, w.data(), rows.data(), n, k);
  armtest::Packed packed = armtest::pack_for(*u, m, n, k, data(m * k, 3), rows);
  if (kai && kai->pack_lhs) kai->pack_lhs(m, k, data(m * k, 3).data(), packed.lhs);
  if (lhs_only) {
    const std::vector<float> x = data(m * k, 3);
    const TileParams p = kernel_params(*u);
    qmm_count_begin();
    u->lhs->run(m, k, p.mr, p.kr, p.sr, x.data(), k * sizeof(float), packed.lhs.data());
    qmm_count_end();
    std::printf("lhs packer %s m %zu k %zu byte[0] %d\n", u->lhs->name, m, k, packed.lhs[0]);
    return 0;
  }
  std::vector<float> dst(m * n);
  size_t index = 0;
  if (capi && qmm_ukernel_find(u->name, &index) != QMM_OK) {
    std::fprintf(stderr, "count_kernel: %s\n", qmm_last_error());
    return 2;
  }
  qmm_status status = QMM_OK;
  // The public call's first use builds its per-kernel table of checks once; count a later call,
  // as a framework calling per tile pays it.
  if (capi) status = qmm_ukernel_run(index, m, n, k, packed.lhs.data(), packed.rhs.data(), dst.data(), n * 4, -1e30f, 1e30f);
  qmm_count_begin();
  (kai ? kai->run : u->run)(m, n, k, packed.lhs.data(), packed.rhs.data(), dst.data(), n * 4, -1e30f, 1e30f);
  qmm_count_end();
  if (capi && status == QMM_OK) {
    qmm_count_begin();
    status = qmm_ukernel_run(index, m, n, k, packed.lhs.data(), packed.rhs.data(), dst.data(), n * 4, -1e30f, 1e30f);
    qmm_count_end();
  }
  if (status != QMM_OK) {
    std::fprintf(stderr, "count_kernel: qmm_ukernel_run: %s\n", qmm_last_error());
    return 2;
  }
  std::printf("kernel %s m %zu n %zu k %zu dst[0] %g\n", argv[1], m, n, k, static_cast<double>(dst[0]));
  return 0;
}
