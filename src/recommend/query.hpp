// Turning a stated workload (WorkloadSpec: CLI flags, a batch scenario, a measurement case) into a validated
// EstimateInput, and running it (with the layout search when the layout is not fully given).
#pragma once

#include <memory>

#include <optional>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/model.hpp"
#include "core/profile.hpp"
#include "core/workload_spec.hpp"
#include "estimators/estimate_types.hpp"
#include "estimators/search.hpp"

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
  // Training searched with no --global-batch, --batch or --grad-accum: the global batch recommend compares devices at
  // (default_global_batch), said in the estimate's warnings.
  bool global_batch_assumed = false;
  // Inputs the task does not use (inference flags given to training), and why: said in the estimate's warnings as
  // "ignored for --task T: ..." (serve, which has no --task, words them as its own).
  struct Ignored {
    std::string task;   // the --task they were given to
    std::string flags;  // "--seq, --optimizer"
    std::string why;    // "training inputs; inference reads ..."
    std::string note(const std::string& by) const { return "ignored " + by + ": " + flags + " (" + why + ")"; }
  };
  std::optional<Ignored> ignored_inputs;
  // --gpu-layers auto: run_query places as many of the model's layers on the device as fit (all, where they do).
  bool device_layers_auto = false;
  std::string inert_device_layers;  // auto where nothing can be placed: said as a warning
  // The host flags given: said to have no effect where no layer runs on the host.
  bool host_memory_given = false;
  bool host_tflops_given = false;
};

// The sequence length a workload gets when --seq is not given: the model's context, at most 2048 tokens
// (1 for networks without sequences).
long long default_sequence_length(const Model& model, const WorkloadSpec& w);

// Which device a calibration profile applies to: the one the user named (--device; another device than the
// profile's gets it with a warning), or, when the catalog is evaluated (recommend, serve over many devices), only
// the device it was measured on (the query says it was skipped).
enum class ProfileScope { kNamedDevice, kMeasuredDeviceOnly };

// Validates every flag (exit-2 errors name the flag) and builds the query for `count` of `device` running `model`.
// Typed values in: the names of the model and device were resolved once by the front end (front_end.hpp).
Query resolve_query(const Model& model, const Device& device, const WorkloadSpec& w, long long count,
                    ProfileScope scope = ProfileScope::kNamedDevice);
// The fixed layout's degrees against the model alone, whatever the device and count (--tp that does not divide the
// heads): the searches over counts check it first, so that the model's refusal is what they say.
void check_layout_against_model(const Model& model, const WorkloadSpec& w);
// The devices the layout the user fixed spans at least (--tp x --cp x --pp; 1 when none is fixed).
long long fixed_layout_devices(const WorkloadSpec& w);
// A search over counts up to `max_count` that cannot hold the fixed layout (--tp x --cp x --pp devices): an error
// naming --max-count.
void check_layout_within_count(const WorkloadSpec& w, long long max_count);
// Runs the estimate, searching the layout when needed.
struct Outcome {
  Estimate estimate;
  std::optional<SearchResult> search;
  bool found = true;
};
Outcome run_query(Query& q);
// The search found no layout at all (none evaluated): an input error naming why (the degrees given, the global batch
// over the data-parallel ranks, a training stack without tensor or pipeline parallelism), keyed on `key`.
bool no_layout(const Outcome& o);
InputError no_layout_error(const Query& q, const std::string& key);

}  // namespace hwplan
