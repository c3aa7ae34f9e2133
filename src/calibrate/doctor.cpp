#include "calibrate/doctor.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "calibrate/calibrate.hpp"
#include "calibrate/host_info.hpp"
#include "io/compat_io.hpp"
#include "cuda/cuda_kernels.hpp"

namespace hwplan::calibrate {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double meminfo_field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::strtod(line.c_str() + key.size() + 1, nullptr) * 1024;
  return 0;
}

}  // namespace

std::string parse_nvidia_driver_version(const std::string& text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024"
  static const std::regex kVersion(R"(Kernel Module\s+([0-9]+\.[0-9]+(\.[0-9]+)?))");
  std::smatch m;
  if (std::regex_search(text, m, kVersion)) return m[1];
  static const std::regex kOpen(R"(Module[^\n]*?\s([0-9]{2,4}\.[0-9]+(\.[0-9]+)?)\s)");
  if (std::regex_search(text, m, kOpen)) return m[1];
  return "";
}

std::vector<WheelCheck> check_wheels(const std::string& driver, const std::vector<DoctorGpu>& gpus) {
  io::CompatTable table = io::builtin_compat();
  std::vector<WheelCheck> out;
  for (const auto& torch : table.pytorch) {
    for (const auto& cuda : torch.cuda) {
      WheelCheck w;
      w.pytorch = torch.version;
      w.cuda = cuda;
      const io::CudaRelease* rel = nullptr;
      for (const auto& r : table.cuda)
        if (r.version == cuda) rel = &r;
      if (!rel) continue;
      if (!driver.empty()) {
        w.driver_ok = io::compare_versions(driver, rel->minor_compat_driver_linux) >= 0;
        w.full_features = io::compare_versions(driver, rel->toolkit_driver_linux) >= 0;
        if (!w.driver_ok) w.note = "driver " + driver + " < " + rel->minor_compat_driver_linux + " needed for CUDA " + cuda.substr(0, cuda.find('.')) + ".x";
        else if (!w.full_features) w.note = "runs (minor-version compatibility); driver >= " + rel->toolkit_driver_linux + " for every feature";
      }
      for (const auto& arch : table.wheel_arch) {
        if (arch.pytorch != torch.version || arch.cuda != cuda) continue;
        for (const auto& g : gpus) {
          std::string cc = fmt::format("{}.{}", g.cc_major, g.cc_minor);
          bool has = std::find(arch.sm.begin(), arch.sm.end(), cc) != arch.sm.end();
          if (!has && !arch.ptx) {
            w.arch_ok = false;
            w.note += (w.note.empty() ? "" : "; ") + std::string("no kernels for compute capability ") + cc + " (" + g.name + ")";
          }
        }
      }
      out.push_back(w);
    }
  }
  return out;
}

DoctorReport run_doctor(const io::Registry& registry) {
  DoctorReport r;
  HostInfo host = detect_host();
  r.cpu = host.cpu_model;
  r.cores = host.cores;
  r.threads = host.threads;
  r.load_average = host.load_average_1min;
  std::string meminfo = read_file("/proc/meminfo");
  r.memory_bytes = meminfo_field(meminfo, "MemTotal");
  r.memory_available_bytes = meminfo_field(meminfo, "MemAvailable");
  r.cuda_backend = cuda_compiled_in();
  r.driver_version = parse_nvidia_driver_version(read_file("/proc/driver/nvidia/version"));
  std::error_code ec;
  r.nvidia_device_nodes = std::filesystem::exists("/dev/nvidia0", ec);
  for (const auto& g : cuda::list_gpus()) {
    DoctorGpu d{g.name, "", g.cc_major, g.cc_minor, g.memory_bytes};
    if (const Device* dev = registry.find_device(g.name)) d.catalog_id = dev->id;
    r.gpus.push_back(d);
  }
  if (!r.driver_version.empty()) r.wheels = check_wheels(r.driver_version, r.gpus);

  // Hints for the classic problems.
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (r.gpus.empty()) {
    if (r.driver_version.empty() && !r.nvidia_device_nodes)
      r.hints.push_back("No NVIDIA GPU or driver found: this machine runs on the CPU only (hwplan calibrate --backend cpu "
                        "measures it). On a GPU machine, install the NVIDIA driver and check `lsmod | grep nvidia`.");
    else if (visible && std::string(visible).empty())
      r.hints.push_back("CUDA_VISIBLE_DEVICES is set but empty: no GPU is visible to programs. Unset it or list the GPUs.");
    else if (!r.cuda_backend)
      r.hints.push_back("An NVIDIA driver is present but this hwplan was built without the CUDA backend: rebuild with nvcc "
                        "available (cmake -DHWPLAN_CUDA=ON) to list and calibrate the GPUs.");
    else
      r.hints.push_back("The NVIDIA driver is loaded but the CUDA runtime sees no GPU: check `nvidia-smi`, the device "
                        "permissions on /dev/nvidia*, and in containers the --gpus flag / NVIDIA container toolkit.");
  }
  if (!r.driver_version.empty()) {
    bool any_new = false;
    for (const auto& w : r.wheels) any_new |= w.driver_ok && w.cuda.rfind("12.", 0) == 0;
    if (!any_new)
      r.hints.push_back("Driver " + r.driver_version + " is too old for CUDA 12 builds of PyTorch (need >= 525.60.13): "
                        "upgrade the driver, or install a +cu118 wheel.");
  }
  for (const auto& g : r.gpus)
    if (g.catalog_id.empty())
      r.hints.push_back("'" + g.name + "' is not in the catalog: hwplan calibrate writes a profile and a catalog stub for it.");
  if (r.memory_available_bytes > 0 && r.memory_available_bytes < 0.1 * r.memory_bytes)
    r.hints.push_back("Less than 10% of host memory is free: data loaders and optimizer offload will swap.");
  if (r.threads > 0 && r.load_average > r.threads)
    r.hints.push_back(fmt::format("Load average {:.1f} exceeds the {} CPU threads: data loading may starve the GPU.", r.load_average,
                                  r.threads));
  r.hints.push_back("GPU sitting idle during training? Usually data loading: raise DataLoader num_workers, set "
                    "pin_memory=True and persistent_workers=True, and check GPU utilisation with `nvidia-smi dmon`.");
  r.hints.push_back("Out of memory? `hwplan fit --model ... --device ...` lists the cheapest changes that make a workload fit.");
  return r;
}

}  // namespace hwplan::calibrate
