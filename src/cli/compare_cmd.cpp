// hwplan compare: the same workload on several devices (x counts) side by side.
#include <deque>
#include <memory>

#include "cli/commands.hpp"
#include "report/compare_report.hpp"
#include "recommend/front_end.hpp"

namespace hwplan::cli {
namespace {

struct CompareOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  WorkloadOptions workload;
  std::vector<std::string> devices;
  std::vector<long long> counts;
};

// Each (device, count) resolved and run as `hwplan estimate` would; the queries own what the estimates point at.
struct Comparison {
  std::deque<Query> queries;
  std::deque<Outcome> outcomes;
  std::vector<report::Compared> items;
};

void compute(CompareOptions& o, Comparison& c) {
  if (!o.workload.device.empty()) throw InputError({}, "--device", "compare takes --devices a,b,c (not --device)");
  if (o.devices.empty()) throw InputError({}, "--devices", "give at least one device, e.g. --devices h100-sxm,mi300x");
  const CLI::Option* count_flag = o.app ? o.app->get_option_no_throw("--count") : nullptr;
  if (!o.counts.empty() && ((count_flag && count_flag->count() > 0) || o.workload.count != 1))
    throw InputError({}, "--count", "give --counts a,b (the counts to compare) or --count N, not both: --counts replaces it");
  std::vector<long long> counts = o.counts.empty() ? std::vector<long long>{o.workload.count} : o.counts;
  for (long long n : counts)
    if (n < 1) throw InputError({}, "--counts", "each count must be at least 1");
  const io::Registry& registry = registry_of(*o.global);
  // An unknown id is an error naming the flag that gave it, with a suggestion.
  for (const auto& device : o.devices) {
    try {
      registry.device(device);
    } catch (const InputError& e) {
      throw InputError({}, "--devices", e.detail());
    }
  }
  for (const auto& device : o.devices)
    for (long long n : counts) {
      WorkloadSpec w = o.workload;
      w.device = device;
      w.count = n;
      Query& q = c.queries.emplace_back(resolve_query(registry, w));
      Outcome& out = c.outcomes.emplace_back(run_query(q));
      if (no_layout(out)) throw no_layout_error(q, "--counts");
    }
  for (std::size_t i = 0; i < c.queries.size(); ++i)
    c.items.push_back({&c.queries[i].input, &c.outcomes[i].estimate, c.outcomes[i].search ? &*c.outcomes[i].search : nullptr});
}

int run_compare(CompareOptions& o) {
  Comparison c;
  compute(o, c);
  if (format_of(*o.global) == report::Format::kHtml)
    emit(*o.global, report::compare_html(c.items, html_context(*o.global)));
  else
    emit(*o.global, report::compare_text(c.items, format_of(*o.global)));
  return kExitOk;
}

CommandResult compare_result(CompareOptions& o) {
  Comparison c;
  compute(o, c);
  return {report::compare_json(c.items), kExitOk};
}

}  // namespace

Command compare_command() {
  auto o = std::make_shared<CompareOptions>();
  Command c;
  c.name = "compare";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("compare", "The same workload on several devices side by side, the best of each row marked.")
                 ->footer(R"(Examples:
  hwplan compare --model llama-2-7b --devices rtx-4090,a100-80gb-sxm,h100-sxm --task lora --batch 4 --seq 1024
  hwplan compare --model llama-3-70b --devices h100-sxm,mi300x --counts 2,4 --task infer --batch 16)");
    add_workload_options(*o->app, o->workload, /*device_required=*/false);
    o->app->add_option("--devices", o->devices, "Devices to compare, comma-separated")->delimiter(',')->required();
    o->app->add_option("--counts", o->counts, "Device counts to try on each, comma-separated (default: --count)")->delimiter(',');
    add_format_option(*o->app, g, /*html=*/true);
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_compare(*o); };
  c.result = [o] { return compare_result(*o); };
  c.reset = [o] {
    o->workload = {};
    o->devices.clear();
    o->counts.clear();
  };
  return c;
}

}  // namespace hwplan::cli
