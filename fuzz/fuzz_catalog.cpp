// Fuzzes the catalog loader; a device that loads is then estimated on, which must give finite numbers.
#include "estimators/estimate.hpp"
#include "fuzz_common.hpp"
#include "io/catalog_io.hpp"
#include "io/model_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwplan;
  Device d;
  try {
    d = io::parse_device(fuzz::text_of(data, size), "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  }
  static const Model model = io::standard_decoder(7e9, "7b");
  EstimateInput in;
  in.model = &model;
  in.device = &d;
  in.workload.seq = 1024;
  Estimate e = estimate(in);
  fuzz::require_finite(e.memory.total());
  fuzz::require_finite(e.train.step_seconds);
  in.workload.task = Task::kInfer;
  Estimate i = estimate(in);
  fuzz::require_finite(i.infer.time_per_output_token_seconds);
  return 0;
}
