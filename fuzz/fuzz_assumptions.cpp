// Fuzzes the --assumptions loader: any input either fails with an InputError or yields every assumption finite
// and within its documented range.
#include "core/assumptions.hpp"
#include "fuzz_common.hpp"
#include "io/assumptions_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwplan;
  Assumptions a;
  try {
    a = io::parse_assumptions(Assumptions{}, fuzz::text_of(data, size), "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  }
  for (const AssumptionInfo& i : describe_assumptions(a)) {
    fuzz::require_finite(i.value);
    HWPLAN_FUZZ_REQUIRE(i.value >= i.min && i.value <= i.max);
  }
  return 0;
}
