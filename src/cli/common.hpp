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
#include "recommend/query.hpp"
#include "report/table.hpp"

namespace hwplan::cli {

struct GlobalOptions {
  std::vector<std::string> catalog_dirs;
  std::vector<std::string> model_dirs;
  std::vector<std::string> price_files;
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

using hwplan::Outcome;
using hwplan::Query;
using hwplan::resolve_query;
using hwplan::run_query;

}  // namespace hwplan::cli
