// hwplan assumptions: the physics constants the estimates rest on, their values in this run (after --assumptions
// FILE and HWPLAN_ASSUMPTIONS), their defaults, units and sources.
#include <fmt/format.h>

#include <memory>

#include "cli/commands.hpp"
#include "core/assumptions.hpp"
#include "report/json.hpp"
#include "report/table.hpp"

namespace hwplan::cli {
namespace {

struct AssumptionsOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
};

nlohmann::json assumptions_json() {
  nlohmann::json j = {{"schema_version", report::kSchemaVersion}, {"assumptions", nlohmann::json::array()}};
  for (const AssumptionInfo& a : describe_assumptions(assumptions()))
    j["assumptions"].push_back({{"name", a.name},
                                {"value", a.value},
                                {"default", a.default_value},
                                {"overridden", a.value != a.default_value},
                                {"unit", a.unit},
                                {"min", a.min},
                                {"max", a.max},
                                {"source", a.source}});
  return j;
}

int run_assumptions(const AssumptionsOptions& o) {
  const report::Format format = format_of(*o.global);
  if (format == report::Format::kJson) {
    emit(*o.global, assumptions_json().dump(2) + "\n");
    return kExitOk;
  }
  report::Table t;
  t.header = {"name", "value", "default", "unit", "source"};
  t.right_align = {false, true, true, false, false};
  for (const AssumptionInfo& a : describe_assumptions(assumptions()))
    t.rows.push_back({a.name,
                      fmt::format("{:g}{}", a.value, a.value != a.default_value && format != report::Format::kCsv ? " *" : ""),
                      fmt::format("{:g}", a.default_value), a.unit, a.source});
  std::string out = report::render(t, format);
  if (format == report::Format::kTable)
    out += "\n* overridden (--assumptions FILE or HWPLAN_ASSUMPTIONS: a YAML map of name: value).\n";
  emit(*o.global, out);
  return kExitOk;
}

}  // namespace

Command assumptions_command() {
  auto o = std::make_shared<AssumptionsOptions>();
  Command c;
  c.name = "assumptions";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("assumptions", "The physics constants the estimates rest on, with sources (override: --assumptions FILE)")
                 ->footer(R"(Examples:
  hwplan assumptions
  hwplan assumptions --format json
  hwplan --assumptions mine.yaml estimate --model llama-2-7b --device h100-sxm   # mine.yaml: bandwidth_efficiency: 0.8)");
    add_format_option(*o->app, g);
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_assumptions(*o); };
  c.result = [o] { return CommandResult{assumptions_json(), kExitOk}; };
  c.reset = [] {};
  return c;
}

}  // namespace hwplan::cli
