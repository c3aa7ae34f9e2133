// hwplan fit: the cheapest changes that make a workload fit a device.
#include <memory>

#include "cli/commands.hpp"
#include "report/recommend_report.hpp"
#include "recommend/front_end.hpp"

namespace hwplan::cli {
namespace {

struct FitOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  WorkloadOptions workload;
};

int exit_code(const FitReport& f) {
  bool any = f.baseline.fits || f.combined || std::any_of(f.changes.begin(), f.changes.end(), [](const FitChange& c) { return c.fits; });
  return any ? kExitOk : kExitNothingFeasible;
}

int run_fit(FitOptions& o) {
  FitReport f = fit_advice(registry_of(*o.global), o.workload);
  if (format_of(*o.global) == report::Format::kHtml) {
    Query q = resolve_query(registry_of(*o.global), o.workload);  // the device and model the report cites
    q.input.model = &q.model;
    emit(*o.global, report::fit_html(f, q.input, o.workload, html_context(*o.global)));
  } else {
    emit(*o.global, report::render_fit(f, o.workload, format_of(*o.global)));
  }
  return exit_code(f);
}

CommandResult fit_result(FitOptions& o) {
  FitReport f = fit_advice(registry_of(*o.global), o.workload);
  return {report::fit_json(f, o.workload), exit_code(f)};
}

}  // namespace

Command fit_command() {
  auto o = std::make_shared<FitOptions>();
  Command c;
  c.name = "fit";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("fit", "Why a workload does not fit, and what would make it fit.")->footer(R"(Examples:
  hwplan fit --model llama-2-13b --device rtx-4090 --task finetune --batch 4 --seq 2048
  hwplan fit --model llama-2-70b --device a100-80gb-sxm --task infer --batch 32 --prompt 4096)");
    add_workload_options(*o->app, o->workload);
    add_format_option(*o->app, g, /*html=*/true);
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_fit(*o); };
  c.result = [o] { return fit_result(*o); };
  c.reset = [o] {
    o->workload = {};
  };
  return c;
}

}  // namespace hwplan::cli
