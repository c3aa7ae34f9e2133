// Batch specification files: `defaults:` and `scenarios:` with the CLI's options in snake_case.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/workload_spec.hpp"

namespace hwplan::io {

struct Scenario {
  std::string name;
  std::string command = "estimate";  // estimate | recommend | fit
  SourceLocation where;
  WorkloadSpec workload;
  RecommendSpec recommend;
  // Keys the scenario itself gives (not its defaults), as the CLI asks whether a flag was given: a recommend scenario's
  // device and count restrict the candidates; an estimate scenario's deadline searches the count, up to its max_count.
  // Under defaults they keep their other meanings (the workload's device and count, recommend's deadline).
  bool device_given = false, count_given = false, max_count_given = false, deadline_given = false;
  std::map<std::string, SourceLocation> key_where;  // where each key it reads is (its own, else under defaults)
  std::map<std::string, std::string> key_name;      // and its full name there ("scenarios[2].tp", "defaults.tp")
  std::optional<std::string> error;  // this scenario is malformed: the message names file:line:column and key
};

// Parses the whole file; a malformed file (not YAML, no scenarios list) throws InputError, a malformed scenario
// is returned with `error` set so the others still run.
std::vector<Scenario> load_batch(const std::string& path);
std::vector<Scenario> parse_batch(const std::string& text, const std::string& file);

}  // namespace hwplan::io
