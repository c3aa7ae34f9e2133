// Loads the CUDA plugin on first use and forwards the backend's functions to it. Without the plugin (a build
// without nvcc, or a copy of the binary without it), every function answers "no GPU" and says why.
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <mutex>
#include <string>

#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_plugin_api.hpp"

#ifndef HWPLAN_PLUGIN_DIR_FROM_BIN
#define HWPLAN_PLUGIN_DIR_FROM_BIN "../lib/hwplan"
#endif

namespace hwplan::cuda {
namespace {

constexpr const char* kPluginDirFromBin = HWPLAN_PLUGIN_DIR_FROM_BIN;  // set by CMakeLists.txt (GNUInstallDirs)

struct Plugin {
  const PluginApi* api = nullptr;
  std::string error;
};

std::string executable_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

const Plugin& plugin() {
  static Plugin p;
  static std::once_flag once;
  std::call_once(once, [] {
    void* handle = nullptr;
    std::string tried;
    // Beside the binary (the build tree, scripts/bundle.sh), where `cmake --install` puts it (bin/../lib/hwplan),
    // then the dynamic loader's own search (LD_LIBRARY_PATH, the cache).
    const std::string dir = executable_dir();
    for (const std::string& candidate : {dir + "/libhwplan_cuda.so", dir + "/" + kPluginDirFromBin + "/libhwplan_cuda.so",
                                         std::string("libhwplan_cuda.so")}) {
      handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) break;
      const char* e = ::dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(e ? e : candidate);
    }
    if (!handle) {
      p.error = "the CUDA backend (libhwplan_cuda.so) is not available: " + tried;
      return;
    }
    auto entry = reinterpret_cast<const PluginApi* (*)()>(::dlsym(handle, "hwplan_cuda_plugin_api"));
    if (!entry || !entry() || entry()->version != kPluginApiVersion) {
      p.error = "libhwplan_cuda.so is not a matching hwplan CUDA plugin";
      return;
    }
    p.api = entry();
  });
  return p;
}

}  // namespace

bool compiled_in() { return plugin().api != nullptr; }
int device_count() { return plugin().api ? plugin().api->device_count() : 0; }
std::vector<GpuInfo> list_gpus() { return plugin().api ? plugin().api->list_gpus() : std::vector<GpuInfo>{}; }
std::vector<GpuKernelResult> gpu_stream(int device, bool quick, const Progress& progress) {
  return plugin().api ? plugin().api->gpu_stream(device, quick, progress) : std::vector<GpuKernelResult>{};
}
std::vector<GpuKernelResult> gpu_bandwidth_sweep(int device, bool quick, const Progress& progress) {
  return plugin().api ? plugin().api->gpu_bandwidth_sweep(device, quick, progress) : std::vector<GpuKernelResult>{};
}
std::vector<GpuKernelResult> gpu_gemm(int device, const std::string& precision, bool quick, const Progress& progress) {
  return plugin().api ? plugin().api->gpu_gemm(device, precision, quick, progress) : std::vector<GpuKernelResult>{};
}
double gpu_launch_latency_seconds(int device) { return plugin().api ? plugin().api->gpu_launch_latency_seconds(device) : 0; }
double gpu_launch_overhead_seconds(int device) { return plugin().api ? plugin().api->gpu_launch_overhead_seconds(device) : 0; }
std::string last_error() { return plugin().api ? plugin().api->last_error() : plugin().error; }

}  // namespace hwplan::cuda
