// Fuzzes the size and duration parsers ("7B", "1.3b", "14d", "36h").
#include "core/strings.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwplan;
  std::string s = fuzz::text_of(data, size);
  if (auto n = parse_param_count(s)) {
    fuzz::require_finite(*n);
    HWPLAN_FUZZ_REQUIRE(*n > 0);
  }
  if (auto t = parse_duration_seconds(s)) {
    fuzz::require_finite(*t);
    HWPLAN_FUZZ_REQUIRE(*t > 0);
  }
  (void)nearest(s, {"h100-sxm", "a100-80gb-sxm", "rtx-4090"});
  return 0;
}
