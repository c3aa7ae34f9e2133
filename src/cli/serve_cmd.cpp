// hwplan serve: how many devices serve this traffic within these latency targets, from a discrete-event simulation
// of the engine's scheduler (src/serve) over the estimators' step model.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "cli/commands.hpp"
#include "cli/serve_setup.hpp"
#include "estimators/estimate.hpp"
#include "report/html_report.hpp"
#include "report/plots.hpp"
#include "report/serve_report.hpp"
#include "recommend/front_end.hpp"

namespace hwplan::cli {
namespace {

struct ServeCommand {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  ServeOptions options;
};

// The question resolved and answered; owns what the report points at.
struct Served {
  ServeSetup setup;
  serve::ServeAnswer answer;

  report::ServeReport report() const {
    return {&setup.model, setup.device, &setup.question, &answer, setup.traffic, setup.warnings};
  }
  int exit_code() const {
    return answer.chosen && !answer.at_load.unservable && !answer.overloaded ? kExitOk : kExitNothingFeasible;
  }
};

void answer(ServeCommand& c, Served& s) {
  s.setup = prepare_serve(registry_of(*c.global), c.options);
  const Device& device = *s.setup.device;
  s.answer = serve::plan_serving(s.setup.layouts, s.setup.question, threads_of(c.options));
  const serve::ServeAnswer& a = s.answer;
  if (a.chosen && a.at_load.unservable)
    s.setup.warnings.push_back(fmt::format("a request of {} tokens does not fit the KV cache of {} tokens: nothing was simulated",
                                           a.at_load.longest_request_tokens, a.layouts[*a.chosen].kv.tokens));
  if (!device.price.cloud_usd_per_hour)
    s.setup.warnings.push_back("the catalog has no cloud price for " + device.name + ": no cost per million tokens");
  // The prices the costs per million tokens rest on, when they are old (as hwplan tco says it).
  for (const std::string& note : {stale_rental_price_note(device), stale_purchase_price_note(device)})
    if (!note.empty()) s.setup.warnings.push_back(note);
  // What the chosen layout's estimate assumed or fell back to (a precision the device lacks, an unmeasured GEMM
  // rate, an assumed network): it sets every step's time, so serve says it as estimate does.
  if (!s.setup.layouts.empty())
    for (const auto& w : estimate(*s.setup.layouts[a.chosen.value_or(0)]).warnings)
      if (std::find(s.setup.warnings.begin(), s.setup.warnings.end(), w) == s.setup.warnings.end()) s.setup.warnings.push_back(w);
}

int run_serve(ServeCommand& c) {
  Served s;
  answer(c, s);
  if (format_of(*c.global) == report::Format::kHtml) {
    // The picture of hwplan plot serve for this device: p95 latencies of one replica against its load.
    std::vector<report::LatencySeries> series;
    if (auto one = report::serve_latency_series(s.setup.layouts, s.setup.question, s.answer, s.setup.device->id))
      series.push_back(std::move(*one));
    report::LatencyChart chart = report::serve_latency_chart(s.setup.model.id, std::move(series), s.setup.question);
    const EstimateInput* layout = s.setup.layouts[s.answer.chosen.value_or(0)];
    emit(*c.global, report::serve_html(s.report(), layout, chart, html_context(*c.global)));
  } else {
    emit(*c.global, report::serve_text(s.report(), format_of(*c.global)));
  }
  return s.exit_code();
}

CommandResult serve_result(ServeCommand& c) {
  Served s;
  answer(c, s);
  return {report::serve_json(s.report()), s.exit_code()};
}

}  // namespace

Command serve_command() {
  auto o = std::make_shared<ServeCommand>();
  Command c;
  c.name = "serve";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->options.workload.task = "infer";
    o->app = app.add_subcommand("serve", "Serving capacity: devices needed for a traffic within latency targets (simulated).")
                 ->footer(R"(Examples:
  hwplan serve --model llama-3-8b --device h100-sxm --rate 20 --prompt 2000 --generate 300 --ttft-p95 1 --tpot-p95 0.05
  hwplan serve --model llama-3-70b --device mi300x --concurrency 64 --prompt 1000 --generate 500 --format json
  hwplan serve --model llama-2-7b --device l40s --trace azure_conv.csv --ttft-p95 2 --engine sglang

Traffic: --rate (Poisson; --burstiness CV for gamma arrivals), --concurrency (closed loop: each client sends its
next request when the previous one ends), or --trace FILE (CSV or JSONL: TIMESTAMP/ContextTokens/GeneratedTokens
of the Azure LLM inference traces, or prompt_tokens|input_len and output_tokens|output_len; a vLLM benchmark
result JSON gives lengths only). --requests defaults to 2000 (in a closed loop, ten rounds of the clients a replica
carries if more; the trace's rows, at most 20,000, with --trace); the first 10% are warm-up and left out of the
statistics (a closed loop's latencies also leave out its first and last rounds). With targets, the rate (or concurrency) per replica is searched and the
replicas needed for the asked load follow; without targets the figures describe --count devices at that load.
Engine defaults (overridable): vllm block 16, KV what weights, activations and runtime leave of 0.90 of the device,
8192 batched tokens and 1024 sequences on >= 70 GiB devices but A100s (2048 and 256 on the rest); sglang page 1, 0.88, 8192
tokens on >= 70 GiB devices (4096 on the rest); trtllm block 32, 0.90, 8192 tokens, 2048 sequences; llamacpp 4 slots, 2048 tokens. vllm takes KV blocks on
demand and preempts the newest sequence when the cache is full (its prefix cache keeps the blocks until evicted);
sglang too, admitting a request only beside an estimate of the running outputs, running prefills in steps of their
own first, and recomputing a preempted sequence in full; trtllm and llamacpp reserve a request's prompt and output
when they start it and never preempt.
Exit codes: 0 ok, 2 bad input (trace rows: file:line), 3 no layout serves the load within the targets, or the --count
devices cannot keep up with an open-loop rate (overloaded), or a request needs more KV cache than a replica holds.)");
    add_workload_options(*o->app, o->options.workload);
    add_serve_options(*o->app, o->options);
    describe_serving_engines(*o->app);
    o->app->add_option("--own-years", o->options.own_years,
                       "Horizon of the owned cost per million tokens (bought new, run around the clock, resold: hwplan tco)")
        ->capture_default_str();
    group_options(*o->app, "Cost", {"--own-years"});
    add_format_option(*o->app, g, /*html=*/true);
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_serve(*o); };
  c.result = [o] { return serve_result(*o); };
  c.reset = [o] {
    o->options = ServeOptions{};
    o->options.workload.task = "infer";
  };
  return c;
}

}  // namespace hwplan::cli
