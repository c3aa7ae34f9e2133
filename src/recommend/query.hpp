// Turning a stated workload (WorkloadSpec: CLI flags, a batch scenario, a measurement case) into a validated
// EstimateInput, and running it (with the layout search when the layout is not fully given).
#pragma once

#include <memory>

#include <optional>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/model.hpp"
#include "core/profile.hpp"
#include "core/workload_spec.hpp"
#include "estimators/estimate_types.hpp"
#include "estimators/search.hpp"
#include "io/registry.hpp"

namespace hwplan {

// A fully resolved query: owns the model and profile the EstimateInput points at.
struct Query {
  Model model;
  const Device* device = nullptr;
  std::shared_ptr<const Profile> profile;  // the calibration profile that applies to this device (none: catalog)
  // A profile was given but describes another device (recommend evaluates every device): not applied.
  bool profile_skipped = false;
  EstimateInput input;
  SearchSpace space;
  bool search = false;  // some layout fields are free and count > 1 (or micro-batch free)
};

// The sequence length a workload gets when --seq is not given: the model's context, at most 2048 tokens
// (1 for networks without sequences).
long long default_sequence_length(const Model& model, const WorkloadSpec& w);

// Validates every flag (exit-2 errors name the flag) and builds the query. `device` may be overridden
// (recommend evaluates many devices for one workload).
Query resolve_query(const io::Registry& registry, const WorkloadSpec& w, const Device* device_override = nullptr,
                    std::optional<int> count_override = std::nullopt, const Model* model_override = nullptr);
// Runs the estimate, searching the layout when needed.
struct Outcome {
  Estimate estimate;
  std::optional<SearchResult> search;
  bool found = true;
};
Outcome run_query(Query& q);

}  // namespace hwplan
