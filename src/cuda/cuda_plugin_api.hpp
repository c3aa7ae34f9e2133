// The CUDA backend is a plugin (libhwplan_cuda.so) that hwplan loads with dlopen only when a command needs a GPU:
// the binary starts without mapping the CUDA runtime and cuBLAS (hundreds of MB), and runs where they are absent.
#pragma once

#include <string>
#include <vector>

#include "cuda/cuda_kernels.hpp"

namespace hwplan::cuda {

inline constexpr int kPluginApiVersion = 2;

struct PluginApi {
  int version = kPluginApiVersion;
  int (*device_count)() = nullptr;
  std::vector<GpuInfo> (*list_gpus)() = nullptr;
  std::vector<GpuKernelResult> (*gpu_stream)(int, bool, const Progress&) = nullptr;
  std::vector<GpuKernelResult> (*gpu_bandwidth_sweep)(int, bool, const Progress&) = nullptr;
  std::vector<GpuKernelResult> (*gpu_gemm)(int, const std::string&, bool, const Progress&) = nullptr;
  double (*gpu_launch_latency_seconds)(int) = nullptr;
  double (*gpu_launch_overhead_seconds)(int) = nullptr;
  std::string (*last_error)() = nullptr;
};

}  // namespace hwplan::cuda

// Exported by the plugin (the only symbol it exports).
extern "C" const hwplan::cuda::PluginApi* hwplan_cuda_plugin_api();
