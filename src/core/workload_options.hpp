// Every workload option once: the flag the CLI takes and the key batch files take for it. The CLI registers its
// flags from its own calls (src/cli/common.cpp) and the batch loader accepts exactly these keys
// (src/io/batch_io.cpp); a test builds the CLI and checks both against this table, so the two cannot drift.
#pragma once

#include <string>
#include <vector>

namespace hwplan {

struct WorkloadOptionName {
  const char* flag;  // "--grad-accum"; a negated switch is spelled as the CLI has it ("--no-sequence-parallel")
  const char* key;   // "grad_accum"; its batch key says the positive ("sequence_parallel: false")
};

const std::vector<WorkloadOptionName>& workload_option_names();

}  // namespace hwplan
