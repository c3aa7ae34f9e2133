#include "recommend/front_end.hpp"

namespace hwplan {

ProfileScope profile_scope(const io::Registry& registry, const WorkloadSpec& w, const Device& device) {
  const Device* named = w.device.empty() ? nullptr : registry.find_device(w.device);
  return named == &device ? ProfileScope::kNamedDevice : ProfileScope::kMeasuredDeviceOnly;
}

Query resolve_query(const io::Registry& registry, const WorkloadSpec& w, const Model* model_override) {
  const Model& model = model_override ? *model_override : registry.model(w.model);
  return resolve_query(model, registry.device(w.device), w, w.count, ProfileScope::kNamedDevice);
}

Recommendation recommend(const io::Registry& registry, const WorkloadSpec& w, const RecommendSpec& spec, int threads) {
  const Model& model = registry.model(w.model);
  WorkloadSpec named = w;
  if (const Device* d = w.device.empty() ? nullptr : registry.find_device(w.device)) named.device = d->id;
  auto find = [&](const std::string& id) { return &registry.device(id); };
  return recommend(model, select_devices(registry.devices(), spec, find), named, spec, threads);
}

FitReport fit_advice(const io::Registry& registry, const WorkloadSpec& w) {
  return fit_advice(registry.model(w.model), registry.device(w.device), w);
}

ServeSetup prepare_serve(const io::Registry& registry, ServeSpec& o, const Device* device) {
  const WorkloadSpec& w = o.workload;
  if (!device) return prepare_serve(registry.model(w.model), registry.device(w.device), o, ProfileScope::kNamedDevice);
  return prepare_serve(registry.model(w.model), *device, o, profile_scope(registry, w, *device));
}

std::optional<DeadlineAnswer> smallest_count_for_deadline(const io::Registry& registry, const WorkloadSpec& w,
                                                          const Device& device, double deadline_seconds,
                                                          long long max_count) {
  return smallest_count_for_deadline(registry.model(w.model), device, w, deadline_seconds, max_count);
}

}  // namespace hwplan
