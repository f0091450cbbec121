// qmm bench matmul: one shape, the selected kernel and the scalar one, as time, GOPS,
// GB/s of weights and percentages of the machine's limits measured in the same run.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "qmm/cli/args.h"
#include "bench/paired.h"
#include "bench_util.h"
#include "bench_verbs.h"
#include "core/buffer.h"
#include "core/cpu.h"
#include "core/error.h"
#include "core/random.h"
#include "kernels/kernel_list.h"
#include "qmm/cli/json.h"
#include "limits.h"
#include "matmul/matmul.h"

namespace qmm::cli {

namespace {

// --cpu-time: seconds of process CPU time per thread, which leaves out the time slices other
// processes held the cores (a shared machine), not the time a thread waits on memory.
double g_cpu_threads = 1;
double cpu_clock() { return process_cpu_seconds() / g_cpu_threads; }

// Rows up to which a matmul is also timed from DRAM: batched decode of a few sequences reads
// each weight once for all its rows, so its time is the weights' stream as the GEMV's is.
constexpr size_t kDramRows = 4;

struct Row {
  std::string kernel, mode;
  double seconds, gops, gbs, pct_limit;
  const char* limit_name;
};

}  // namespace

int bench_matmul(int argc, char** argv) {
  std::string type_s = "q4_0", kernel, disable;
  size_t m = 1, n = 4096, k = 4096, threads = 1, rotate_mib = 256;
  double min_time = 1.0;
  bool json = false, no_scalar = false, no_limits = false, cpu_time = false;
  Args args("bench matmul",
            "Time dst[m,n] = lhs[m,k] x W[n,k]^T for the selected kernel and the scalar one. GEMV (m = 1) is timed\n"
            "twice: weights rotating through >= 256 MiB of copies (DRAM) and one copy (cache-hot); so is a GEMM of\n"
            "2 to 4 rows (batched decode: it streams the weights as the GEMV does).",
            argc - 1, argv + 1);
  args.choice("--type", &type_s, type_names([](const TypeInfo& t) { return t.native; }),
              "weight type (default q4_0; qc8 / qc4: per-channel)")
      .size("-m", &m, "rows of activations (default 1)")
      .size("-n", &n, "output columns = weight rows (default 4096)")
      .size("-k", &k, "inner dimension (default 4096)")
      .size("-t,--threads", &threads, "threads (default 1)")
      .str("--kernel", &kernel, "NAME", "time this variant (or ISA) instead of the selected one")
      .str("--disable", &disable, "LIST", "exclude ISAs / variants from selection")
      .real("--min-time", &min_time, "seconds per measurement (default 1)")
      .size("--rotate-mib", &rotate_mib, "MiB of weight copies for the DRAM figure (default 256)")
      .flag("--no-scalar", &no_scalar, "skip the scalar comparison")
      .flag("--no-limits", &no_limits, "skip measuring the machine limits")
      .flag("--cpu-time", &cpu_time, "time by process CPU time / threads (shared machines)")
      .flag("--json", &json, "print JSON");
  args.parse();
  const WeightType type = find_type(type_s.c_str())->type();  // one of the choices
  check_weight_shape(type, n, k);
  if (threads > 1024) throw UsageError("-t must be at most 1024");

  KernelFilter filter = kernel_overrides(kernel, disable, "--kernel/--disable");
  if (const Ukernel* u = find_kernel(kernel)) {
    if (u->type != type) throw UsageError(kernel + " takes " + type_name(u->type) + " weights, not " + type_s);
    if (u->gemv && m != 1) throw UsageError(kernel + " is a GEMV (m = 1 only)");
    if (std::string why = unavailable_reason(*u, cpu_info()); !why.empty()) {
      fail(Status::unsupported, kernel + " cannot run here: " + why);
    }
  }

  g_cpu_threads = static_cast<double>(threads);
  double (*clock)() = cpu_time ? cpu_clock : now_seconds;
  MachineLimits lim;
  if (!no_limits) lim = measure_limits(static_cast<int>(threads));
  Context ctx(static_cast<int>(threads));
  const std::vector<float> w_f32 = random_floats(n * k, 1);
  std::vector<uint8_t> rows(row_bytes(type, k) * n);
  quantize_rows(type, w_f32.data(), rows.data(), n, k);
  const std::vector<float> lhs = random_floats(m * k, 2);
  std::vector<float> dst(m * n);
  const double ops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);

  std::vector<Row> table;
  double lhs_pack_seconds = 0;  // the selected GEMM's LHS packer alone, one thread
  size_t dram_pairs = 0;         // GEMV: kernel / plain-read pairs timed over the same copies
  double dram_ratio = 0, dram_read_gbs = 0;
  auto measure = [&](const KernelFilter& f, bool scalar) {
    std::vector<PackedWeights> w = bench::pack_copies(type, n, k, rows.data(), f, 1, ctx.pool());
    const Ukernel& u = w[0].kernel_for(m);
    const double bytes = static_cast<double>(w[0].bytes());
    const bool is_q = is_block_type(type) || is_channel_type(type);
    // AVX2 kernels (no VNNI) need vpmaddubsw + vpmaddwd + vpaddd per multiply-add: their peak is
    // that sequence's, as in bench model.
    const bool avx2_q = is_q && u.isa == Isa::avx2 && lim.avx2_int8_gops > 0;
    const double peak = avx2_q ? lim.avx2_int8_gops : is_q ? lim.int8_gops : lim.fp32_gflops;
    auto add = [&](const char* mode, double sec, bool dram) {
      Row r{u.name, mode, sec, ops / sec / 1e9, bytes / sec / 1e9, 0, ""};
      if (m == 1 || dram) {
        const double bw = dram ? lim.dram_read_gbs : lim.hot_read_gbs;
        r.pct_limit = bw > 0 ? 100.0 * r.gbs / bw : 0;
        r.limit_name = dram ? "DRAM bw" : "cache bw";
      } else {
        r.pct_limit = peak > 0 ? 100.0 * r.gops / peak : 0;
        r.limit_name = avx2_q ? "AVX2 int8 peak" : is_q ? "int8 peak" : "fp32 peak";
      }
      table.push_back(r);
    };
    const double t = scalar ? std::min(min_time, 0.5) : min_time;
    const int reps = scalar ? 1 : 3;
    const double hot = time_median([&] { matmul(w[0], m, lhs.data(), k * 4, dst.data(), n * 4, -INFINITY, INFINITY, ctx); }, t, reps, clock);
    if (m <= kDramRows && !scalar) {
      // DRAM: the kernel over every copy in turn, alternately with a plain read of the same
      // copies; the figure is the median of the paired ratios (a shared machine's memory
      // bandwidth drifts from second to second, so a limit measured before is not enough).
      const size_t copies = std::max<size_t>(2, (rotate_mib << 20) / w[0].bytes() + 1);
      w = bench::pack_copies(type, n, k, rows.data(), f, copies, ctx.pool());
      const bench::PairedRounds p = bench::paired_dram(w, m, lhs.data(), dst.data(), ctx, t, clock, read_pass_seconds);
      add("dram", median(p.kernel_s), true);
      dram_pairs = p.ratio.size(), dram_ratio = median(p.ratio), dram_read_gbs = median(p.read_gbs);
    }
    add(m == 1 ? "hot" : "gemm", hot, false);
    if (m > 1 && !scalar) {
      const TileParams p = w[0].params_for(m);
      AlignedBuffer packed(lhs_packed_size(u, p, m, k));
      lhs_pack_seconds = time_median(
          [&] { u.lhs->run(m, k, p.mr, p.kr, p.sr, lhs.data(), k * 4, packed.data()); }, t / 4, 3,
          cpu_time ? process_cpu_seconds : now_seconds);
    }
    return hot;
  };
  const double t_sel = measure(filter, false);
  double t_scalar = 0;
  const KernelPair chosen = select_kernels(type, filter, cpu_info());
  const bool selected_is_scalar = (m == 1 ? chosen.gemv : chosen.gemm)->isa == Isa::scalar;
  if (!no_scalar) t_scalar = selected_is_scalar ? t_sel : measure(parse_kernel_filter("scalar", ""), true);

  if (json) {
    std::string results = "[";
    for (const Row& r : table) {
      JsonObject o;
      o.str("kernel", r.kernel).str("mode", r.mode).num("seconds", r.seconds, 9).num("gops", r.gops, 3).num("gbs", r.gbs, 3);
      o.measured("pct_limit", r.pct_limit, !no_limits, 2).raw("limit", no_limits ? "null" : json_string(r.limit_name));
      results += (results.size() > 1 ? ", " : "") + o.text();
    }
    JsonObject o;
    o.str("type", type_s).integer("m", static_cast<long long>(m)).integer("n", static_cast<long long>(n));
    o.integer("k", static_cast<long long>(k)).integer("threads", static_cast<long long>(threads));
    o.raw("limits", no_limits ? "null" : limits_json(lim)).raw("results", results + "]");
    o.measured("lhs_pack_seconds", lhs_pack_seconds, lhs_pack_seconds > 0, 9);
    o.measured("speedup_vs_scalar", t_scalar / t_sel, t_scalar > 0, 2);
    const bool paired_ok = dram_pairs > 0 && paired_plausible(dram_ratio);
    o.measured("dram_paired_ratio", dram_ratio, paired_ok).measured("dram_paired_read_gbs", dram_read_gbs, dram_pairs > 0, 2);
    if (dram_pairs > 0 && !paired_ok) o.str("dram_paired_problem", kPairedProblem).num("dram_paired_measured", dram_ratio, 4);
    std::printf("%s\n", o.text().c_str());
    return 0;
  }
  if (!no_limits) print_limits(lim, false);
  std::printf("\nmatmul %s  m=%zu n=%zu k=%zu  threads=%zu\n", type_s.c_str(), m, n, k, threads);
  std::printf("  %-62s %-5s %11s %9s %9s %8s\n", "kernel", "mode", "time", "GOPS", "GB/s(W)", "%limit");
  for (const Row& r : table) {
    std::printf("  %-62s %-5s %9.3f ms %9.1f %9.2f", r.kernel.c_str(), r.mode.c_str(), r.seconds * 1e3, r.gops, r.gbs);
    if (no_limits) {
      std::printf("  %7s\n", "-");  // no limit measured (--no-limits): no percentage
    } else {
      std::printf("  %6.1f%%  of %s\n", r.pct_limit, r.limit_name);
    }
  }
  if (dram_pairs > 0 && !paired_plausible(dram_ratio)) {
    std::printf("  dram, paired: no result: %.1f%% is %s (--rotate-mib sets the copies' size)\n", 100.0 * dram_ratio,
                kPairedProblem);
  } else if (dram_pairs > 0) {
    std::printf("  dram, paired: %.1f%% of a plain read of the same weight copies (median of %zu alternating\n"
                "    kernel/read passes; the read ran at %.2f GB/s)\n",
                100.0 * dram_ratio, dram_pairs, dram_read_gbs);
  }
  if (lhs_pack_seconds > 0) {
    std::printf("  LHS quant+pack alone (1 thread): %.3f ms = %.1f%% of the matmul time\n", lhs_pack_seconds * 1e3,
                100.0 * lhs_pack_seconds / t_sel);
  }
  if (t_scalar > 0) std::printf("  speed-up over scalar: %.1fx\n", t_scalar / t_sel);
  return 0;
}

}  // namespace qmm::cli
