#include "calibrate/local_validation.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "calibrate/cpu_backend.hpp"
#include "estimators/efficiency.hpp"

namespace hwplan::calibrate {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// y = x * s + 1 over `elements` floats (read one array, write another): the traffic of a layer-norm or activation
// pass. Best of the timed repetitions after a warm-up.
double time_pass(std::size_t elements, bool quick) {
  std::vector<float> x(elements), y(elements);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < elements; ++i) {
    x[i] = static_cast<float>(i % 97) * 0.01f;
    y[i] = 0;
  }
  auto pass = [&](float s) {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < elements; ++i) y[i] = x[i] * s + 1.0f;
  };
  pass(1.0f);
  std::vector<double> samples;
  const double budget = quick ? 0.1 : 0.4;
  const double stop = now() + budget;
  while (samples.size() < 5 || (now() < stop && samples.size() < 200)) {
    double t0 = now();
    pass(static_cast<float>(samples.size() % 7) * 0.1f + 0.5f);
    samples.push_back(now() - t0);
  }
  if (!std::isfinite(y[elements / 2])) return 0;
  // The fastest repetition, as the profile's curves are built from the best of their repetitions.
  return *std::min_element(samples.begin(), samples.end());
}

}  // namespace

Device device_from_profile(const Profile& profile) {
  Device d;
  d.id = profile.catalog_id.empty() ? "local" : profile.catalog_id;
  d.name = profile.device_name;
  for (const auto& [p, curve] : profile.gemm) {
    double best = 0;
    for (const auto& c : curve) best = std::max(best, c.achieved);
    if (best > 0) d.peak_flops[p] = best;
  }
  for (const auto& c : profile.bandwidth) d.memory_bandwidth_bytes_per_s = std::max(d.memory_bandwidth_bytes_per_s, c.achieved);
  return d;
}

double predict_gemm_seconds(const Device& device, const Profile* profile, Precision precision, double m, double n, double k) {
  DeviceRates r = device_rates(device, precision, profile);
  return gemm_seconds(r, m, n, k, 1, bytes_per_element(precision));
}

double predict_memory_seconds(const Device& device, const Profile* profile, double bytes) {
  DeviceRates r = device_rates(device, Precision::kFp32, profile);
  return memory_seconds(r, bytes);
}

LocalValidation validate_cpu_layer(const Model& m, long batch, long seq, const Profile& profile, const Device* catalog_device,
                                   bool quick) {
  LocalValidation v;
  v.device_name = profile.device_name;
  v.catalog_id = catalog_device ? catalog_device->id : "";
  Device profile_device = catalog_device ? *catalog_device : device_from_profile(profile);
  CalibrationOptions co;
  co.quick = quick;
  const long tokens = batch * seq;
  const long h = m.hidden_size;
  const long q = m.attention_heads * m.head_dim;
  const long kv = m.kv_heads * m.head_dim;
  const long f = m.ffn_hidden_size;
  struct Gemm {
    const char* name;
    long m, n, k;
  };
  std::vector<Gemm> gemms = {{"qkv-proj", tokens, q + 2 * kv, h},
                             {"out-proj", tokens, h, q},
                             {"mlp-up", tokens, (m.gated() ? 2 : 1) * f, h},
                             {"mlp-down", tokens, h, f}};
  for (const auto& g : gemms) {
    KernelResult r = cpu_gemm_shape(co, "fp32", {g.m, g.n, g.k});
    LocalCheck c;
    c.kernel = g.name;
    c.shape = "M=" + std::to_string(g.m) + " N=" + std::to_string(g.n) + " K=" + std::to_string(g.k);
    c.measured_seconds = r.size / r.best;  // best, like the profile's curves
    if (catalog_device) c.catalog_seconds = predict_gemm_seconds(*catalog_device, nullptr, Precision::kFp32, g.m, g.n, g.k);
    c.profile_seconds = predict_gemm_seconds(profile_device, &profile, Precision::kFp32, g.m, g.n, g.k);
    v.checks.push_back(c);
  }
  struct Pass {
    const char* name;
    double elements;
  };
  std::vector<Pass> passes = {{"layernorm-sized pass", static_cast<double>(tokens * h)},
                              {"activation-sized pass", static_cast<double>(tokens * f)},
                              {"softmax-sized pass", static_cast<double>(batch) * m.attention_heads * seq * seq}};
  for (const auto& p : passes) {
    double elements = std::min(p.elements, quick ? 32.0 * 1024 * 1024 : 256.0 * 1024 * 1024);
    LocalCheck c;
    c.kernel = p.name;
    c.shape = std::to_string(static_cast<long long>(elements)) + " floats, read + write";
    c.measured_seconds = time_pass(static_cast<std::size_t>(elements), quick);
    double bytes = elements * 8;
    if (catalog_device) c.catalog_seconds = predict_memory_seconds(*catalog_device, nullptr, bytes);
    c.profile_seconds = predict_memory_seconds(profile_device, &profile, bytes);
    v.checks.push_back(c);
  }
  return v;
}

}  // namespace hwplan::calibrate
