// Fuzzes the batch-spec loader: any input either fails as a whole with InputError or yields scenarios.
#include "fuzz_common.hpp"
#include "io/batch_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwplan;
  try {
    auto scenarios = io::parse_batch(fuzz::text_of(data, size), "fuzz.yaml");
    HWPLAN_FUZZ_REQUIRE(!scenarios.empty());
    for (const auto& s : scenarios) HWPLAN_FUZZ_REQUIRE(s.error || !s.workload.model.empty());
  } catch (const InputError&) {
  }
  return 0;
}
