// The software-stack keys shared by batch scenarios and measurement cases (framework, engine and their parts).
#pragma once

#include "core/workload_spec.hpp"
#include "io/yaml_map.hpp"

namespace hwplan::io {

// Reads whichever of the stack keys the mapping has into the spec.
void read_stack_keys(YamlMap& m, WorkloadSpec& w);

}  // namespace hwplan::io
