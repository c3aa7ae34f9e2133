// Calibration kernels in quick mode: results are positive, finite and sensibly ordered; host detection is
// sane. Rates are checked against each other, never against a wall-clock threshold, and the ordering checks run
// on one thread so that a busy CI neighbour (which can stall one of two threads for a whole time slice) cannot
// invert them. About 5 s on 2 cores (10 s under ASan + UBSan).
#include <doctest/doctest.h>

#include <filesystem>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/cpu_backend.hpp"
#include "calibrate/host_info.hpp"
#include "cuda/cuda_kernels.hpp"
#include "test_util.hpp"

using namespace hwplan::calibrate;

// Sanitizers change how fast arithmetic runs relative to memory; speed orderings are checked without them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HWPLAN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define HWPLAN_SANITIZED 1
#endif
#endif
#ifndef HWPLAN_SANITIZED
#define HWPLAN_SANITIZED 0
#endif

namespace {

CalibrationOptions quick_options(int threads) {
  CalibrationOptions o;
  o.quick = true;
  o.threads = threads;
  return o;
}

void check_sane(const std::vector<KernelResult>& results) {
  REQUIRE_FALSE(results.empty());
  for (const KernelResult& r : results) {
    INFO(r.kernel << " " << r.shape);
    CHECK(std::isfinite(r.size));
    CHECK(r.size > 0);
    CHECK(std::isfinite(r.best));
    CHECK(std::isfinite(r.median));
    CHECK(r.median > 0);
    CHECK(r.best >= r.median);
    CHECK(r.repetitions >= 2);
    CHECK_FALSE(r.shape.empty());
  }
}

[[maybe_unused]] const KernelResult& find(const std::vector<KernelResult>& results, const std::string& kernel,
                                          const std::string& shape_prefix = "") {
  const auto it = std::find_if(results.begin(), results.end(), [&](const KernelResult& r) {
    return r.kernel == kernel && r.shape.rfind(shape_prefix, 0) == 0;
  });
  REQUIRE(it != results.end());
  return *it;
}

}  // namespace

TEST_CASE("host info parsers") {
  CHECK(parse_cache_size_bytes("32K") == 32768);
  CHECK(parse_cache_size_bytes("1024K\n") == 1048576);
  CHECK(parse_cache_size_bytes("32M") == 32.0 * 1024 * 1024);
  CHECK(parse_cache_size_bytes("512") == 512);
  CHECK(parse_cache_size_bytes("") == 0);
  CHECK(parse_cache_size_bytes("big") == 0);

  CHECK(parse_meminfo_total_bytes("MemTotal:       24683584 kB\nMemFree:        23175468 kB\n") ==
        24683584.0 * 1024);
  CHECK(parse_meminfo_total_bytes("MemFree: 1 kB\n") == 0);

  // Two sockets x 2 cores x 2 hyperthreads, abridged /proc/cpuinfo.
  std::string cpuinfo;
  for (int cpu = 0; cpu < 8; ++cpu) {
    cpuinfo += "processor\t: " + std::to_string(cpu) + "\n";
    cpuinfo += "model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n";
    cpuinfo += "physical id\t: " + std::to_string(cpu / 4) + "\n";
    cpuinfo += "core id\t\t: " + std::to_string(cpu % 2) + "\n\n";
  }
  const CpuinfoSummary s = parse_cpuinfo(cpuinfo);
  CHECK(s.model == "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
  CHECK(s.logical_cpus == 8);
  CHECK(s.physical_cores == 4);

  // Arm: no model name, no core ids.
  const CpuinfoSummary arm = parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\nprocessor\t: 1\nModel\t: Raspberry Pi 4\n");
  CHECK(arm.model == "Raspberry Pi 4");
  CHECK(arm.logical_cpus == 2);
  CHECK(arm.physical_cores == 2);
}

TEST_CASE("detect_host reports this machine") {
  const HostInfo h = detect_host();
  CHECK_FALSE(h.cpu_model.empty());
  CHECK(h.threads >= 1);
  CHECK(h.cores >= 1);
  CHECK(h.cores <= h.threads);
  CHECK(h.memory_bytes > 64.0 * 1024 * 1024);
  CHECK_FALSE(h.os.empty());
  // Caches may be hidden in a container; where they show, they nest.
  if (h.l1_bytes > 0 && h.l2_bytes > 0) CHECK(h.l2_bytes >= h.l1_bytes);
  if (h.l3_bytes > 0) CHECK(h.llc_total_bytes >= h.l3_bytes);
  CHECK(h.llc_total_bytes >= 0);
}

TEST_CASE("cpu_stream: four STREAM kernels, counted STREAM-style") {
  const auto results = cpu_stream(quick_options(0));
  check_sane(results);
  REQUIRE(results.size() == 4);
  CHECK(results[0].kernel == "copy");
  CHECK(results[3].kernel == "triad");
  // copy and scale move 16 bytes per element, add and triad 24, over the same arrays.
  CHECK(results[3].size == doctest::Approx(results[0].size * 1.5));
  CHECK(results[2].size == results[3].size);
  CHECK(results[1].size == results[0].size);
  // Arrays dwarf the last-level cache (each >= 4x LLC): triad moves >= 3 x 4 x LLC bytes.
  CHECK(results[3].size >= 12 * detect_host().llc_total_bytes * 0.99);
}

TEST_CASE("cpu_bandwidth_sweep: cache-resident triad is at least as fast as DRAM") {
  const auto results = cpu_bandwidth_sweep(quick_options(1));
  check_sane(results);
  REQUIRE(results.size() >= 4);
  for (std::size_t i = 1; i < results.size(); ++i) CHECK(results[i].size > results[i - 1].size);
  CHECK(results.front().size <= 32 * 1024);          // starts L1-resident
  CHECK(results.back().size >= 100.0 * 1024 * 1024);  // ends in DRAM
  // The fastest cache-resident working set against the largest (DRAM): caches are never slower than DRAM.
  // (Compared as the best of the sweep's cache-sized points, and with room for a machine shared with other
  // work, where a single small point can be unlucky.)
  double cached = 0;
  for (const auto& r : results)
    if (r.size <= 4.0 * 1024 * 1024) cached = std::max(cached, r.best);
  CHECK(cached >= 0.5 * results.back().best);
  const auto curve = to_curve(results);
  REQUIRE(curve.size() == results.size());
  CHECK(std::is_sorted(curve.begin(), curve.end(), [](const auto& a, const auto& b) { return a.size < b.size; }));
}

TEST_CASE("cpu_gemm: the sweep, FLOPs = 2MNK, and compute-bound beats memory-bound") {
  // Not "1024^3 beats 64^3": on one Zen 4 core a 64^3 dgemm runs from L1 at peak (46 vs 45 GFLOP/s measured).
  // A GEMV-like M=1 against a 4096 x 4096 weight does 2 FLOPs per weight read, so it is bound by memory
  // bandwidth at several times below a compute-bound 1024^3 on any machine, unless a sanitizer slows the
  // arithmetic 30-fold (Eigen under ASan: 2.6 GFLOP/s), so the ordering is checked only without one.
  const std::string isa = cpu_gemm_isa();
  CHECK((isa == "baseline" || isa == "avx2" || isa == "avx512"));
  const auto shapes = cpu_gemm_shapes(true);
  REQUIRE(shapes.size() >= 5);
  CHECK(std::any_of(shapes.begin(), shapes.end(), [](const GemmShape& s) { return s.m == 512 && s.n == 1024; }));
  CHECK(std::any_of(shapes.begin(), shapes.end(), [](const GemmShape& s) { return s.m == 1; }));

#if HWPLAN_SANITIZED
  // Two small shapes of the sweep's code path, on the dispatched kernel and on the baseline one.
  for (const std::string isa_choice : {"", "baseline"}) {
    CalibrationOptions o = quick_options(1);
    o.gemm_isa = isa_choice;
    const std::vector<KernelResult> results = {cpu_gemm_shape(o, "fp32", {64, 64, 64}),
                                               cpu_gemm_shape(o, "fp64", {1, 256, 256})};
    check_sane(results);
    CHECK(results[0].size == 2.0 * 64 * 64 * 64);
  }
#else
  // fp32: the whole quick sweep on the kernel this CPU dispatches to.
  const auto results = cpu_gemm(quick_options(1), "fp32");
  check_sane(results);
  REQUIRE(results.size() == shapes.size());
  const KernelResult& small = find(results, "sgemm", "M=64 N=64 K=64");
  const KernelResult& large = find(results, "sgemm", "M=1024 N=1024 K=1024");
  const KernelResult& gemv = find(results, "sgemm", "M=1 N=4096 K=4096");
  CHECK(small.size == 2.0 * 64 * 64 * 64);
  CHECK(large.size == 2.0 * 1024 * 1024 * 1024);
  CHECK(large.best > gemv.best);
  CHECK(large.shape.find(isa) != std::string::npos);

  // fp64 on the baseline (SSE2) kernel, so that both builds of Eigen run: the same ordering.
  CalibrationOptions o = quick_options(1);
  o.gemm_isa = "baseline";
  const KernelResult dlarge = cpu_gemm_shape(o, "fp64", {1024, 1024, 1024});
  const KernelResult dgemv = cpu_gemm_shape(o, "fp64", {1, 4096, 4096});
  check_sane({dlarge, dgemv});
  CHECK(dlarge.kernel == "dgemm");
  CHECK(dlarge.shape.find("baseline") != std::string::npos);
  CHECK(dlarge.best > dgemv.best);
#endif
  CHECK_THROWS_AS(cpu_gemm(quick_options(1), "fp16"), std::invalid_argument);
  CHECK_THROWS_AS(cpu_gemm_shape(quick_options(1), "fp32", {0, 8, 8}), std::invalid_argument);
}

TEST_CASE("cpu_dispatch_overhead_seconds is a small positive time") {
  const double t = cpu_dispatch_overhead_seconds();
  CHECK(std::isfinite(t));
  CHECK(t > 0);
  CHECK(t < 1.0);  // not a speed assertion: a fork/join measured in seconds would mean a unit error
}

TEST_CASE("to_curve keeps the best rate per size, sorted") {
  const std::vector<KernelResult> results = {
      {"sgemm", "b", 200, 5, 4, 3}, {"sgemm", "a", 100, 2, 1, 3}, {"sgemm", "c", 200, 7, 6, 3}};
  const auto curve = to_curve(results);
  REQUIRE(curve.size() == 2);
  CHECK(curve[0].size == 100);
  CHECK(curve[0].achieved == 2);
  CHECK(curve[1].size == 200);
  CHECK(curve[1].achieved == 7);
}

// The CUDA backend is a plugin loaded on first use (src/cuda/cuda_loader.cpp), so this runs in every build: without
// the plugin or a GPU the functions answer empty with a reason; on a GPU machine the kernels run.
TEST_CASE("GPU kernels: empty with a reason without a GPU, sane numbers with one") {
  namespace cu = hwplan::cuda;
  const auto gpus = cu::list_gpus();
  if (gpus.empty()) {
    CHECK_FALSE(cu::last_error().empty());
    CHECK(cu::gpu_stream(0, true).empty());
    CHECK(cu::gpu_bandwidth_sweep(0, true).empty());
    CHECK(cu::gpu_gemm(0, "bf16", true).empty());
    CHECK(cu::gpu_launch_latency_seconds(0) == 0);
    CHECK_FALSE(cu::last_error().empty());
    return;
  }
  CHECK(gpus[0].sm_count > 0);
  CHECK(gpus[0].memory_bytes > 0);
  CHECK(cu::gpu_stream(static_cast<int>(gpus.size()), true).empty());  // no such device
  const auto stream = cu::gpu_stream(0, true);
  INFO(cu::last_error());
  REQUIRE(stream.size() == 7);  // copy scale add triad, memcpy d2d h2d d2h
  for (const auto& r : stream) CHECK((r.best >= r.median && r.median > 0 && std::isfinite(r.best)));
  const auto gemm = cu::gpu_gemm(0, "bf16", true);
  REQUIRE(gemm.size() >= 3);
  CHECK(gemm[2].best > gemm[0].best);  // 4096^3 vs 256^3
  CHECK(cu::gpu_gemm(0, "int3", true).empty());
  const double latency = cu::gpu_launch_latency_seconds(0);
  CHECK((latency > 0 && latency < 1));
}

TEST_CASE("calibrate refuses an output path it cannot write before it measures anything") {
  auto r = ::hwplan::test::run_hwplan("calibrate --backend cpu --quick -o /nonexistent-hwplan-dir/profile.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("'--output'") != std::string::npos);
  CHECK(r.err.find("is not a directory") != std::string::npos);
}

TEST_CASE("a CUDA device index where no CUDA device is measured is refused, not the CPU calibrated under its name") {
  auto cpu = ::hwplan::test::run_hwplan("calibrate --backend cpu --device-index 0 --quick -o /tmp/hwplan-never-written.yaml");
  CHECK(cpu.exit_code == 2);
  CHECK(cpu.err.find("'--device-index'") != std::string::npos);
  // auto: no GPU here (refused as naming a CUDA device) or too few (out of range) on a GPU machine; either way exit 2.
  auto far = ::hwplan::test::run_hwplan("calibrate --device-index 4096 --quick -o /tmp/hwplan-never-written.yaml");
  CHECK(far.exit_code == 2);
  CHECK(far.err.find("'--device-index'") != std::string::npos);
  auto validate = ::hwplan::test::run_hwplan("validate --backend cpu --device-index 1 --quick");
  CHECK(validate.exit_code == 2);
  CHECK(validate.err.find("'--device-index'") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists("/tmp/hwplan-never-written.yaml"));
}
