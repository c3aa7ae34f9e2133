// Pieces shared by the subcommands: global options, the registry, the workload flags and their validation.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/model.hpp"
#include "core/profile.hpp"
#include "core/workload_spec.hpp"
#include "estimators/estimate.hpp"
#include "estimators/search.hpp"
#include "io/registry.hpp"
#include "report/table.hpp"

namespace hwplan::cli {

struct GlobalOptions {
  std::vector<std::string> catalog_dirs;
  std::vector<std::string> model_dirs;
  std::string format = "table";
  std::string output;  // -o FILE, written atomically
};

void add_global_options(CLI::App& app, GlobalOptions& g);
void add_format_option(CLI::App& app, GlobalOptions& g);
io::Registry make_registry(const GlobalOptions& g);
report::Format format_of(const GlobalOptions& g);
// Writes to stdout, or atomically to g.output when set.
void emit(const GlobalOptions& g, const std::string& text);

using WorkloadOptions = WorkloadSpec;

void add_workload_options(CLI::App& app, WorkloadOptions& w, bool device_required = true);

// A fully resolved query: owns the model and profile the EstimateInput points at.
struct Query {
  Model model;
  const Device* device = nullptr;
  std::optional<Profile> profile;
  EstimateInput input;
  SearchSpace space;
  bool search = false;  // some layout fields are free and count > 1 (or micro-batch free)
};

// Validates every flag (exit-2 errors name the flag) and builds the query. `device` may be overridden
// (recommend evaluates many devices for one workload).
Query resolve_query(const io::Registry& registry, const WorkloadOptions& w, const Device* device_override = nullptr,
                    std::optional<int> count_override = std::nullopt, const Model* model_override = nullptr);
// Runs the estimate, searching the layout when needed.
struct Outcome {
  Estimate estimate;
  std::optional<SearchResult> search;
  bool found = true;
};
Outcome run_query(Query& q);

}  // namespace hwplan::cli
