// hwplan estimate: memory and time of one workload on one device type (x count), with the layout searched
// when it is not given; with --deadline, the smallest count that finishes the job in time.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "core/strings.hpp"
#include "recommend/recommend.hpp"
#include "recommend/front_end.hpp"
#include "report/estimate_report.hpp"
#include "report/html_report.hpp"

namespace hwplan::cli {
namespace {

struct EstimateOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  WorkloadOptions workload;
  std::optional<std::string> deadline;
  long long max_count = 4096;
  // Set by a --deadline search: the count found and a sentence for the table output.
  int deadline_count = 0;
  std::string preface;
};

// "How many of this device to finish the job in time": the smallest count that meets the deadline, with the
// same counts and global batch recommend compares (the answers agree). Rewrites o.workload.
void resolve_deadline(EstimateOptions& o) {
  o.deadline_count = 0;
  o.preface.clear();
  if (!o.deadline) return;
  const io::Registry& registry = registry_of(*o.global);
  auto seconds = parse_duration_seconds(*o.deadline);
  if (!seconds) throw InputError({}, "--deadline", "'" + *o.deadline + "' is not a duration such as 14d, 36h, 90m");
  if (o.app && o.app->count("--count") > 0) throw InputError({}, "--count", "--deadline searches the count; give one or the other");
  if (o.workload.task == "infer") throw InputError({}, "--deadline", "applies to training tasks (inference: hwplan serve)");
  const Device& device = registry.device(o.workload.device);
  auto answer = smallest_count_for_deadline(registry, o.workload, device, *seconds, o.max_count);
  if (!answer) {
    // Without --global-batch the search compares counts at recommend's default batch, which bounds the data-parallel
    // ranks that can share the job: said, since a larger batch may be what meets the deadline.
    // Said only where a larger batch would meet it (and no --batch fixes the micro-batch the count search keeps).
    std::string batch;
    if (!o.workload.global_batch && !o.workload.batch) {
      const Model model = registry.model(o.workload.model);
      const long long g = default_global_batch(model, o.workload.task, default_sequence_length(model, o.workload));
      WorkloadSpec larger = o.workload;
      larger.global_batch = std::max<long long>(g, 1) * 256;
      const std::string unit = model.is_transformer() ? " sequences" : " samples";
      if (smallest_count_for_deadline(registry, larger, device, *seconds, o.max_count))
        batch = " at the default global batch of " + std::to_string(g) + unit + ", which no more than " + std::to_string(g) +
                " data-parallel ranks can share (a larger --global-batch lets more devices work on each step: at " +
                std::to_string(*larger.global_batch) + " some count meets the deadline)";
    }
    const bool samples = !registry.model(o.workload.model).is_transformer();
    throw Infeasible("no count of " + device.id + " up to " + std::to_string(o.max_count) + " (--max-count) finishes " +
                     human_count(*o.workload.tokens) + (samples ? " samples" : " tokens") + " within " + *o.deadline + batch);
  }
  o.workload = answer->workload;
  o.deadline_count = answer->count;
  o.preface = std::to_string(answer->count) + " x " + device.id + " is the smallest count (of 1, 2, 4, then multiples of 8 to 64, then powers of two) that finishes " +
              human_count(*o.workload.tokens) + " tokens within " + *o.deadline + " (global batch " +
              std::to_string(*o.workload.global_batch) + " sequences" +
              (answer->no_layout.empty() ? std::string()
                                         : fmt::format("; {} passed over: no layout splits that batch over them, --global-batch changes it",
                                                       fmt::join(answer->no_layout, ", "))) +
              ")\n\n";
}

// Resolves and runs the workload, then hands the query and its outcome to `answer` (the query owns the model
// the estimate points at, so it stays here).
template <class Answer>
auto with_estimate(EstimateOptions& o, Answer answer) {
  resolve_deadline(o);
  Query q = resolve_query(registry_of(*o.global), o.workload);
  Outcome out = run_query(q);
  if (no_layout(out)) throw no_layout_error(q, "--count");
  if (out.search && !out.search->found && out.estimate.params.total <= 0)
    throw Infeasible("no layout of " + std::to_string(q.input.system.count) + " x " + q.device->id + " can run " +
                     q.model.id + ": " + std::to_string(out.search->layouts_evaluated) + " layouts evaluated, none has a finite time");
  return answer(q, out);
}

nlohmann::json estimate_document(const EstimateOptions& o, const Query& q, const Outcome& out) {
  nlohmann::json j = report::estimate_json(q.input, out.estimate, out.search ? &*out.search : nullptr);
  if (o.deadline)
    j["deadline"] = {{"deadline", *o.deadline}, {"smallest_count", o.deadline_count}, {"global_batch", *o.workload.global_batch}};
  return j;
}

int run_estimate(EstimateOptions& o) {
  with_estimate(o, [&](const Query& q, const Outcome& out) {
    const SearchResult* search = out.search ? &*out.search : nullptr;
    if (out.search)
      std::fprintf(stderr, "hwplan: layout search: %lld layouts in %s (wall clock; not part of the output)\n",
                   out.search->layouts_evaluated, human_seconds(out.search->seconds).c_str());
    const report::Format format = format_of(*o.global);
    if (format == report::Format::kHtml)
      emit(*o.global, report::estimate_html(q.input, out.estimate, search, html_context(*o.global)));
    else if (format == report::Format::kJson)
      emit(*o.global, estimate_document(o, q, out).dump(2) + "\n");
    else
      emit(*o.global, (format == report::Format::kTable ? o.preface : std::string()) +
                          report::estimate_text(q.input, out.estimate, search, format));
    return 0;
  });
  return 0;
}

CommandResult estimate_result(EstimateOptions& o) {
  return with_estimate(o, [&](const Query& q, const Outcome& out) { return CommandResult{estimate_document(o, q, out), kExitOk}; });
}

}  // namespace

Command estimate_command() {
  auto o = std::make_shared<EstimateOptions>();
  Command c;
  c.name = "estimate";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("estimate", "Memory and time of a workload on a device (x count).")->footer(R"(Examples:
  hwplan estimate --model llama-2-7b --device rtx-4090 --task lora --batch 4 --seq 1024
  hwplan estimate --model gpt3-175b --device a100-80gb-sxm --count 1024 --global-batch 1536 --tokens 3e11
  hwplan estimate --model llama-2-7b --device h100-sxm --tokens 1e12 --deadline 30d
  hwplan estimate --model llama-3-70b --device h100-sxm --count 4 --task infer --batch 16 --prompt 2048 --generate 512)");
    add_workload_options(*o->app, o->workload);
    o->app->add_option("--deadline", o->deadline, "Training: the smallest --count that finishes --tokens within this (14d, 36h)");
    o->app->add_option("--max-count", o->max_count, "With --deadline: the most devices to consider")->capture_default_str();
    group_options(*o->app, "Deadline", {"--deadline", "--max-count"});
    add_format_option(*o->app, g, /*html=*/true);
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_estimate(*o); };
  c.result = [o] { return estimate_result(*o); };
  c.reset = [o] {
    o->workload = {};
    o->deadline.reset();
    o->max_count = 4096;
  };
  return c;
}

std::vector<Command> all_commands() {
  return {catalog_command(), models_command(), estimate_command(), recommend_command(), fit_command(), compare_command(),
          batch_command(), serve_command(), plot_command(), calibrate_command(), validate_command(), doctor_command(), tco_command(),
          assumptions_command()};
}

}  // namespace hwplan::cli
