// hwplan estimate: memory and time of one workload on one device type (x count), with the layout searched
// when it is not given.
#include <memory>

#include "cli/commands.hpp"
#include "report/estimate_report.hpp"

namespace hwplan::cli {
namespace {

struct EstimateOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  WorkloadOptions workload;
};

int run_estimate(EstimateOptions& o) {
  io::Registry registry = make_registry(*o.global);
  Query q = resolve_query(registry, o.workload);
  Outcome out = run_query(q);
  if (out.search && out.search->layouts_evaluated == 0)
    throw InputError({}, "count", "no parallel layout of " + std::to_string(q.input.system.count) +
                                      " devices matches the fixed --tp/--pp/--dp for " + q.model.id);
  emit(*o.global, report::estimate_text(q.input, out.estimate, out.search ? &*out.search : nullptr, format_of(*o.global)));
  return 0;
}

}  // namespace

Command estimate_command() {
  auto o = std::make_shared<EstimateOptions>();
  Command c;
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("estimate", "Memory and time of a workload on a device (x count).")->footer(R"(Examples:
  hwplan estimate --model llama-2-7b --device rtx-4090 --task lora --batch 4 --seq 1024
  hwplan estimate --model gpt3-175b --device a100-80gb-sxm --count 1024 --global-batch 1536 --tokens 3e11
  hwplan estimate --model llama-3-70b --device h100-sxm --count 4 --task infer --batch 16 --prompt 2048 --generate 512)");
    add_workload_options(*o->app, o->workload);
    add_format_option(*o->app, g);
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_estimate(*o); };
  return c;
}

std::vector<Command> all_commands() {
  return {catalog_command(), models_command(), estimate_command(), recommend_command(), fit_command(), batch_command(), plot_command(), calibrate_command(), validate_command(), doctor_command(), tco_command()};
}

}  // namespace hwplan::cli
