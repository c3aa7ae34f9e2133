// `hwplan fit`: why a workload does not fit, and the cheapest changes (in speed) that make it fit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/model.hpp"
#include "core/workload_spec.hpp"
#include "estimators/estimate_types.hpp"

namespace hwplan {

struct FitChange {
  std::string change;  // in words
  std::string flags;   // the flags that apply it
  bool fits = false;
  double per_device_bytes = 0;
  double seconds = 0;    // step time (training) or time per output token (inference)
  double slowdown = 0;   // seconds / baseline seconds - 1 (negative = faster)
  bool quality_change = false;  // changes the model's numerics (LoRA, quantisation, shorter context)
};

struct FitReport {
  std::vector<FitChange> combinations;  // when no single change fits: the fitting combinations, fastest first (top 5)
  Estimate baseline;
  double baseline_seconds = 0;
  std::vector<FitChange> changes;      // those that fit first, cheapest first; then those that do not
  std::optional<FitChange> combined;   // cheapest changes applied together until it fits
  std::optional<long long> max_micro_batch;  // largest batch that fits as configured (nullopt: not even 1)
  std::optional<long long> max_seq;          // longest sequence (training) / context (inference) that fits
  long long model_context = 0;               // the model's trained context length (max_seq may exceed it)
  bool max_seq_beyond_context() const { return max_seq && model_context > 0 && *max_seq > model_context; }
};

// The model and device as the front end resolved them (front_end.hpp); every change is a function of the workload.
FitReport fit_advice(const Model& model, const Device& device, const WorkloadSpec& workload);

}  // namespace hwplan
