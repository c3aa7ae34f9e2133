// hwplan estimate: memory and time of one workload on one device type (x count), with the layout searched
// when it is not given.
#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "core/strings.hpp"
#include "recommend/recommend.hpp"
#include "report/estimate_report.hpp"

namespace hwplan::cli {
namespace {

struct EstimateOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  WorkloadOptions workload;
  std::optional<std::string> deadline;
  long long max_count = 4096;
};

int run_estimate(EstimateOptions& o) {
  io::Registry registry = make_registry(*o.global);
  std::string preface;
  int deadline_count = 0;
  if (o.deadline) {
    // "How many of this device to finish the job in time": the smallest count that meets the deadline, with
    // the same counts and global batch recommend compares (the answers agree).
    auto seconds = parse_duration_seconds(*o.deadline);
    if (!seconds) throw InputError({}, "--deadline", "'" + *o.deadline + "' is not a duration such as 14d, 36h, 90m");
    if (o.app->count("--count") > 0) throw InputError({}, "--count", "--deadline searches the count; give one or the other");
    if (o.workload.task == "infer") throw InputError({}, "--deadline", "applies to training tasks (inference: hwplan serve)");
    const Device& device = registry.device(o.workload.device);
    auto answer = smallest_count_for_deadline(registry, o.workload, device, *seconds, o.max_count);
    if (!answer)
      throw Infeasible("no count of " + device.id + " up to " + std::to_string(o.max_count) + " (--max-count) finishes " +
                       human_count(*o.workload.tokens) + " tokens within " + *o.deadline);
    o.workload = answer->workload;
    deadline_count = answer->count;
    preface = std::to_string(answer->count) + " x " + device.id + " is the smallest count (of 1, 2, 4, 8, 16, ...) that finishes " +
              human_count(*o.workload.tokens) + " tokens within " + *o.deadline + " (global batch " +
              std::to_string(*o.workload.global_batch) + " sequences)\n\n";
  }
  Query q = resolve_query(registry, o.workload);
  Outcome out = run_query(q);
  if (out.search && out.search->layouts_evaluated == 0)
    throw InputError({}, "count", "no parallel layout of " + std::to_string(q.input.system.count) +
                                      " devices matches the fixed --tp/--pp/--dp for " + q.model.id);
  if (out.search && !out.search->found && out.estimate.params.total <= 0)
    throw Infeasible("no layout of " + std::to_string(q.input.system.count) + " x " + q.device->id + " can run " +
                     q.model.id + ": " + std::to_string(out.search->layouts_evaluated) + " layouts evaluated, none has a finite time");
  if (out.search)
    std::fprintf(stderr, "hwplan: layout search: %lld layouts in %s (wall clock; not part of the output)\n",
                 out.search->layouts_evaluated, human_seconds(out.search->seconds).c_str());
  const SearchResult* search = out.search ? &*out.search : nullptr;
  const report::Format format = format_of(*o.global);
  if (o.deadline && format == report::Format::kJson) {
    nlohmann::json j = report::estimate_json(q.input, out.estimate, search);
    j["deadline"] = {{"deadline", *o.deadline}, {"smallest_count", deadline_count}, {"global_batch", *o.workload.global_batch}};
    emit(*o.global, j.dump(2) + "\n");
    return 0;
  }
  emit(*o.global, (format == report::Format::kTable ? preface : std::string()) +
                      report::estimate_text(q.input, out.estimate, search, format));
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
    o->app->add_option("--deadline", o->deadline, "Training: the smallest --count that finishes --tokens within this (14d, 36h)");
    o->app->add_option("--max-count", o->max_count, "With --deadline: the most devices to consider")->capture_default_str();
    add_format_option(*o->app, g);
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_estimate(*o); };
  return c;
}

std::vector<Command> all_commands() {
  return {catalog_command(), models_command(), estimate_command(), recommend_command(), fit_command(), batch_command(), serve_command(), plot_command(), calibrate_command(), validate_command(), doctor_command()};
}

}  // namespace hwplan::cli
