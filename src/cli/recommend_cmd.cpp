// hwplan recommend: rank every catalog device (x count) for a workload under constraints.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.hpp"
#include "cli/serve_setup.hpp"
#include "report/recommend_report.hpp"
#include "core/strings.hpp"
#include "recommend/front_end.hpp"

namespace hwplan::cli {
namespace {

struct RecommendOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  WorkloadOptions workload;
  RecommendSpec spec;
  bool buy = false;
  bool rent = false;
  std::optional<double> own_years;
  int threads = 0;
  ServeOptions serve;  // --task serve: traffic, targets, engine scheduler
};

Recommendation compute(RecommendOptions& o) {
  const io::Registry& registry = registry_of(*o.global);
  if (o.buy + o.rent + o.own_years.has_value() > 1) throw InputError({}, "--buy", "give one of --buy, --rent, --own-years");
  o.spec.cost_basis = o.buy ? "buy" : o.rent ? "rent" : o.own_years ? "own" : "auto";
  if (o.own_years) {
    if (!(*o.own_years > 0 && *o.own_years <= 20)) throw InputError({}, "--own-years", "must be in (0, 20]");
    o.spec.own_years = *o.own_years;
  }
  if (o.spec.top < 1) throw InputError({}, "--top", "must be at least 1");
  if (o.spec.budget_usd && !(*o.spec.budget_usd > 0)) throw InputError({}, "--budget-usd", "must be positive");
  // --device / --devices restrict the candidates; --count fixes the count (both used to be ignored).
  if (o.app->count("--device") > 0) o.spec.devices.insert(o.spec.devices.begin(), o.workload.device);
  if (o.app->count("--count") > 0) o.spec.count = o.workload.count;
  int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (serve_flags_given(o.serve))
    throw InputError({}, "--task", "traffic, latency targets and scheduler flags (--rate, --concurrency, --ttft-p95, ...) apply "
                                   "to --task serve, not --task " + o.workload.task);
  return recommend(registry, o.workload, o.spec, threads);
}

// --task serve: the spec as serving reads it, and the worker threads.
int serve_spec(RecommendOptions& o) {
  if (o.spec.top < 1) throw InputError({}, "--top", "must be at least 1");
  if (o.spec.max_count < 1) throw InputError({}, "--max-count", "must be at least 1");
  // Serving is sized by traffic and latency targets: a job's budget, deadline or one stream's decode speed are other
  // questions (--tpot-p95 bounds the time per output token).
  for (const char* flag : {"--budget-usd", "--deadline", "--min-decode-tps", "--porting-cost-usd"})
    if (o.app->count(flag) > 0)
      throw InputError({}, flag, std::string("applies to the training and inference tasks, not --task serve") +
                                     (std::string(flag) == "--min-decode-tps" ? " (--tpot-p95 bounds the time per output token)" : ""));
  if (o.buy + o.rent + o.own_years.has_value() > 1) throw InputError({}, "--buy", "give one of --buy, --rent, --own-years");
  // Serving ranks on cost per million tokens: rented, or owned over a horizon (--buy: the default 3 years).
  o.spec.cost_basis = o.buy ? "buy" : o.rent ? "rent" : o.own_years ? "own" : "auto";
  if (o.own_years) {
    if (!(*o.own_years > 0 && *o.own_years <= 20)) throw InputError({}, "--own-years", "must be in (0, 20]");
    o.spec.own_years = *o.own_years;
  }
  o.serve.own_years = o.spec.own_years;
  if (o.app->count("--device") > 0) o.spec.devices.insert(o.spec.devices.begin(), o.workload.device);
  // The serving plan sizes the fleet to the traffic: --count is the most devices it may take (as --max-count).
  if (o.app->count("--count") > 0) {
    if (o.workload.count < 1) throw InputError({}, "--count", "must be at least 1");
    o.spec.count = o.workload.count;
  }
  return o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int run_recommend(RecommendOptions& o) {
  if (o.workload.task == "serve") return run_recommend_serve(*o.global, o.workload, o.serve, o.spec, serve_spec(o));
  Recommendation r = compute(o);
  if (format_of(*o.global) == report::Format::kHtml)
    emit(*o.global, report::recommendation_html(r, o.workload, o.spec, html_context(*o.global)));
  else
    emit(*o.global, report::render_recommendation(r, o.workload, o.spec, format_of(*o.global)));
  return r.candidates.empty() ? kExitNothingFeasible : kExitOk;
}

CommandResult recommend_result(RecommendOptions& o) {
  if (o.workload.task == "serve") return recommend_serve_result(*o.global, o.workload, o.serve, o.spec, serve_spec(o));
  Recommendation r = compute(o);
  return {report::recommendation_json(r, o.workload, o.spec), r.candidates.empty() ? kExitNothingFeasible : kExitOk};
}

}  // namespace

Command recommend_command() {
  auto o = std::make_shared<RecommendOptions>();
  Command c;
  c.name = "recommend";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("recommend", "Which hardware to buy or rent for a workload, ranked and explained.")->footer(R"(Examples:
  hwplan recommend --model llama-2-7b --task lora --budget-usd 3000 --buy
  hwplan recommend --model llama-3-70b --task infer --batch 8 --min-decode-tps 20 --rent
  hwplan recommend --model 1b --tokens 2e10 --deadline 7d --optimize cost
  hwplan recommend --model llama-2-7b --tokens 1e12 --deadline 30d --devices h100-sxm,a100-80gb-sxm --max-count 1024
  hwplan recommend --model 3b --task infer --weights int4 --class edge --max-power-w 15
  hwplan recommend --model llama-3-8b --task serve --rate 50 --prompt 2000 --generate 300 --ttft-p95 1 --tpot-p95 0.05)");
    add_workload_options(*o->app, o->workload, /*device_required=*/false);
    // recommend searches the count unless it is given, and ranks serving too.
    o->app->get_option("--count")->description("Number of devices (default: searched, up to --max-count; with --task serve the most "
                                               "devices the fleet may take)")->default_str("");
    o->app->get_option("--task")->description("train | finetune | lora | qlora | infer | serve");
    o->app->add_option("--budget-usd", o->spec.budget_usd, "Total budget (purchase, or rental for the job), e.g. 3000 or 3k; --buy prices the accelerators alone (hosts and networking: --own-years, or hwplan tco)")
        ->transform(expand_count_suffix, "", "");
    o->app->add_option("--max-count", o->spec.max_count, "Most devices to consider")->capture_default_str();
    o->app->add_option("--max-power-w", o->spec.max_power_w, "Power limit for all devices together (TDP)");
    o->app->add_option("--deadline", o->spec.deadline, "Finish the job within, e.g. 14d, 36h");
    o->app->add_flag("--buy", o->buy, "Cost = purchase price of the accelerators (street price, else launch MSRP; a --prices quote replaces it; no host or network: --own-years counts them)");
    o->app->add_flag("--rent", o->rent, "Cost = cloud price per hour x job time");
    o->app->add_option("--own-years", o->own_years,
                       "Cost = owning for N years (devices, host share, electricity, space, operations, less resale; "
                       "as hwplan tco)");
    o->app->add_option("--class", o->spec.classes, "Only these classes: consumer, workstation, datacenter, npu, edge");
    o->app->add_option("--vendor", o->spec.vendors, "Only these vendors");
    o->app->add_option("--exclude", o->spec.exclude, "Leave out these devices")->delimiter(',');
    o->app->add_option("--devices", o->spec.devices, "Only these devices (comma-separated ids or aliases)")->delimiter(',');
    o->app->add_flag("--require-interconnect", o->spec.require_interconnect, "Multi-device only with an NVLink-class fabric");
    o->app->add_option("--top", o->spec.top, "How many candidates to show")->capture_default_str();
    o->app->add_option("--optimize", o->spec.optimize, "cost | time | energy | balanced")->capture_default_str();
    o->app->add_option("--porting-cost-usd", o->spec.porting_cost_usd, "One-off cost of porting to a non-CUDA stack (CANN)")
        ->capture_default_str();
    o->app->add_option("--min-decode-tps", o->spec.min_decode_tokens_per_second, "Inference: decode tokens/s per stream");
    o->app->add_option("--threads", o->threads, "Worker threads (default: all cores); results do not depend on it");
    group_options(*o->app, "Budget and requirements",
                  {"--budget-usd", "--buy", "--rent", "--own-years", "--porting-cost-usd", "--max-power-w", "--deadline",
                   "--min-decode-tps"});
    group_options(*o->app, "Candidates",
                  {"--class", "--vendor", "--exclude", "--devices", "--require-interconnect", "--max-count"});
    group_options(*o->app, "Ranking", {"--top", "--optimize", "--threads"});
    add_serve_options(*o->app, o->serve, /*threads_flag=*/false);
    add_format_option(*o->app, g, /*html=*/true);
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_recommend(*o); };
  c.result = [o] { return recommend_result(*o); };
  c.reset = [o] {
    o->workload = {};
    o->spec = {};
    o->buy = o->rent = false;
    o->own_years.reset();
    o->threads = 0;
    o->serve = ServeOptions{};
    o->serve.workload.task = "infer";
  };
  return c;
}

}  // namespace hwplan::cli
