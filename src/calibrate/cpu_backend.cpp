// CPU measurement kernels: STREAM, a bandwidth sweep, an Eigen GEMM sweep and the parallel-region overhead.
//
// This file is compiled more than once. Built plainly it is the whole backend, GEMM kernel included, for the
// compiler's default target (SSE2 on x86-64), which is what CI machines and old CPUs can run. Built again with
// -DHWPLAN_GEMM_VARIANT_AVX2 -mavx2 -mfma (and -DHWPLAN_GEMM_VARIANT_AVX512 -mavx512f -mavx512dq -mavx512vl
// -mavx512bw -mavx2 -mfma) it holds only that variant's GEMM kernel; the plain build, told with
// -DHWPLAN_GEMM_SIMD_VARIANTS=1 that they are linked in, picks one at run time with __builtin_cpu_supports.
// On a Zen 4, Eigen's SSE2 kernels reach 0.28-0.50 of OpenBLAS sgemm, its AVX2/AVX-512 ones 0.84-1.10
// (bench/README.md).
//
// One binary with Eigen compiled under several sets of flags breaks the one-definition rule unless each set's
// instantiations have names of their own: otherwise the linker keeps one `gebp_kernel<float,...>` for all of
// them, and a baseline caller can land in AVX-512 code (SIGILL) or the reverse. So a variant build renames
// Eigen's namespace (`#define Eigen hwplan_eigen_avx2`), and its kernel takes raw pointers and touches no other
// template: `nm -C --defined-only` on a variant object shows hwplan_eigen_* symbols and the one entry point.
#include <cstddef>

#define HWPLAN_CAT2(a, b) a##b
#define HWPLAN_CAT(a, b) HWPLAN_CAT2(a, b)

#if defined(HWPLAN_GEMM_VARIANT_AVX512)
#if !defined(__AVX512F__) || !defined(__AVX512DQ__) || !defined(__AVX512VL__) || !defined(__AVX512BW__) || \
    !defined(__FMA__)
#error "HWPLAN_GEMM_VARIANT_AVX512 needs -mavx512f -mavx512dq -mavx512vl -mavx512bw -mavx2 -mfma"
#endif
#define HWPLAN_GEMM_ISA avx512
#elif defined(HWPLAN_GEMM_VARIANT_AVX2)
#if !defined(__AVX2__) || !defined(__FMA__)
#error "HWPLAN_GEMM_VARIANT_AVX2 needs -mavx2 -mfma"
#endif
#define HWPLAN_GEMM_ISA avx2
#else
#define HWPLAN_GEMM_ISA baseline
#endif

#if defined(HWPLAN_GEMM_VARIANT_AVX512) || defined(HWPLAN_GEMM_VARIANT_AVX2)
#define Eigen HWPLAN_CAT(hwplan_eigen_, HWPLAN_GEMM_ISA)
#endif
#include <Eigen/Core>

// --- the GEMM kernel, one per build of this file ---------------------------------------------------------
namespace hwplan::calibrate::detail {

// C (m x n) = A (m x k) * B (k x n), column-major, on `threads` OpenMP threads.
void HWPLAN_CAT(gemm_, HWPLAN_GEMM_ISA)(bool fp64, long m, long n, long k, const void* a, const void* b, void* c,
                                        int threads) {
  Eigen::setNbThreads(threads);
  if (fp64) {
    using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;
    Eigen::Map<const Mat> A(static_cast<const double*>(a), m, k), B(static_cast<const double*>(b), k, n);
    Eigen::Map<Mat> C(static_cast<double*>(c), m, n);
    C.noalias() = A * B;
  } else {
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;
    Eigen::Map<const Mat> A(static_cast<const float*>(a), m, k), B(static_cast<const float*>(b), k, n);
    Eigen::Map<Mat> C(static_cast<float*>(c), m, n);
    C.noalias() = A * B;
  }
}

}  // namespace hwplan::calibrate::detail

#if !defined(HWPLAN_GEMM_VARIANT_AVX512) && !defined(HWPLAN_GEMM_VARIANT_AVX2)
// --- everything else: the plain build only ----------------------------------------------------------------
#include "calibrate/cpu_backend.hpp"
#include "core/strings.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <stdexcept>

#include "calibrate/host_info.hpp"

namespace hwplan::calibrate {
namespace detail {
using GemmFn = void (*)(bool, long, long, long, const void*, const void*, void*, int);
#if HWPLAN_GEMM_SIMD_VARIANTS
void gemm_avx2(bool fp64, long m, long n, long k, const void* a, const void* b, void* c, int threads);
void gemm_avx512(bool fp64, long m, long n, long k, const void* a, const void* b, void* c, int threads);
#endif
}  // namespace detail

namespace {

// --- timing ---------------------------------------------------------------------------------------------

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Samples are kept short and numerous: on a machine shared with other work, a parallel region now and then
// waits a whole time slice (milliseconds) for a descheduled thread; measured here, one 6 us two-thread GEMM
// call in ten took 16 ms. A long sample almost surely contains such a stall, a short one usually does not,
// so the best (and the median) of many short samples still see the machine's real speed. On a quiet machine
// short samples cost nothing: the clock is read in ~20 ns.
struct Budget {
  double min_sample_seconds;  // a timed sample repeats the kernel until it lasts this long
  double target_seconds;      // aim for this much timed work per kernel...
  int min_reps;               // ...but never fewer samples than this
  int max_reps;               // ...nor more than this
};

Budget sweep_budget(bool quick) { return quick ? Budget{50e-6, 0.02, 5, 100} : Budget{100e-6, 0.2, 10, 500}; }
Budget stream_budget(bool quick) { return quick ? Budget{0, 0, 5, 5} : Budget{0, 0, 10, 10}; }  // STREAM's 10
Budget gemm_budget(bool quick) { return quick ? Budget{20e-6, 0.05, 2, 100} : Budget{50e-6, 0.5, 3, 500}; }

// Runs run_batch(1) once untimed (warm-up: page faults, thread start, cache state), sizes a batch so one
// sample lasts min_sample_seconds, then returns the seconds of one kernel run in each timed sample.
// run_batch(n) runs the kernel n times back to back.
template <typename RunBatch>
std::vector<double> time_kernel(RunBatch&& run_batch, const Budget& budget) {
  const auto time_batch = [&](long batch) {
    const double t0 = now_seconds();
    run_batch(batch);
    return now_seconds() - t0;
  };
  run_batch(1L);
  long batch = 1;
  double t = 0;
  for (;;) {
    t = time_batch(batch);
    // A short run is timed three times and the fastest kept: one thread woken late (or a busy neighbour)
    // can stretch a single run past min_sample_seconds and leave fork/join to dominate every sample.
    for (int look = 1; look < 3 && t < 10 * budget.min_sample_seconds; ++look) t = std::min(t, time_batch(batch));
    if (t >= budget.min_sample_seconds || batch >= (1L << 30)) break;
    const double grow = t > 0 ? budget.min_sample_seconds / t * 1.25 : 1000.0;
    batch = static_cast<long>(std::min<double>(static_cast<double>(batch) * std::clamp(grow, 2.0, 1000.0), 1L << 30));
  }
  // Sample until target_seconds have passed (at least min_reps, at most max_reps samples): a burst of
  // contention then costs samples, not the result.
  std::vector<double> seconds;
  seconds.reserve(static_cast<std::size_t>(budget.max_reps));
  const double deadline = now_seconds() + budget.target_seconds;
  while (static_cast<int>(seconds.size()) < budget.max_reps &&
         (static_cast<int>(seconds.size()) < budget.min_reps || now_seconds() < deadline))
    seconds.push_back(time_batch(batch) / static_cast<double>(batch));
  return seconds;
}

KernelResult make_result(std::string kernel, std::string shape, double size, std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  const double median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  KernelResult r;
  r.kernel = std::move(kernel);
  r.shape = std::move(shape);
  r.size = size;
  r.best = size / std::max(seconds.front(), 1e-12);  // a sample is >= 20 us; the floor only guards against 0
  r.median = size / std::max(median, 1e-12);
  r.repetitions = static_cast<int>(n);
  return r;
}

void report(const CalibrationOptions& options, const KernelResult& r, bool flops) {
  if (!options.progress) return;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-8s %-32s best %8.1f %s, median %8.1f (%d runs)", r.kernel.c_str(),
                r.shape.c_str(), r.best / 1e9, flops ? "GFLOP/s" : "GB/s   ", r.median / 1e9, r.repetitions);
  options.progress(buf);
}

// --- bandwidth kernels ----------------------------------------------------------------------------------

// The loops exist once per SIMD width, and every bandwidth measurement runs the baseline and the widest one
// this CPU has and keeps the faster: on the Zen 4 this was tuned on, AVX2/AVX-512 loops ran cache-resident
// triads up to 3.7x faster than SSE2 ones (322 vs 87 GB/s at 16 KiB), while from DRAM the SSE2 loop was the
// fastest (AVX-512 lost ~15%). They are plain loops with a target attribute and no templates, so unlike the
// GEMM variants they cannot clash between translation units.
#define HWPLAN_STREAM_LOOPS(isa, attributes)                                                                    \
  attributes void copy_##isa(double* __restrict a, const double* __restrict b, double, std::size_t n) {        \
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i];                                                           \
  }                                                                                                            \
  attributes void scale_##isa(double* __restrict a, const double* __restrict b, double s, std::size_t n) {     \
    for (std::size_t i = 0; i < n; ++i) a[i] = s * b[i];                                                       \
  }                                                                                                            \
  attributes void add_##isa(double* __restrict a, const double* __restrict b, const double* __restrict c,      \
                            std::size_t n) {                                                                   \
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + c[i];                                                    \
  }                                                                                                            \
  attributes void triad_##isa(double* __restrict a, const double* __restrict b, const double* __restrict c,    \
                              double s, std::size_t n) {                                                       \
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];                                                \
  }

HWPLAN_STREAM_LOOPS(baseline, __attribute__((noinline)))
#if defined(__x86_64__) && defined(__GNUC__)
#define HWPLAN_X86_STREAM_LOOPS 1
HWPLAN_STREAM_LOOPS(avx2, __attribute__((noinline, target("avx2"))))
HWPLAN_STREAM_LOOPS(avx512, __attribute__((noinline, target("avx512f"))))
#endif

struct StreamLoops {
  const char* isa;
  void (*copy)(double*, const double*, double, std::size_t);
  void (*scale)(double*, const double*, double, std::size_t);
  void (*add)(double*, const double*, const double*, std::size_t);
  void (*triad)(double*, const double*, const double*, double, std::size_t);
};

// The baseline loops, then the widest ones this CPU runs (if wider).
std::vector<StreamLoops> stream_loops() {
  std::vector<StreamLoops> loops = {{"sse2", copy_baseline, scale_baseline, add_baseline, triad_baseline}};
#if HWPLAN_X86_STREAM_LOOPS
  __builtin_cpu_init();  // idempotent; needed only before main, but cheap
  if (__builtin_cpu_supports("avx512f"))
    loops.push_back({"avx512", copy_avx512, scale_avx512, add_avx512, triad_avx512});
  else if (__builtin_cpu_supports("avx2"))
    loops.push_back({"avx2", copy_avx2, scale_avx2, add_avx2, triad_avx2});
#else
  loops.front().isa = "baseline";
#endif
  return loops;
}

// Thread t's share of n elements, in whole 64-byte lines so that no two threads write the same line.
struct Range {
  std::size_t begin, end;
};
Range thread_range(std::size_t n, int t, int nt) {
  const std::size_t lines = (n + 7) / 8;
  const std::size_t per = lines / static_cast<std::size_t>(nt);
  const std::size_t rem = lines % static_cast<std::size_t>(nt);
  const auto ut = static_cast<std::size_t>(t);
  const std::size_t first = ut * per + std::min(ut, rem);
  const std::size_t last = first + per + (ut < rem ? 1 : 0);
  return {std::min(n, first * 8), std::min(n, last * 8)};
}

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

// Uninitialised, page-aligned: the pages are placed by whichever thread first writes them.
Array allocate_doubles(std::size_t n) {
  const std::size_t bytes = ((n * sizeof(double) + 4095) / 4096) * 4096;
  auto* p = static_cast<double*>(std::aligned_alloc(4096, bytes));
  if (!p) throw std::bad_alloc();
  return Array(p);
}

enum class Stream { kCopy, kScale, kAdd, kTriad };

struct Arrays {
  std::size_t n = 0;
  int threads = 1;
  Array a, b, c;
};

// Allocates three arrays of n doubles and first-touches them with the partition the kernels use.
Arrays make_arrays(std::size_t n, int threads) {
  Arrays x;
  x.n = n;
  x.threads = threads;
  x.a = allocate_doubles(n);
  x.b = allocate_doubles(n);
  x.c = allocate_doubles(n);
  double* a = x.a.get();
  double* b = x.b.get();
  double* c = x.c.get();
#pragma omp parallel num_threads(threads)
  {
    const Range r = thread_range(n, omp_get_thread_num(), omp_get_num_threads());
    for (std::size_t i = r.begin; i < r.end; ++i) {
      a[i] = 1.0;
      b[i] = 2.0;
      c[i] = 0.5;
    }
  }
  return x;
}

// `passes` back-to-back passes of one kernel inside a single parallel region. Each thread streams its own
// lines every pass, so no barrier is needed between passes; the empty asm keeps the compiler from merging
// passes that store the same values.
void run_passes(Arrays& x, Stream kernel, const StreamLoops& loops, long passes) {
  double* a = x.a.get();
  double* b = x.b.get();
  double* c = x.c.get();
  const std::size_t n = x.n;
  constexpr double s = 3.0;
#pragma omp parallel num_threads(x.threads)
  {
    const Range r = thread_range(n, omp_get_thread_num(), omp_get_num_threads());
    const std::size_t len = r.end - r.begin;
    for (long p = 0; p < passes; ++p) {
      switch (kernel) {  // STREAM's data flow: c = a, b = s*c, c = a + b, a = b + s*c
        case Stream::kCopy: loops.copy(c + r.begin, a + r.begin, s, len); break;
        case Stream::kScale: loops.scale(b + r.begin, c + r.begin, s, len); break;
        case Stream::kAdd: loops.add(c + r.begin, a + r.begin, b + r.begin, len); break;
        case Stream::kTriad: loops.triad(a + r.begin, b + r.begin, c + r.begin, s, len); break;
      }
      asm volatile("" ::: "memory");
    }
  }
}

// Times one kernel with each SIMD width and keeps the faster (by best rate); its shape names the width.
KernelResult time_stream_kernel(Arrays& x, Stream kernel, const char* name, double bytes, std::string shape,
                                const Budget& budget) {
  KernelResult best;
  for (const StreamLoops& loops : stream_loops()) {
    auto seconds = time_kernel([&](long passes) { run_passes(x, kernel, loops, passes); }, budget);
    KernelResult r = make_result(name, shape + ", " + loops.isa, bytes, std::move(seconds));
    if (r.best > best.best) best = std::move(r);
  }
  return best;
}

// A triad pass rewrites a from b and c, so values stay bounded; guard against a kernel that did nothing.
bool arrays_sane(const Arrays& x) {
  const std::size_t probe[] = {0, x.n / 2, x.n - 1};
  for (std::size_t i : probe)
    if (!std::isfinite(x.a[i]) || x.a[i] == 0) return false;
  return true;
}

}  // namespace

int resolve_threads(int threads) { return threads > 0 ? threads : std::max(1, omp_get_num_procs()); }

std::vector<KernelResult> cpu_stream(const CalibrationOptions& options) {
  const HostInfo host = detect_host();
  const int threads = resolve_threads(options.threads);
  // STREAM's rule: each array at least 4x the caches, so that no pass is served from a previous one's lines.
  const double cache_bytes = std::max(host.llc_total_bytes + host.l2_bytes * host.cores, 8.0 * 1024 * 1024);
  double array_bytes = std::max(4.0 * cache_bytes, 64.0 * 1024 * 1024);
  if (host.memory_bytes > 0) array_bytes = std::min(array_bytes, host.memory_bytes / 8);  // 3 arrays <= 3/8 of RAM
  const auto n = static_cast<std::size_t>(array_bytes / sizeof(double));
  Arrays x = make_arrays(n, threads);

  const Budget budget = stream_budget(options.quick);
  const std::string shape = "3 x " + binary_size(static_cast<double>(n) * sizeof(double)) + ", " +
                            std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  const struct {
    const char* name;
    Stream kernel;
    double bytes_per_element;
  } kernels[] = {{"copy", Stream::kCopy, 16}, {"scale", Stream::kScale, 16}, {"add", Stream::kAdd, 24},
                 {"triad", Stream::kTriad, 24}};
  std::vector<KernelResult> results;
  for (const auto& k : kernels) {
    results.push_back(
        time_stream_kernel(x, k.kernel, k.name, k.bytes_per_element * static_cast<double>(n), shape, budget));
    report(options, results.back(), false);
  }
  if (!arrays_sane(x)) throw std::runtime_error("cpu_stream: kernel produced non-finite values");
  return results;
}

std::vector<KernelResult> cpu_bandwidth_sweep(const CalibrationOptions& options) {
  const HostInfo host = detect_host();
  const int max_threads = resolve_threads(options.threads);
  double max_bytes = options.quick ? 128.0 * 1024 * 1024 : 1024.0 * 1024 * 1024;
  if (host.memory_bytes > 0) max_bytes = std::min(max_bytes, host.memory_bytes / 4);
  std::vector<double> sizes;
  for (double ws = 16.0 * 1024; ws <= max_bytes; ws *= options.quick ? 4 : 2) sizes.push_back(ws);
  if (sizes.empty() || sizes.back() < max_bytes) sizes.push_back(max_bytes);

  const Budget budget = sweep_budget(options.quick);
  std::vector<KernelResult> results;
  for (double ws : sizes) {
    const auto n = static_cast<std::size_t>(ws / (3 * sizeof(double)));
    // No thread gets less than a page of each array: below that the split costs more than it gains.
    const int threads = std::clamp(static_cast<int>(static_cast<double>(n) * sizeof(double) / 4096.0), 1, max_threads);
    Arrays x = make_arrays(n, threads);
    const std::string shape = "3 x " + binary_size(static_cast<double>(n) * sizeof(double)) + ", " +
                              std::to_string(threads) + (threads == 1 ? " thread" : " threads");
    results.push_back(time_stream_kernel(x, Stream::kTriad, "triad", 24.0 * static_cast<double>(n), shape, budget));
    report(options, results.back(), false);
    if (!arrays_sane(x)) throw std::runtime_error("cpu_bandwidth_sweep: kernel produced non-finite values");
  }
  return results;
}

namespace {

struct GemmKernel {
  const char* isa;
  detail::GemmFn fn;
};

bool isa_supported(const std::string& isa) {
  if (isa == "baseline") return true;
#if HWPLAN_GEMM_SIMD_VARIANTS && defined(__x86_64__) && defined(__GNUC__)
  // __builtin_cpu_supports also checks that the OS saves the wide registers (XCR0).
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == "avx2") return avx2;
  if (isa == "avx512")
    return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
#endif
  return false;
}

GemmKernel gemm_kernel(const std::string& requested) {
#if HWPLAN_GEMM_SIMD_VARIANTS
  const GemmKernel all[] = {{"avx512", detail::gemm_avx512}, {"avx2", detail::gemm_avx2},
                            {"baseline", detail::gemm_baseline}};
#else
  const GemmKernel all[] = {{"baseline", detail::gemm_baseline}};
#endif
  for (const GemmKernel& k : all)
    if ((requested.empty() || requested == k.isa) && isa_supported(k.isa)) return k;
  return {"baseline", detail::gemm_baseline};
}

constexpr double kSmallGemmFlops = 2.0 * 256 * 256 * 256;  // at or below: also try one thread

// Uniform in [-1, -0.1] u [0.1, 1]: non-zero, of both signs, so that no product is trivially skipped and sums
// stay small.
template <typename T>
std::vector<T> random_matrix(std::size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  std::vector<T> v(count);
  for (T& x : v) x = static_cast<T>(rng() & 1 ? magnitude(rng) : -magnitude(rng));
  return v;
}

template <typename T>
KernelResult run_gemm(const GemmKernel& kernel, const GemmShape& s, int threads, const Budget& budget,
                      std::mt19937_64& rng) {
  const auto a = random_matrix<T>(static_cast<std::size_t>(s.m * s.k), rng);
  const auto b = random_matrix<T>(static_cast<std::size_t>(s.k * s.n), rng);
  std::vector<T> c(static_cast<std::size_t>(s.m * s.n));
  constexpr bool fp64 = sizeof(T) == 8;
  auto seconds = time_kernel(
      [&](long batch) {
        for (long i = 0; i < batch; ++i) kernel.fn(fp64, s.m, s.n, s.k, a.data(), b.data(), c.data(), threads);
      },
      budget);
  if (!std::isfinite(static_cast<double>(c.front())) || !std::isfinite(static_cast<double>(c.back())))
    throw std::runtime_error("cpu_gemm: result is not finite");
  const std::string shape = "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" +
                            std::to_string(s.k) + ", " + kernel.isa + ", " + std::to_string(threads) +
                            (threads == 1 ? " thread" : " threads");
  return make_result(fp64 ? "dgemm" : "sgemm", shape, 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) *
                                                       static_cast<double>(s.k),
                     std::move(seconds));
}

}  // namespace

std::string cpu_gemm_isa() { return gemm_kernel("").isa; }

std::vector<GemmShape> cpu_gemm_shapes(bool quick) {
  std::vector<GemmShape> shapes;
  for (long n = 64; n <= (quick ? 1024 : 4096); n *= 2) shapes.push_back({n, n, n});
  // A transformer layer at 512 tokens, hidden 1024: attention projections, then (full sweep) MLP up and down at
  // 4x and a hidden-4096 projection.
  shapes.push_back({512, 1024, 1024});
  if (!quick) {
    shapes.push_back({512, 4096, 1024});
    shapes.push_back({512, 1024, 4096});
    shapes.push_back({512, 4096, 4096});
  }
  // Decoding: a handful of tokens against a 4096 x 4096 weight (64 MiB in fp32, more than most last-level
  // caches), bound by reading the weight like a GEMV.
  for (long m : {1L, 4L, 16L}) shapes.push_back({m, 4096, 4096});
  return shapes;
}

KernelResult cpu_gemm_shape(const CalibrationOptions& options, const std::string& precision, const GemmShape& shape) {
  if (precision != "fp32" && precision != "fp64")
    throw std::invalid_argument("cpu_gemm: precision must be fp32 or fp64, got '" + precision + "'");
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) throw std::invalid_argument("cpu_gemm: empty shape");
  const int threads = resolve_threads(options.threads);
  const GemmKernel kernel = gemm_kernel(options.gemm_isa);
  const Budget budget = gemm_budget(options.quick);
  std::mt19937_64 rng(20240611 + static_cast<std::uint64_t>(shape.m * 31 + shape.n * 17 + shape.k));
  const auto run = [&](int t) {
    return precision == "fp64" ? run_gemm<double>(kernel, shape, t, budget, rng)
                               : run_gemm<float>(kernel, shape, t, budget, rng);
  };
  KernelResult r = run(threads);
  // Eigen splits even a 64^3 product across threads, where fork/join and shared packing cost more than they
  // save (2 threads: 29 GFLOP/s, 1 thread: 90, OpenBLAS, which stays on one thread: 110). Small products
  // also run on one thread and keep the faster, as a tuned library would.
  if (threads > 1 && r.size <= kSmallGemmFlops) {
    KernelResult single = run(1);
    if (single.best > r.best) r = std::move(single);
  }
  report(options, r, true);
  return r;
}

std::vector<KernelResult> cpu_gemm(const CalibrationOptions& options, const std::string& precision) {
  std::vector<KernelResult> results;
  for (const GemmShape& shape : cpu_gemm_shapes(options.quick))
    results.push_back(cpu_gemm_shape(options, precision, shape));
  return results;
}

double cpu_dispatch_overhead_seconds(int threads) {
  const int n = resolve_threads(threads);
  const auto empty_region = [n] {
#pragma omp parallel num_threads(n)
    { asm volatile("" ::: "memory"); }
  };
  // Up to 1001 samples or a quarter of a second, whichever comes first: on a busy machine one region can wait
  // a whole time slice for its second thread, and thousands of those would take minutes.
  constexpr double kBudgetSeconds = 0.25;
  const double warm_until = now_seconds() + 0.05;
  for (int i = 0; i < 200 && now_seconds() < warm_until; ++i) empty_region();  // start the team
  std::vector<double> seconds;
  seconds.reserve(1001);
  const double stop = now_seconds() + kBudgetSeconds;
  while (seconds.size() < 1001 && (seconds.size() < 21 || now_seconds() < stop)) {
    const double t0 = now_seconds();
    empty_region();
    seconds.push_back(now_seconds() - t0);
  }
  const auto mid = seconds.begin() + static_cast<std::ptrdiff_t>(seconds.size() / 2);
  std::nth_element(seconds.begin(), mid, seconds.end());
  return *mid;
}

std::vector<CurvePoint> to_curve(const std::vector<KernelResult>& results) {
  std::map<double, double> best_by_size;
  for (const KernelResult& r : results) {
    if (!(r.size > 0) || !std::isfinite(r.best)) continue;
    double& best = best_by_size[r.size];
    best = std::max(best, r.best);
  }
  std::vector<CurvePoint> curve;
  curve.reserve(best_by_size.size());
  for (const auto& [size, achieved] : best_by_size) curve.push_back({size, achieved});
  return curve;
}

}  // namespace hwplan::calibrate
#endif
