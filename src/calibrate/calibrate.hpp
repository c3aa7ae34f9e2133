// `hwplan calibrate`: run the microbenchmarks on the local devices and turn them into profiles that the
// estimators use (GEMM efficiency by size, bandwidth by size, launch overhead).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/profile.hpp"
#include "io/registry.hpp"

namespace hwplan::calibrate {

struct SummaryRow {
  std::string what;        // "triad bandwidth", "bf16 GEMM"
  double measured = 0;     // bytes/s or FLOP/s (best)
  double catalog_peak = 0; // 0 when unknown
  std::string unit;        // "GB/s" or "TFLOP/s"
};

struct CalibrationRun {
  Profile profile;
  std::vector<SummaryRow> summary;
  std::string catalog_stub;  // catalog-style YAML to complete, when the device is not in the catalog
};

struct CalibrateOptions {
  std::string backend = "auto";  // auto | cpu | cuda
  std::optional<int> device_index;
  bool quick = false;
  std::function<void(const std::string&)> progress;
};

// Whether this build has the CUDA backend, and how many GPUs the runtime sees.
bool cuda_compiled_in();
int cuda_device_count();

std::vector<CalibrationRun> run_calibration(const io::Registry& registry, const CalibrateOptions& options);

// Today's date (UTC) as YYYY-MM-DD, for profiles.
std::string today();

}  // namespace hwplan::calibrate
