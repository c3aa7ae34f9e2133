// Size and duration parsing (src/core/strings.cpp): suffixes, and inputs whose product overflows refused.
#include <doctest/doctest.h>

#include "core/strings.hpp"

using namespace hwplan;

TEST_CASE("parameter counts and durations take suffixes and refuse what overflows a double") {
  CHECK(*parse_param_count("7B") == doctest::Approx(7e9));
  CHECK(*parse_param_count("1.3b") == doctest::Approx(1.3e9));
  CHECK(*parse_param_count("350M") == doctest::Approx(350e6));
  CHECK(*parse_duration_seconds("14d") == doctest::Approx(14 * 86400.0));
  CHECK(*parse_duration_seconds("36h") == doctest::Approx(36 * 3600.0));
  // Found by fuzz_sizes: 1e305 x 1e9 is infinite.
  CHECK_FALSE(parse_param_count("1e305B").has_value());
  CHECK_FALSE(parse_duration_seconds("1e305w").has_value());
  CHECK_FALSE(parse_param_count("7X").has_value());
}
