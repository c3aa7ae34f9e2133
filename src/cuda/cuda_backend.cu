// Entry point of the CUDA plugin: the table of the backend's functions (everything else is hidden).
#include <cuda_runtime.h>

#include "cuda/cuda_plugin_api.hpp"

namespace hwplan::cuda {
namespace {

int plugin_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error: no driver or no GPU is a normal answer
    return 0;
  }
  return n;
}

}  // namespace
}  // namespace hwplan::cuda

extern "C" __attribute__((visibility("default"))) const hwplan::cuda::PluginApi* hwplan_cuda_plugin_api() {
  using namespace hwplan::cuda;
  static const PluginApi api = [] {
    PluginApi a;
    a.device_count = plugin_device_count;
    a.list_gpus = list_gpus;
    a.gpu_stream = gpu_stream;
    a.gpu_bandwidth_sweep = gpu_bandwidth_sweep;
    a.gpu_gemm = gpu_gemm;
    a.gpu_launch_latency_seconds = gpu_launch_latency_seconds;
    a.gpu_launch_overhead_seconds = gpu_launch_overhead_seconds;
    a.last_error = last_error;
    return a;
  }();
  return &api;
}
