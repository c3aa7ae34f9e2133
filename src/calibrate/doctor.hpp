// `hwplan doctor`: the local environment as users need it: devices, driver and CUDA versions, which PyTorch
// builds can run, free memory, and hints for the classic problems.
#pragma once

#include <string>
#include <vector>

#include "io/registry.hpp"

namespace hwplan::calibrate {

struct DoctorGpu {
  std::string name;
  std::string catalog_id;  // empty when not in the catalog
  int cc_major = 0, cc_minor = 0;
  double memory_bytes = 0;
};

struct WheelCheck {
  std::string pytorch;   // "2.4"
  std::string cuda;      // "12.4"
  bool driver_ok = false;     // driver >= minor-compatibility minimum of the CUDA major
  bool full_features = false; // driver >= the toolkit's own driver
  bool arch_ok = true;        // every GPU's compute capability has code in the wheel (when known)
  std::string note;
};

struct DoctorReport {
  std::string cpu;
  int cores = 0, threads = 0;
  double memory_bytes = 0, memory_available_bytes = 0;
  double load_average = 0;
  bool cuda_backend = false;         // built with the CUDA backend
  std::string driver_version;        // "550.54.14" from /proc/driver/nvidia/version; empty when absent
  bool nvidia_device_nodes = false;  // /dev/nvidia0 exists
  std::vector<DoctorGpu> gpus;
  std::vector<WheelCheck> wheels;
  std::vector<std::string> hints;
};

DoctorReport run_doctor(const io::Registry& registry);
// Pure part, testable without a GPU: which wheels run on this driver and these GPUs.
std::vector<WheelCheck> check_wheels(const std::string& driver_version, const std::vector<DoctorGpu>& gpus);
std::string parse_nvidia_driver_version(const std::string& proc_text);

}  // namespace hwplan::calibrate
