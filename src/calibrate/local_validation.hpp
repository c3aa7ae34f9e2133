// `hwplan validate` without --measurements: time the kernels that make up one transformer layer on this machine
// and compare with what the estimators predict from the catalog alone and from a calibration profile.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/model.hpp"
#include "core/profile.hpp"

namespace hwplan::calibrate {

struct LocalCheck {
  std::string kernel;      // qkv-proj, mlp-up, layernorm-pass, ...
  std::string shape;
  double measured_seconds = 0;
  std::optional<double> catalog_seconds;  // prediction from the catalog device (when the device is in it)
  double profile_seconds = 0;             // prediction from the profile
};

struct LocalValidation {
  std::string device_name;
  std::string catalog_id;
  std::vector<LocalCheck> checks;
};

// CPU: the model's layer GEMMs at batch x seq tokens (fp32, Eigen, all cores) and memory-bound passes of
// layer-norm, activation and softmax size. `catalog_device` may be null (CPUs are not in the catalog).
LocalValidation validate_cpu_layer(const Model& model, long batch, long seq, const Profile& profile,
                                   const Device* catalog_device, bool quick);

// Predicted time of a GEMM / a memory pass on `device` with `profile` (nullptr: catalog figures only).
double predict_gemm_seconds(const Device& device, const Profile* profile, Precision precision, double m, double n, double k);
double predict_memory_seconds(const Device& device, const Profile* profile, double bytes);
// A stand-in device for a profile of a device missing from the catalog: its peaks are the profile's best.
Device device_from_profile(const Profile& profile);

}  // namespace hwplan::calibrate
