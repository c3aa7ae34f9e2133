// Pieces shared by the subcommands: global options, the registry, the workload flags and their validation.
#pragma once

#include <CLI/CLI.hpp>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/model.hpp"
#include "core/profile.hpp"
#include "core/workload_spec.hpp"
#include "estimators/estimate_types.hpp"
#include "estimators/search.hpp"
#include "io/registry.hpp"
#include "recommend/query.hpp"
#include "report/html_report.hpp"
#include "report/table.hpp"

namespace hwplan::cli {

struct GlobalOptions {
  std::vector<std::string> catalog_dirs;
  std::vector<std::string> model_dirs;
  std::vector<std::string> price_files;
  std::vector<std::string> assumption_files;  // --assumptions: physics constants overridden for this run
  std::string format = "table";
  std::string output;  // -o FILE, written atomically
  std::string command_line;  // as typed, for the HTML report's "question"
  // Built on first use (registry_of); the API facade sets it beforehand so that many calls share one catalog.
  std::shared_ptr<const io::Registry> registry;
};

void add_global_options(CLI::App& app, GlobalOptions& g);
// `html`: the command can write a self-contained HTML report (report/html_report.hpp).
void add_format_option(CLI::App& app, GlobalOptions& g, bool html = false);
io::Registry make_registry(const GlobalOptions& g);
// Accepts k/M/B/T suffixes on a number flag, as --model 7B and --deadline 14d do: 1T -> 1e12, 3k -> 3000.
std::string expand_count_suffix(std::string value);
// The registry of this run: g.registry when set, else make_registry(g), kept in g.registry.
const io::Registry& registry_of(GlobalOptions& g);
report::Format format_of(const GlobalOptions& g);
report::HtmlContext html_context(const GlobalOptions& g);
// Writes to stdout, or atomically to g.output when set.
void emit(const GlobalOptions& g, const std::string& text);

using WorkloadOptions = WorkloadSpec;

void add_workload_options(CLI::App& app, WorkloadOptions& w, bool device_required = true);
// Lists options already declared on `app` under one heading of its --help (headings appear in the order of their
// first option); `names` are flag names such as "--tp". A name that is not an option of `app` throws.
void group_options(CLI::App& app, const std::string& heading, std::initializer_list<const char*> names);

using hwplan::Outcome;
using hwplan::Query;
using hwplan::resolve_query;
using hwplan::run_query;

}  // namespace hwplan::cli
