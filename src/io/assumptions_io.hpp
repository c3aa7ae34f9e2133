// Reading overrides of the physics assumptions (src/core/assumptions.hpp) from YAML: `name: value` pairs.
#pragma once

#include <string>
#include <vector>

#include "core/assumptions.hpp"

namespace hwplan::io {

// Applies each file's `name: value` pairs over `base`, in order. Unknown names (with the nearest one suggested),
// values outside an assumption's range and non-numbers are errors naming the file, line and key.
Assumptions apply_assumption_files(Assumptions base, const std::vector<std::string>& files);
Assumptions parse_assumptions(Assumptions base, const std::string& text, const std::string& file);
// HWPLAN_ASSUMPTIONS (colon-separated files).
std::vector<std::string> assumption_files_from_environment();

}  // namespace hwplan::io
