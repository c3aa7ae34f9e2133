// Fuzzes the model loader; a model that loads is counted and estimated (memory and time must be finite or the
// estimate must reject the combination as bad input).
#include "estimators/estimate.hpp"
#include "fuzz_common.hpp"
#include "io/model_io.hpp"

namespace {
hwplan::Device h100() {
  hwplan::Device d;
  d.id = "h100";
  d.memory_bytes = 80.0 * (1 << 30);
  d.memory_bandwidth_bytes_per_s = 3.35e12;
  d.peak_flops[hwplan::Precision::kBf16] = 989e12;
  d.peak_flops[hwplan::Precision::kFp32] = 67e12;
  d.compute_units = 132;
  d.interconnect = {"nvlink4", 900e9, 8};
  return d;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwplan;
  Model m;
  try {
    m = io::parse_model(fuzz::text_of(data, size), "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  }
  static const Device device = h100();
  EstimateInput in;
  in.model = &m;
  in.device = &device;
  in.workload.seq = 512;
  try {
    validate_plan(in);
  } catch (const InputError&) {
    return 0;
  }
  Estimate e = estimate(in);
  fuzz::require_finite(e.params.total);
  fuzz::require_finite(e.memory.total());
  fuzz::require_finite(e.train.step_seconds);
  return 0;
}
