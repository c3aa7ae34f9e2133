#include "calibrate/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "calibrate/cpu_backend.hpp"
#include "calibrate/host_info.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_kernels.hpp"

namespace hwplan::calibrate {
namespace {

ProfileMeasurement record(const std::string& kernel, const std::string& shape, double size, double best, double median,
                          int reps) {
  return ProfileMeasurement{kernel, shape, size, best, median, reps};
}

double best_of(const std::vector<KernelResult>& results, const std::string& kernel) {
  double best = 0;
  for (const auto& r : results)
    if (r.kernel == kernel) best = std::max(best, r.best);
  return best;
}

// The GEMM efficiency curve is indexed by FLOPs, so it takes only compute-bound shapes; skinny (decode, GEMV-like)
// shapes are memory-bound and the roofline's bandwidth term covers them.
bool compute_bound_shape(const std::string& shape) {
  auto pos = shape.find("M=");
  if (pos == std::string::npos) return true;
  return std::strtol(shape.c_str() + pos + 2, nullptr, 10) >= 64;
}

std::vector<KernelResult> compute_bound(const std::vector<KernelResult>& results) {
  std::vector<KernelResult> out;
  for (const auto& r : results)
    if (compute_bound_shape(r.shape)) out.push_back(r);
  return out;
}

std::string yaml_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\\\"") : std::string(1, c);
  return out + "\"";
}

CalibrationRun calibrate_cpu(const CalibrateOptions& o) {
  CalibrationOptions co;
  co.quick = o.quick;
  co.progress = o.progress;
  HostInfo host = detect_host();
  CalibrationRun run;
  Profile& p = run.profile;
  p.device_name = host.cpu_model;
  p.backend = "cpu";
  p.host = host.hostname;
  p.date = today();
  p.host_detail = fmt::format("{}; {} cores / {} threads; L1d {:.0f} KiB, L2 {:.0f} KiB, LLC {:.0f} MiB total; {:.1f} GiB RAM; {}",
                              host.cpu_model, host.cores, host.threads, host.l1_bytes / kKiB, host.l2_bytes / kKiB,
                              host.llc_total_bytes / kMiB, host.memory_bytes / kGiB, host.os);
  if (host.load_average_1min > 0.5 * std::max(1, host.threads) && o.progress)
    o.progress(fmt::format("warning: load average {:.1f} on {} threads: other work competes and results will read low",
                           host.load_average_1min, host.threads));
  auto stream = cpu_stream(co);
  auto sweep = cpu_bandwidth_sweep(co);
  auto sgemm = cpu_gemm(co, "fp32");
  auto dgemm = cpu_gemm(co, "fp64");
  p.kernel_launch_seconds = cpu_dispatch_overhead_seconds();
  for (const auto* set : {&stream, &sweep, &sgemm, &dgemm})
    for (const auto& r : *set) p.measurements.push_back(record(r.kernel, r.shape, r.size, r.best, r.median, r.repetitions));
  p.bandwidth = to_curve(sweep);
  p.gemm[Precision::kFp32] = to_curve(compute_bound(sgemm));
  p.gemm[Precision::kFp64] = to_curve(compute_bound(dgemm));
  run.summary.push_back({"STREAM triad", best_of(stream, "triad"), 0, "GB/s"});
  run.summary.push_back({"STREAM copy", best_of(stream, "copy"), 0, "GB/s"});
  run.summary.push_back({"fp32 GEMM (" + cpu_gemm_isa() + ")", best_of(sgemm, "sgemm"), 0, "TFLOP/s"});
  run.summary.push_back({"fp64 GEMM (" + cpu_gemm_isa() + ")", best_of(dgemm, "dgemm"), 0, "TFLOP/s"});
  run.summary.push_back({"parallel-region overhead", p.kernel_launch_seconds, 0, "us"});
  // CPUs are not in the catalog: a stub with what was measured, for the user to complete.
  run.catalog_stub = fmt::format(
      "# Catalog stub written by hwplan calibrate for a device not in the catalog. Fill in the <fill in> fields with\n"
      "# datasheet figures and their sources, then use it with --catalog DIR.\n"
      "id: local-cpu\nname: {}\naliases: [{}]\nvendor: <fill in>  # one of nvidia, amd, intel, google, huawei, qualcomm, apple\n"
      "class: workstation\narchitecture: <fill in>\narchitecture_family: <fill in>  # lower-case, e.g. zen4, sapphire-rapids\nrelease_year: <fill in>\nmemory_gib: {:.0f}\nmemory_type: <fill in>\n"
      "memory_bandwidth_gb_per_s: {:.1f}  # measured STREAM triad; replace with the datasheet peak\n"
      "peak_tflops: {{fp32: {:.3f}, fp64: {:.3f}}}  # measured; replace with the datasheet peak\n"
      "tdp_w: <fill in>\nhost_link: {{type: soc}}\ninterconnect: {{type: none, bandwidth_bidirectional_gb_per_s: 0, domain_size: 1}}\n"
      "software: [onnxruntime]\ntraining: true\nconfidence: low\nsources:\n  memory_gib: \"measured by hwplan calibrate, {}\"\n"
      "  memory_bandwidth_gb_per_s: \"measured by hwplan calibrate, {}\"\n  peak_tflops: \"measured by hwplan calibrate, {}\"\n",
      host.cpu_model, yaml_quote(host.cpu_model), host.memory_bytes / kGiB, best_of(stream, "triad") / kGB,
      best_of(sgemm, "sgemm") / kTera, best_of(dgemm, "dgemm") / kTera, p.date, p.date, p.date);
  return run;
}

CalibrationRun calibrate_gpu(const io::Registry& registry, const cuda::GpuInfo& gpu, int index, const CalibrateOptions& o) {
  CalibrationRun run;
  Profile& p = run.profile;
  p.device_name = gpu.name;
  p.backend = "cuda";
  p.host = detect_host().hostname;
  p.date = today();
  p.host_detail = fmt::format("{}; {} SMs at {:.0f} MHz; {:.1f} GiB; L2 {:.0f} MiB; compute capability {}.{}; driver CUDA {}.{}; runtime {}.{}",
                              gpu.name, gpu.sm_count, gpu.clock_mhz, gpu.memory_bytes / kGiB, gpu.l2_bytes / kMiB, gpu.cc_major,
                              gpu.cc_minor, gpu.driver_version / 1000, gpu.driver_version % 1000 / 10,
                              gpu.runtime_version / 1000, gpu.runtime_version % 1000 / 10);
  const Device* d = registry.find_device(gpu.name);
  if (d) p.catalog_id = d->id;
  auto progress = [&](const cuda::GpuKernelResult& r) {
    if (o.progress)
      o.progress(fmt::format("[gpu {}] {} {}: {:.1f} {}", index, r.kernel, r.shape,
                             r.kernel.rfind("gemm", 0) == 0 ? r.best / kTera : r.best / kGB,
                             r.kernel.rfind("gemm", 0) == 0 ? "TFLOP/s" : "GB/s"));
  };
  auto stream = cuda::gpu_stream(index, o.quick, progress);
  auto sweep = cuda::gpu_bandwidth_sweep(index, o.quick, progress);
  p.kernel_launch_seconds = cuda::gpu_launch_overhead_seconds(index);
  p.sync_latency_seconds = cuda::gpu_launch_latency_seconds(index);
  std::vector<CurvePoint> bw;
  for (const auto& r : sweep) bw.push_back({r.size, r.best});
  std::sort(bw.begin(), bw.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.size < b.size; });
  p.bandwidth = bw;
  for (const auto& r : stream) p.measurements.push_back(record(r.kernel, r.shape, r.size, r.best, r.median, r.repetitions));
  for (const auto& r : sweep) p.measurements.push_back(record(r.kernel, r.shape, r.size, r.best, r.median, r.repetitions));
  double triad = 0, d2d = 0;
  for (const auto& r : stream) {
    if (r.kernel == "triad") triad = std::max(triad, r.best);
    if (r.kernel == "memcpy_d2d") d2d = std::max(d2d, r.best);
  }
  run.summary.push_back({"triad bandwidth", triad, d ? d->memory_bandwidth_bytes_per_s : 0, "GB/s"});
  run.summary.push_back({"cudaMemcpy device-to-device", d2d, d ? d->memory_bandwidth_bytes_per_s : 0, "GB/s"});
  for (const char* prec : {"fp32", "tf32", "fp16", "bf16", "fp8"}) {
    auto gemm = cuda::gpu_gemm(index, prec, o.quick, progress);
    if (gemm.empty()) continue;
    std::vector<CurvePoint> curve;
    double best = 0;
    for (const auto& r : gemm) {
      if (compute_bound_shape(r.shape)) curve.push_back({r.size, r.best});
      best = std::max(best, r.best);
      p.measurements.push_back(record(r.kernel, r.shape, r.size, r.best, r.median, r.repetitions));
    }
    std::sort(curve.begin(), curve.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.size < b.size; });
    Precision pr = *parse_precision(prec);
    p.gemm[pr] = curve;
    run.summary.push_back({std::string(prec) + " GEMM", best, d ? d->peak(pr) : 0, "TFLOP/s"});
  }
  run.summary.push_back({"kernel in a stream (back to back)", p.kernel_launch_seconds, 0, "us"});
  run.summary.push_back({"launch + synchronise round trip", p.sync_latency_seconds, 0, "us"});
  if (!d)
    run.catalog_stub = fmt::format(
        "# Catalog stub written by hwplan calibrate: '{}' is not in the catalog. Fill in the <fill in> fields from the\n"
        "# datasheet (with sources) and use it with --catalog DIR.\nid: <fill in>\nname: {}\naliases: [{}]\nvendor: nvidia\n"
        "class: <fill in>\narchitecture: <fill in>\narchitecture_family: <fill in>  # lower-case, e.g. turing, ampere-ga10x, ada, hopper\nrelease_year: <fill in>\nmemory_gib: {:.0f}\nmemory_type: <fill in>\n"
        "memory_bandwidth_gb_per_s: {:.0f}  # theoretical from the memory clock and bus width\n"
        "peak_tflops: {{fp32: <fill in>, bf16: <fill in>}}\nl2_cache_mib: {:.0f}\ncompute_units: {}\nboost_clock_mhz: {:.0f}\n"
        "tdp_w: <fill in>\nhost_link: {{type: pcie, pcie_gen: <fill in>, pcie_lanes: 16}}\ninterconnect: {{type: <fill in>}}\n"
        "software: [cuda, cudnn, tensorrt]\ntraining: true\nconfidence: low\nsources:\n  memory_gib: \"CUDA runtime, hwplan calibrate {}\"\n",
        gpu.name, gpu.name, yaml_quote(gpu.name), gpu.memory_bytes / kGiB, gpu.memory_bandwidth_bytes_per_s / kGB,
        gpu.l2_bytes / kMiB, gpu.sm_count, gpu.clock_mhz, p.date);
  return run;
}

}  // namespace

std::string today() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

bool cuda_compiled_in() { return cuda::compiled_in(); }
int cuda_device_count() { return cuda::device_count(); }

std::vector<CalibrationRun> run_calibration(const io::Registry& registry, const CalibrateOptions& o) {
  if (o.backend != "auto" && o.backend != "cpu" && o.backend != "cuda")
    throw InputError({}, "--backend", "'" + o.backend + "' is not one of: auto, cpu, cuda");
  std::vector<CalibrationRun> runs;
  const int gpus = cuda_device_count();
  const bool want_cuda = o.backend == "cuda" || (o.backend == "auto" && gpus > 0);
  if (want_cuda) {
    if (!cuda_compiled_in()) throw InputError({}, "--backend", cuda::last_error());
    if (gpus == 0) throw InputError({}, "--backend", "no CUDA GPU is visible (driver missing, or CUDA_VISIBLE_DEVICES empty)");
    if (o.device_index && (*o.device_index < 0 || *o.device_index >= gpus))
      throw InputError({}, "--device-index", fmt::format("{} is out of range: {} GPU(s) visible", *o.device_index, gpus));
    auto list = cuda::list_gpus();
    for (int i = 0; i < static_cast<int>(list.size()); ++i) {
      if (o.device_index && i != *o.device_index) continue;
      runs.push_back(calibrate_gpu(registry, list[i], i, o));
    }
    return runs;
  }
  // A CUDA device asked for where none is used is an error, not the CPU calibrated under its name.
  if (o.device_index)
    throw InputError({}, "--device-index",
                     o.backend == "cpu" ? std::string("names a CUDA device; --backend cpu measures the CPU")
                                        : std::string("names a CUDA device, and no CUDA GPU is visible (driver missing, or "
                                                      "CUDA_VISIBLE_DEVICES empty); leave it out to measure the CPU"));
  runs.push_back(calibrate_cpu(o));
  return runs;
}

}  // namespace hwplan::calibrate
