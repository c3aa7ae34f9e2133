// How close hwplan's CPU calibration kernels come to the yardsticks on this machine:
//   triad  vs  a plain OpenMP STREAM triad in C (bench/stream_reference.c, run as a separate -O3 binary)
//   sgemm  vs  OpenBLAS cblas_sgemm on the same shapes and thread count (built with -DHWPLAN_HAVE_OPENBLAS)
// The issue asks for triad within 10% and GEMM within 20%. See bench/README.md for the commands and results.
//
//   calibration_bench [--quick] [--threads N] [--rounds N] [--stream-reference PATH] [--only triad|gemm]
//                     [--isas baseline,avx2,avx512]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "calibrate/cpu_backend.hpp"
#include "calibrate/host_info.hpp"

#ifdef HWPLAN_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using hwplan::calibrate::CalibrationOptions;
using hwplan::calibrate::KernelResult;

struct Args {
  bool quick = false;
  int threads = 0;
  int rounds = 3;
  std::string stream_reference = "./stream_reference";
  std::string only;                // "", "triad" or "gemm"
  std::vector<std::string> isas;   // Eigen variants to time; empty: every one this CPU runs
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1)
    parts.push_back(s.substr(start, comma - start));
  parts.push_back(s.substr(start));
  return parts;
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--quick") a.quick = true;
    else if (arg == "--threads" && has_value) a.threads = std::atoi(argv[++i]);
    else if (arg == "--rounds" && has_value) a.rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--stream-reference" && has_value) a.stream_reference = argv[++i];
    else if (arg == "--only" && has_value) a.only = argv[++i];
    else if (arg == "--isas" && has_value) a.isas = split_commas(argv[++i]);
    else {
      const bool help = arg == "--help" || arg == "-h";
      std::fprintf(help ? stdout : stderr,
                   "usage: %s [--quick] [--threads N] [--rounds N] [--stream-reference PATH] [--only triad|gemm] "
                   "[--isas baseline,avx2,avx512]\n",
                   argv[0]);
      std::exit(help ? 0 : 2);
    }
  }
  return a;
}

void pause_between_runtimes() {
  // libgomp and OpenBLAS's pthreads both spin for a while after a parallel call; let them go to sleep so the
  // next measurement does not share the cores with them.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

// --- triad ----------------------------------------------------------------------------------------------

// Runs the reference binary on n elements per array; 0 when it cannot be run.
double reference_triad_bytes_per_s(const std::string& path, double n, int threads) {
  std::string command = path + " " + std::to_string(static_cast<long>(n)) + " 20";
  if (threads > 0) command = "OMP_NUM_THREADS=" + std::to_string(threads) + " " + command;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (!pipe) return 0;
  double value = 0;
  char key[64] = {};
  if (std::fscanf(pipe, "%63s %lf", key, &value) != 2 || std::string(key) != "triad_best_bytes_per_s") value = 0;
  return pclose(pipe) == 0 ? value : 0;
}

// --- GEMM -----------------------------------------------------------------------------------------------

struct Shape {
  long m = 0, n = 0, k = 0;
};

Shape parse_shape(const std::string& s) {
  Shape shape;
  std::sscanf(s.c_str(), "M=%ld N=%ld K=%ld", &shape.m, &shape.n, &shape.k);
  return shape;
}

#ifdef HWPLAN_HAVE_OPENBLAS
// Best FLOP/s of cblas_sgemm on the shape, timed as hwplan times Eigen: one warm-up, then many short samples
// (>= 20 us each; up to 500 of them, or about 0.5 s, but at least 3) and the fastest kept.
double openblas_sgemm_flops(const Shape& s, bool quick, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  const auto random = [&](std::size_t count) {
    std::vector<float> v(count);
    for (float& x : v) x = rng() & 1 ? magnitude(rng) : -magnitude(rng);
    return v;
  };
  const auto a = random(static_cast<std::size_t>(s.m * s.k));
  const auto b = random(static_cast<std::size_t>(s.k * s.n));
  std::vector<float> c(static_cast<std::size_t>(s.m * s.n));
  const auto run = [&](long batch) {
    const double t0 = omp_get_wtime();
    for (long i = 0; i < batch; ++i)
      cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.m), static_cast<int>(s.n),
                  static_cast<int>(s.k), 1.0f, a.data(), static_cast<int>(s.m), b.data(), static_cast<int>(s.k), 0.0f,
                  c.data(), static_cast<int>(s.m));
    return (omp_get_wtime() - t0) / static_cast<double>(batch);
  };
  run(1);
  long batch = 1;
  double t = std::min({run(1), run(1), run(1)});
  while (t * static_cast<double>(batch) < 20e-6) batch *= 2;
  const int reps = std::clamp(static_cast<int>((quick ? 0.05 : 0.5) / (t * static_cast<double>(batch))), 3, 500);
  for (int r = 0; r < reps; ++r) t = std::min(t, run(batch));
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / t;
}
#endif

double geometric_mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double log_sum = 0;
  for (double x : v) log_sum += std::log(x);
  return std::exp(log_sum / static_cast<double>(v.size()));
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  const auto host = hwplan::calibrate::detect_host();
  const int threads = hwplan::calibrate::resolve_threads(args.threads);
  std::printf("host: %s, %d cores / %d threads, L1 %.0f KiB, L2 %.0f KiB, LLC %.0f MiB, %s\n", host.cpu_model.c_str(),
              host.cores, host.threads, host.l1_bytes / 1024, host.l2_bytes / 1024, host.llc_total_bytes / 1048576,
              host.os.c_str());
  std::printf("load average (1 min) at start: %.2f; threads used: %d; GEMM kernel: %s%s\n\n", host.load_average_1min,
              threads, hwplan::calibrate::cpu_gemm_isa().c_str(), args.quick ? "; --quick" : "");

  CalibrationOptions options;
  options.quick = args.quick;
  options.threads = args.threads;

  if (args.only.empty() || args.only == "triad") {
    // Triad: alternate hwplan and the reference so that drift in the machine's load hits both alike.
    double hw_triad = 0, ref_triad = 0, elements = 0;
    std::string triad_shape;
    for (int round = 0; round < args.rounds; ++round) {
      for (const KernelResult& r : hwplan::calibrate::cpu_stream(options)) {
        if (r.kernel != "triad") continue;
        hw_triad = std::max(hw_triad, r.best);
        elements = r.size / 24;
        triad_shape = r.shape;
      }
      pause_between_runtimes();
      ref_triad = std::max(ref_triad, reference_triad_bytes_per_s(args.stream_reference, elements, args.threads));
      pause_between_runtimes();
    }
    std::printf("%-40s %14s %14s %8s\n", "triad (best of rounds)", "hwplan GB/s", "reference GB/s", "ratio");
    if (ref_triad > 0)
      std::printf("%-40s %14.2f %14.2f %8.3f\n\n", triad_shape.c_str(), hw_triad / 1e9, ref_triad / 1e9,
                  hw_triad / ref_triad);
    else
      std::printf("%-40s %14.2f %14s %8s   (could not run %s)\n\n", triad_shape.c_str(), hw_triad / 1e9, "-", "-",
                  args.stream_reference.c_str());
  }
  if (!args.only.empty() && args.only != "gemm") return 0;

  // GEMM: every SIMD variant this CPU runs, then OpenBLAS on the same shapes.
  const std::string dispatched = hwplan::calibrate::cpu_gemm_isa();
  std::vector<std::string> isas = args.isas;
  if (isas.empty()) {
    isas.push_back("baseline");
    if (dispatched == "avx2" || dispatched == "avx512") isas.push_back("avx2");
    if (dispatched == "avx512") isas.push_back("avx512");
  }
  if (std::find(isas.begin(), isas.end(), dispatched) == isas.end()) isas.push_back(dispatched);

  // Shape by shape, Eigen (each variant) then OpenBLAS, so that drift in the machine's speed hits both alike.
  std::map<std::string, std::map<std::string, double>> eigen;  // shape -> isa -> FLOP/s
  std::map<std::string, double> openblas;
  std::vector<std::string> shapes;
#ifdef HWPLAN_HAVE_OPENBLAS
  openblas_set_num_threads(threads);
  std::mt19937_64 rng(7);
  std::printf("OpenBLAS core: %s\n", openblas_get_corename());
#endif
  for (const hwplan::calibrate::GemmShape& s : hwplan::calibrate::cpu_gemm_shapes(args.quick)) {
    const std::string key = "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k);
    shapes.push_back(key);
    for (const std::string& isa : isas) {
      CalibrationOptions o = options;
      o.gemm_isa = isa;
      eigen[key][isa] = hwplan::calibrate::cpu_gemm_shape(o, "fp32", s).best;
    }
    pause_between_runtimes();
#ifdef HWPLAN_HAVE_OPENBLAS
    openblas[key] = openblas_sgemm_flops({s.m, s.n, s.k}, args.quick, rng);
    pause_between_runtimes();
#endif
  }

  std::printf("%-28s", "sgemm GFLOP/s");
  for (const std::string& isa : isas) std::printf(" %10s", ("eigen-" + isa).c_str());
  std::printf(" %10s %8s\n", "openblas", "ratio");
  std::vector<double> square_ratios;
  double largest_ratio = 0;
  for (const std::string& key : shapes) {
    std::printf("%-28s", key.c_str());
    for (const std::string& isa : isas) std::printf(" %10.1f", eigen[key][isa] / 1e9);
    const double ob = openblas.count(key) ? openblas[key] : 0;
    const double ratio = ob > 0 ? eigen[key][dispatched] / ob : 0;
    if (ob > 0) std::printf(" %10.1f %8.3f\n", ob / 1e9, ratio);
    else std::printf(" %10s %8s\n", "-", "-");
    const Shape s = parse_shape(key);
    if (ob > 0 && s.m == s.n && s.n == s.k && s.m >= 256) {
      square_ratios.push_back(ratio);
      largest_ratio = ratio;  // shapes come in increasing size
    }
  }
  if (!square_ratios.empty())
    std::printf("\nsgemm (%s) / OpenBLAS: largest square %.3f, geometric mean over square >= 256: %.3f\n",
                dispatched.c_str(), largest_ratio, geometric_mean(square_ratios));
  else
    std::printf("\n(built without -DHWPLAN_HAVE_OPENBLAS: no GEMM reference)\n");
  std::printf("load average (1 min) at end: %.2f\n", hwplan::calibrate::detect_host().load_average_1min);
  return 0;
}
