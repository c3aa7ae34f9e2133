// CPU measurement kernels of `hwplan calibrate`: STREAM-style bandwidth, a cache-to-DRAM bandwidth sweep,
// an Eigen GEMM sweep and the cost of a parallel region. Each returns what it measured; turning results into
// a Profile (to_curve) and choosing what to run is the caller's business.
//
// Method, shared by every kernel: one untimed warm-up, then `repetitions` timed runs; `best` is the fastest
// (highest rate), `median` the middle one. Rates are per second in base units: bytes/s or FLOP/s.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/profile.hpp"

namespace hwplan::calibrate {

struct KernelResult {
  std::string kernel;  // "triad", "copy", "sgemm", "dgemm", ...
  std::string shape;   // "3 x 128 MiB", "M=512 N=1024 K=1024"
  double size = 0;     // bytes moved (bandwidth kernels) or FLOPs (GEMM) of one run
  double best = 0;     // highest achieved rate over the repetitions: bytes/s or FLOP/s
  double median = 0;   // median achieved rate
  int repetitions = 0; // timed runs (warm-ups excluded)
};

struct CalibrationOptions {
  bool quick = false;  // smaller sweeps and fewer repetitions (tests, `--quick`)
  int threads = 0;     // 0: every logical CPU this process may run on
  std::function<void(const std::string&)> progress;  // one line per kernel, for stderr; may be empty
  std::string gemm_isa;  // "": the widest this CPU runs; "baseline", "avx2", "avx512" force one where supported
};

// copy (a=b), scale (a=s*b), add (a=b+c), triad (a=b+s*c) over double arrays of at least 4x the total last-level
// cache, each thread first-touching the part it later streams. Bytes are counted as STREAM does:
// 16 per element for copy and scale, 24 for add and triad (write-allocate traffic is not counted).
// Each kernel runs with the baseline loops and with the widest SIMD loops the CPU has; the faster one is kept
// and named at the end of `shape` ("3 x 136 MiB, 2 threads, sse2").
std::vector<KernelResult> cpu_stream(const CalibrationOptions& options);

// triad at working sets (three arrays together) from 16 KiB (L1) to 1 GiB (DRAM); quick: to 128 MiB, fewer points.
// size = the working set = bytes moved per pass. Small sets loop inside one parallel region so that fork/join
// does not dominate, and use fewer threads (no thread gets less than a page of each array). SIMD width as
// cpu_stream: cache-resident sizes need the wide loops to show the caches' real bandwidth.
std::vector<KernelResult> cpu_bandwidth_sweep(const CalibrationOptions& options);

// Eigen GEMM C = A * B (column-major, random non-zero data) on all threads: square 64..4096 (quick: ..1024),
// transformer-like shapes (512 tokens x hidden 1024/4096) and decode shapes (M = 1, 4, 16 against a 4096 x 4096
// weight, GEMV-like and memory-bound). precision: "fp32" or "fp64";
// std::invalid_argument otherwise. size = 2*M*N*K FLOPs. Uses the widest SIMD kernel this CPU supports (see
// cpu_gemm_isa).
std::vector<KernelResult> cpu_gemm(const CalibrationOptions& options, const std::string& precision);

// The shapes cpu_gemm sweeps, and one of them (or any other) on its own. Column-major C (m x n) = A (m x k) * B
// (k x n). Products of at most 2 x 256^3 FLOPs are also timed on one thread and the faster kept; `shape` names
// the kernel and the thread count ("M=64 N=64 K=64, avx2, 1 thread").
struct GemmShape {
  long m = 0, n = 0, k = 0;
};
std::vector<GemmShape> cpu_gemm_shapes(bool quick);
KernelResult cpu_gemm_shape(const CalibrationOptions& options, const std::string& precision, const GemmShape& shape);

// The SIMD variant cpu_gemm dispatches to on this CPU: "avx512", "avx2" or "baseline" (what the compiler
// targets by default; SSE2 on x86-64).
std::string cpu_gemm_isa();

// Median wall time of an empty OpenMP parallel region on all threads (fork + join): the CPU's kernel launch.
// Takes at most about 0.3 s.
double cpu_dispatch_overhead_seconds(int threads = 0);

// Threads a kernel will use for `options.threads` (resolves 0).
int resolve_threads(int threads);

// Results -> a Profile curve: one point per distinct size (the best rate), sorted by size.
std::vector<CurvePoint> to_curve(const std::vector<KernelResult>& results);

}  // namespace hwplan::calibrate
