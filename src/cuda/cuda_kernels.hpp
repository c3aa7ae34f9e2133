// GPU measurement kernels of `hwplan calibrate` (CUDA runtime, cuBLAS, cuBLASLt), behind plain C++ types so
// that code built without nvcc can call them. Every function is safe on a machine without a driver or a GPU,
// or with a bad device index: it returns an empty result (0 for the latency) and says why in last_error().
// A failure halfway (out of memory, a cuBLAS status) keeps what was measured before it.
//
// Method, shared by every kernel: warm-up runs are excluded; each repetition is timed with a pair of CUDA
// events around the work alone; `best` is the highest rate, `median` the middle one. Rates are in base units.
// Built only when the CUDA backend is on; cuda_stub.cpp answers for it otherwise.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace hwplan::cuda {

struct GpuInfo {
  std::string name;                           // "NVIDIA H100 80GB HBM3"
  int sm_count = 0;
  double clock_mhz = 0;                       // peak SM clock
  double memory_bytes = 0;
  double l2_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;    // theoretical: 2 x memory clock x bus width (0 when unknown)
  int driver_version = 0;                     // CUDA version the driver supports, 1000 * major + 10 * minor
  int runtime_version = 0;                    // CUDA runtime linked in, same encoding
  int cc_major = 0, cc_minor = 0;             // compute capability
};

// Every GPU the runtime sees, in device-index order; empty without a driver or a GPU.
std::vector<GpuInfo> list_gpus();

struct GpuKernelResult {
  std::string kernel;    // "triad", "memcpy_d2d", "memcpy_h2d", "gemm_bf16", ...
  std::string shape;     // "3 x 512 MiB", "M=8192 N=8192 K=8192"
  double size = 0;       // bytes moved or FLOPs of one run
  double best = 0;       // bytes/s or FLOP/s
  double median = 0;
  int repetitions = 0;   // timed runs, warm-ups excluded
};

// Called after each measurement (for progress lines on stderr); may be empty.
using Progress = std::function<void(const GpuKernelResult&)>;

// copy, scale, add, triad (grid-stride, double) over arrays of at least 4x L2 (STREAM byte counting: 16 or 24
// bytes per element), then cudaMemcpy device-to-device (2 x bytes: read + write) and host<->device from pinned
// memory (bytes copied, one way).
std::vector<GpuKernelResult> gpu_stream(int device, bool quick, const Progress& progress = {});

// triad at working sets from 1 MiB (L2-resident) to 4 GiB (quick: 1 GiB), several back-to-back launches per
// timed repetition so that small sizes are not all launch overhead.
std::vector<GpuKernelResult> gpu_bandwidth_sweep(int device, bool quick, const Progress& progress = {});

// cuBLAS GEMM sweep: square 256..16384 (quick: ..4096) plus transformer-like shapes (tokens x hidden, MLP,
// GEMV-like decode). precision: "fp64", "fp32" (tensor cores off), "tf32", "fp16", "bf16" (FP32 accumulate),
// "fp8" (e4m3 inputs, bf16 output, cuBLASLt; compute capability 8.9+ only, else empty). Data is random and
// non-zero; a buffer larger than L2 is written between repetitions so that no run starts from a warm cache.
// size = 2*M*N*K FLOPs. An unknown precision returns empty with last_error() set.
std::vector<GpuKernelResult> gpu_gemm(int device, const std::string& precision, bool quick,
                                      const Progress& progress = {});

// Median time from launching an empty kernel to cudaStreamSynchronize returning (host clock), seconds; 0 when
// there is no GPU.
double gpu_launch_latency_seconds(int device);

// What one kernel costs in a stream of kernels: 2,000 empty kernels launched back to back, timed with events on
// the device, per kernel (median of 7 bursts). The larger of the host's launch rate and the device's minimum gap
// between kernels; the per-kernel floor the estimators add (kernel_overhead_seconds). 0 when there is no GPU.
double gpu_launch_overhead_seconds(int device);

// Why the last call on this thread returned less than asked for; empty when it did not.
std::string last_error();

}  // namespace hwplan::cuda
