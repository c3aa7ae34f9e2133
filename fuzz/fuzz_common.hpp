// Shared checks for the fuzz targets: parsing may fail with InputError (the user's error); anything else --
// another exception, a sanitizer report, a non-finite estimate -- is a bug and aborts.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"

#define HWPLAN_FUZZ_REQUIRE(cond) \
  do {                            \
    if (!(cond)) std::abort();    \
  } while (0)

namespace hwplan::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

inline void require_finite(double v) { HWPLAN_FUZZ_REQUIRE(std::isfinite(v)); }

}  // namespace hwplan::fuzz
