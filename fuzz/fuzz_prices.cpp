// Fuzzes the --prices loader over the built-in catalog: any input either fails with an InputError or leaves every
// quote finite, positive and dated.
#include "fuzz_common.hpp"
#include "io/catalog_io.hpp"
#include "io/embedded.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwplan;
  static const std::vector<Device> catalog = io::builtin_devices();
  std::vector<Device> devices = catalog;
  try {
    io::apply_price_text(devices, fuzz::text_of(data, size), "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  }
  for (const auto& d : devices)
    for (const auto& q : quotes_of(d.price)) {
      fuzz::require_finite(q.usd);
      HWPLAN_FUZZ_REQUIRE(q.usd >= 0 && q.date.size() == 7);
    }
  return 0;
}
