// The CUDA toolkit / driver / PyTorch wheel compatibility table (data/compat/cuda-pytorch.yaml).
#pragma once

#include <string>
#include <vector>

namespace hwplan::io {

struct CudaRelease {
  std::string version;                 // "12.4"
  std::string toolkit_driver_linux;    // "550.54.14"
  std::string minor_compat_driver_linux;
};

struct PytorchRelease {
  std::string version;  // "2.4"
  std::string released;
  std::vector<std::string> cuda;  // wheel variants, "12.4"
};

struct WheelArch {
  std::string pytorch, cuda;
  std::vector<std::string> sm;  // compute capabilities with SASS, "8.0"
  bool ptx = false;
};

struct CompatTable {
  std::vector<CudaRelease> cuda;
  std::vector<PytorchRelease> pytorch;
  std::vector<WheelArch> wheel_arch;
};

CompatTable parse_compat(const std::string& text, const std::string& file);
CompatTable builtin_compat();

// Compares dotted versions numerically: "550.54.14" vs "525.60.13". Returns <0, 0, >0.
int compare_versions(const std::string& a, const std::string& b);

}  // namespace hwplan::io
