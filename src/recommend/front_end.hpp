// The front end shared by the CLI, batch, validate and the Python module: names in a stated workload (the model,
// the device, the devices a recommendation may use) are resolved against the catalog and model zoo once, and the
// typed values go to the functions below them (resolve_query, recommend, fit_advice, prepare_serve), which take
// no registry.
#pragma once

#include <optional>

#include "io/registry.hpp"
#include "recommend/fit.hpp"
#include "recommend/query.hpp"
#include "recommend/recommend.hpp"
#include "recommend/serve_setup.hpp"

namespace hwplan {

// Whether a --profile applies to `device` when several are evaluated: to the one `w` names (--device), or else
// only to the device the profile measured.
ProfileScope profile_scope(const io::Registry& registry, const WorkloadSpec& w, const Device& device);

// The model and device `w` names (unknown names throw, with a suggestion); `model_override` replaces the zoo's
// model (a measurement case's inline model).
Query resolve_query(const io::Registry& registry, const WorkloadSpec& w, const Model* model_override = nullptr);

// The catalog filtered by the constraints, and `w.device` (recommend --device) as its catalog id.
Recommendation recommend(const io::Registry& registry, const WorkloadSpec& w, const RecommendSpec& spec, int threads = 1);

FitReport fit_advice(const io::Registry& registry, const WorkloadSpec& w);

// `device`: one of several devices being evaluated (plot serve --devices, recommend --task serve); without it the
// device `o` names. A --profile applies to the named device, or to the one it measured.
ServeSetup prepare_serve(const io::Registry& registry, ServeSpec& o, const Device* device = nullptr);

std::optional<DeadlineAnswer> smallest_count_for_deadline(const io::Registry& registry, const WorkloadSpec& w,
                                                          const Device& device, double deadline_seconds,
                                                          long long max_count);

}  // namespace hwplan
