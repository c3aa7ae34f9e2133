#include "report/serve_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace hwplan::report {
using nlohmann::json;
using serve::Binding;
using serve::Metric;

namespace {

// What the simulated latencies contain, said with every answer: the server's fixed request handling
// (EngineConfig::request_overhead_seconds) and the engine's side, not the server's queue under heavy load, where the
// published runs (data/measurements/serving.yaml) measured far more TTFT.
constexpr const char* kLatencyScope =
    "from the client's send: the server's handling of the request (a fixed --request-overhead-ms), then the engine's "
    "time (waiting for a step, prefill, decode); the server's own queue under load is not in it (measured TTFT grows "
    "faster than this near saturation)";

const char* metric_name(Metric m) {
  switch (m) {
    case Metric::kTtft: return "TTFT";
    case Metric::kTpot: return "TPOT";
    case Metric::kE2e: return "end-to-end latency";
    case Metric::kNone: break;
  }
  return "";
}

json percentiles(const serve::Percentiles& p) { return json{{"p50", p.p50}, {"p95", p.p95}, {"p99", p.p99}, {"mean", p.mean}}; }
// Figures nothing was simulated for (no layout serves the load, a request longer than the cache) or that do not
// exist (the time per output token of one-token replies): null, not 0.
json percentiles_or_null(const serve::Percentiles& p, bool defined) {
  if (!defined) return json{{"p50", nullptr}, {"p95", nullptr}, {"p99", nullptr}, {"mean", nullptr}};
  return percentiles(p);
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

const serve::LayoutOption* chosen(const ServeReport& r) {
  return r.answer->chosen ? &r.answer->layouts[*r.answer->chosen] : nullptr;
}

// Whether the figures at the load were simulated: a layout serves it, every request fits the cache, some were
// measured. Otherwise latencies, throughput and energy are not given (JSON null, CSV empty, no text rows).
bool simulated(const ServeReport& r) {
  const serve::SimResult& s = r.answer->at_load;
  return chosen(r) && !s.unservable && s.measured > 0;
}

std::string load_unit(const ServeReport& r) { return r.question->load.closed_loop ? "concurrent clients" : "requests/s"; }

}  // namespace

const char* binding_key(Binding b) {
  switch (b) {
    case Binding::kNone: return "none";
    case Binding::kKvCapacity: return "kv_capacity";
    case Binding::kMaxSequences: return "max_sequences";
    case Binding::kDecodeBandwidth: return "decode_bandwidth";
    case Binding::kDecodeCompute: return "decode_compute";
    case Binding::kPrefillCompute: return "prefill_compute";
    case Binding::kQueueing: return "ttft_queueing";
    case Binding::kUnloaded: return "target_unloaded";
    case Binding::kRequestTooLong: return "request_too_long";
  }
  return "none";
}

std::string rounds_left_out(bool first, bool last) {
  return first && last ? "a closed loop's first and last rounds"
         : first       ? "a closed loop's first round"
         : last        ? "a closed loop's last round"
                       : "";
}

std::string binding_words(const ServeReport& r) {
  const serve::LayoutOption* o = chosen(r);
  if (!o) {
    for (const auto& l : r.answer->layouts)
      if (l.fits)
        return fmt::format("no layout meets the targets at any load ({}: {})", serve::layout_name(l.tp, l.pp),
                           binding_key(l.capacity.binding));
    return "the weights, the activations and the longest request do not fit any layout";
  }
  const serve::CapacityResult& c = o->capacity;
  std::string first = c.missed != Metric::kNone ? fmt::format("the {} target is the first missed above {:.3g} {}; ", metric_name(c.missed),
                                                              c.max_load.value_or(0), load_unit(r))
                      : c.clients_capped_by_requests
                          ? fmt::format("every load up to the {:.0f} requests simulated meets the targets (give --requests above "
                                        "it to search further); ",
                                        c.max_load.value_or(0))
                      : c.saturated && r.question->load.closed_loop
                          ? fmt::format("the replica batches {:.3g} {} at once; more only wait for a place in the batch, "
                                        "which no TTFT or end-to-end target limits; ",
                                        c.max_load.value_or(0), load_unit(r))
                      : c.saturated ? fmt::format("the replica saturates above {:.3g} {} (the queue grows without bound); ",
                                                  c.max_load.value_or(0), load_unit(r))
                                    : "";
  if (c.clients_capped_by_requests) return first.substr(0, first.size() - 2);
  switch (c.binding) {
    case Binding::kNone: return "none searched (no latency target given): the figures describe the given load";
    case Binding::kKvCapacity:
      return first + fmt::format("KV-cache capacity: {} tokens hold about {} requests of the mean length at once, so admissions "
                                 "wait for free blocks and running sequences are preempted",
                                 o->kv.tokens, o->kv.max_sequences);
    case Binding::kMaxSequences:
      return first + fmt::format("the engine's cap of {} batched sequences", r.question->engine.max_sequences);
    case Binding::kDecodeBandwidth:
      return first + "decode memory bandwidth: every step reads the weights and each sequence's KV cache, so the time per "
                     "output token grows with the batch";
    case Binding::kDecodeCompute: return first + "decode compute: the batched decode steps are compute-bound";
    case Binding::kPrefillCompute: return first + "prefill compute: prompt GEMMs and attention fill most of each step";
    case Binding::kQueueing:
      return first + "the TTFT target: requests queue for a place in the batch before their first token";
    case Binding::kUnloaded:
      return fmt::format("the {} target is missed even with one request at a time", metric_name(c.missed));
    case Binding::kRequestTooLong:
      return fmt::format("a request does not fit the KV cache of {} tokens", o->kv.tokens);
  }
  return "";
}

json serve_json(const ServeReport& r) {
  const serve::ServeAnswer& a = *r.answer;
  const serve::ServeQuestion& q = *r.question;
  const serve::LayoutOption* o = chosen(r);
  const serve::SimResult& s = a.at_load;
  json j;
  j["schema_version"] = 1;
  j["model"] = {{"id", r.model->id}, {"name", r.model->name}};
  j["device"] = {{"id", r.device->id}, {"name", r.device->name}};
  j["engine"] = {{"preset", q.engine.preset},
                 {"block_tokens", q.engine.block_tokens},
                 {"kv_memory_fraction", kv_fraction_for(q.engine, o ? o->tp : 1)},
                 {"kv_memory_fraction_of", to_string(q.engine.kv_budget)},
                 {"kv_profile", to_string(q.engine.kv_profile)},
                 {"max_batched_tokens", q.engine.max_batched_tokens},
                 {"max_sequences", q.engine.max_sequences},
                 {"chunked_prefill", q.engine.chunked_prefill},
                 {"preempted_kv", q.engine.keep_preempted_kv ? "cached" : "freed"},
                 {"kv_admission", to_string(q.engine.kv_admission)},
                 {"separate_prefill", q.engine.separate_prefill},
                 {"scheduler_steps", q.engine.scheduler_steps},
                 {"overlap_scheduling", q.engine.overlap_scheduling},
                 {"step_overhead_seconds", q.overhead_seconds},
                 {"request_overhead_seconds", q.engine.request_overhead_seconds}};
  j["traffic"] = {{"description", r.traffic},
                  {"closed_loop", q.load.closed_loop},
                  {q.load.closed_loop ? "concurrency" : "requests_per_second", q.load.value},
                  {"mean_prompt_tokens", q.traffic.prompt.average()},
                  {"mean_output_tokens", q.traffic.output.average()},
                  {"prefix_cache_hit", q.traffic.prefix_cache_hit}};
  j["targets"] = {{"ttft_p95_seconds", opt(q.targets.ttft_p95)}, {"ttft_p99_seconds", opt(q.targets.ttft_p99)},
                  {"tpot_p95_seconds", opt(q.targets.tpot_p95)}, {"tpot_p99_seconds", opt(q.targets.tpot_p99)},
                  {"e2e_p95_seconds", opt(q.targets.e2e_p95)},   {"e2e_p99_seconds", opt(q.targets.e2e_p99)}};
  json sv;
  sv["devices_total"] = o ? json(o->devices) : json(nullptr);
  sv["replicas"] = o ? json(o->replicas) : json(nullptr);
  sv["layout"] = {{"tp", o ? json(o->tp) : json(nullptr)}, {"pp", o ? json(o->pp) : json(nullptr)}};
  sv["max_rate_per_replica"] = o && !q.load.closed_loop ? opt(o->capacity.max_load) : json(nullptr);
  if (q.load.closed_loop) sv["max_concurrency_per_replica"] = o ? opt(o->capacity.max_load) : json(nullptr);
  sv["meets_targets"] = a.meets_targets;
  // Open loop: whether the replicas keep up with the load (false: the queue grows without bound), and the most one
  // replica sustains where that was simulated.
  sv["sustainable"] = o && !s.unservable ? json(!a.overloaded) : json(nullptr);
  sv["saturated_rate_per_replica"] = opt(a.saturated_rate_per_replica);
  sv["binding_constraint"] = binding_words(r);
  sv["binding_constraint_key"] = o ? binding_key(o->capacity.binding) : "none";
  sv["load_per_replica"] = o ? json(a.load_per_replica.value) : json(nullptr);
  j["serve"] = sv;
  const bool figures = simulated(r);
  j["latency"] = {{"ttft_seconds", percentiles_or_null(s.ttft, figures)},
                  {"tpot_seconds", percentiles_or_null(s.tpot, figures && s.tpot_defined)},
                  {"e2e_seconds", percentiles_or_null(s.e2e, figures)},
                  {"scope", kLatencyScope}};
  const double reps = o ? static_cast<double>(o->replicas) : 0;
  auto rate = [&](double per_replica) { return figures ? json(per_replica * reps) : json(nullptr); };
  j["throughput"] = {{"requests_per_second", rate(s.requests_per_second)},
                     {"output_tokens_per_second", rate(s.output_tokens_per_second)},
                     {"total_tokens_per_second", rate(s.total_tokens_per_second)}};
  j["kv_cache"] = {{"capacity_tokens", o ? json(o->kv.tokens) : json(nullptr)},
                   {"max_sequences", o ? json(o->kv.max_sequences) : json(nullptr)},
                   {"bytes_per_token", o ? json(o->kv.bytes_per_token) : json(nullptr)}};
  j["cost"] = {{"usd_per_million_output_tokens", opt(a.usd_per_million_output_tokens)},
               {"basis", a.usd_per_million_output_tokens ? "rent" : "none"},
               {"usd_per_device_hour", opt(r.device->price.cloud_usd_per_hour)},
               {"own_usd_per_million_output_tokens", opt(a.own_usd_per_million_output_tokens)},
               {"own_years", a.own_years}};
  j["energy"] = {{"kwh_per_million_output_tokens", figures ? json(a.kwh_per_million_output_tokens) : json(nullptr)},
                 {"power_fraction_of_tdp", figures ? json(a.power_fraction) : json(nullptr)}};
  j["simulation"] = {{"requests", s.records.size()},
                     {"measured_requests", s.measured},
                     {"seconds", s.seconds},
                     {"steps", s.steps},
                     {"preemptions", s.preemptions},
                     {"mean_batch", s.mean_batch},
                     {"warmup_fraction", q.traffic.warmup_fraction},
                     {"first_round_left_out", s.first_round_left_out},
                     {"last_round_left_out", s.last_round_left_out},
                     {"seed", q.traffic.seed}};
  json layouts = json::array();
  for (const auto& l : a.layouts)
    if (l.tried) layouts.push_back({{"tp", l.tp},
                       {"pp", l.pp},
                       {"fits", l.fits},
                       {"kv_capacity_tokens", l.kv.tokens},
                       {"max_load_per_replica", opt(l.capacity.max_load)},
                       {"replicas", l.replicas},
                       {"devices", l.devices},
                       {"binding_constraint_key", binding_key(l.capacity.binding)},
                       {"simulations", l.capacity.simulations}});
  j["layouts"] = layouts;
  j["warnings"] = r.warnings;
  return j;
}

std::string serve_text(const ServeReport& r, Format format) {
  if (format == Format::kJson) return serve_json(r).dump(2) + "\n";
  const serve::ServeAnswer& a = *r.answer;
  const serve::LayoutOption* o = chosen(r);
  const serve::SimResult& s = a.at_load;
  const double reps = o ? static_cast<double>(o->replicas) : 0;
  auto ms = [](double v) { return num(v * 1000, 1); };
  if (format == Format::kCsv || format == Format::kMarkdown) {
    Table t;
    t.header = {"device", "tp", "pp", "replicas", "devices_total", "max_load_per_replica", "meets_targets",
                "ttft_p50_ms", "ttft_p95_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p95_ms", "tpot_p99_ms",
                "e2e_p50_s", "e2e_p95_s", "e2e_p99_s", "requests_per_second", "output_tokens_per_second",
                "total_tokens_per_second", "kv_capacity_tokens", "kv_max_sequences", "usd_per_million_output_tokens",
                "own_usd_per_million_output_tokens", "kwh_per_million_output_tokens", "binding_constraint"};
    // A CSV carries the warnings in a column (several joined by " | "); markdown prints them under the table.
    if (format == Format::kCsv) t.header.push_back("warnings");
    // Empty where nothing was simulated or the figure does not exist (as JSON's nulls).
    const bool figures = simulated(r), tpot = figures && s.tpot_defined;
    auto n = [](double v, int d) { return fmt::format("{:.{}f}", v, d); };
    auto sim = [&](bool defined, double v, int d) { return defined ? n(v, d) : std::string(); };
    t.rows.push_back({r.device->id, o ? std::to_string(o->tp) : "", o ? std::to_string(o->pp) : "",
                      o ? std::to_string(o->replicas) : "", o ? std::to_string(o->devices) : "",
                      o && o->capacity.max_load ? n(*o->capacity.max_load, 3) : "", a.meets_targets ? "true" : "false",
                      sim(figures, s.ttft.p50 * 1000, 2), sim(figures, s.ttft.p95 * 1000, 2), sim(figures, s.ttft.p99 * 1000, 2),
                      sim(tpot, s.tpot.p50 * 1000, 2), sim(tpot, s.tpot.p95 * 1000, 2), sim(tpot, s.tpot.p99 * 1000, 2),
                      sim(figures, s.e2e.p50, 3), sim(figures, s.e2e.p95, 3), sim(figures, s.e2e.p99, 3),
                      sim(figures, s.requests_per_second * reps, 3), sim(figures, s.output_tokens_per_second * reps, 1),
                      sim(figures, s.total_tokens_per_second * reps, 1), o ? std::to_string(o->kv.tokens) : "",
                      o ? std::to_string(o->kv.max_sequences) : "",
                      a.usd_per_million_output_tokens ? n(*a.usd_per_million_output_tokens, 3) : "",
                      a.own_usd_per_million_output_tokens ? n(*a.own_usd_per_million_output_tokens, 3) : "",
                      figures ? n(a.kwh_per_million_output_tokens, 3) : "", binding_words(r)});
    if (format == Format::kCsv) t.rows.back().push_back(fmt::format("{}", fmt::join(r.warnings, " | ")));
    std::string out = render(t, format);
    if (format == Format::kMarkdown)
      for (const auto& w : r.warnings) out += "\n**warning:** " + w + "\n";
    return out;
  }
  std::string out;
  const serve::EngineConfig& e = r.question->engine;
  out += fmt::format("{} on {} ({} engine{}{}, KV {}{}, {:g} ms request handling), {}\n", r.model->id, r.device->name, e.preset,
                     e.overlap_scheduling ? ", overlap scheduling" : "", e.separate_prefill ? ", prefill steps first" : "",
                     e.kv_admission == serve::KvAdmission::kReserve    ? "reserved per request"
                     : e.kv_admission == serve::KvAdmission::kEstimate ? "on demand within estimated outputs"
                                                                      : "on demand",
                     e.kv_admission != serve::KvAdmission::kReserve ? (e.keep_preempted_kv ? ", preempted KV cached" : ", preempted KV freed") : "",
                     e.request_overhead_seconds * 1000, r.traffic);
  if (!o) {
    out += "No layout serves this load: " + binding_words(r) + "\n";
  } else {
    out += fmt::format("Layout: tp={} pp={} x {} replica(s) = {} device(s); {}\n", o->tp, o->pp, o->replicas, o->devices,
                       s.unservable       ? "CANNOT SERVE: a request needs more KV cache than the replica holds"
                       : a.overloaded     ? "OVERLOADED: the queue grows without bound"
                       : a.meets_targets ? (r.question->targets.any() ? "meets the targets" : "keeps up with the load")
                                         : "MISSES the targets");
    if (a.overloaded && a.saturated_rate_per_replica)
      out += fmt::format("Overloaded: one replica completes at most {:.3g} requests/s, and {:.3g} are asked of each; {} replica(s) "
                         "would keep up (give --count, or latency targets to search)\n",
                         *a.saturated_rate_per_replica, a.load_per_replica.value,
                         serve::replicas_needed(a.load_per_replica.value * static_cast<double>(o->replicas), *a.saturated_rate_per_replica));
    else if (o->capacity.max_load)
      out += fmt::format("Capacity: {:.3g} {} per replica {}\n", *o->capacity.max_load, load_unit(r),
                         r.question->targets.any() ? "within the targets" : "at saturation (the most it keeps up with)");
    out += "Binding constraint: " + binding_words(r) + "\n";
  }
  const bool figures = simulated(r);
  if (figures) {
    Table t;
    t.header = {"", "p50", "p95", "p99"};
    t.right_align = {false, true, true, true};
    t.rows.push_back({"TTFT (ms)", ms(s.ttft.p50), ms(s.ttft.p95), ms(s.ttft.p99)});
    if (s.tpot_defined || s.measured == 0) t.rows.push_back({"TPOT (ms)", ms(s.tpot.p50), ms(s.tpot.p95), ms(s.tpot.p99)});
    else t.rows.push_back({"TPOT (ms)", "-", "-", "-"});  // one-token replies: no time between tokens
    t.rows.push_back({"E2E (s)", num(s.e2e.p50, 2), num(s.e2e.p95, 2), num(s.e2e.p99, 2)});
    out += "\n" + render(t, Format::kTable);
    out += std::string("Latencies: ") + kLatencyScope + "\n";
  }
  if (figures) {
    out += fmt::format("\nThroughput: {:.2f} requests/s, {:.0f} output tokens/s, {:.0f} total tokens/s (all replicas)\n",
                       s.requests_per_second * reps, s.output_tokens_per_second * reps, s.total_tokens_per_second * reps);
    out += fmt::format("KV cache: {} tokens per replica (~{} sequences of the mean length; engine cap {})\n", o->kv.tokens,
                       o->kv.max_sequences, r.question->engine.max_sequences);
    out += a.usd_per_million_output_tokens
               ? fmt::format("Cost: ${:.3f} per million output tokens (rent, ${:.2f}/device-hour)\n",
                             *a.usd_per_million_output_tokens, *r.device->price.cloud_usd_per_hour)
               : std::string(r.device->price.cloud_usd_per_hour ? "Cost: not given (nothing was served to price)\n"
                                                                 : "Cost: not given (the catalog has no cloud price for this device)\n");
    if (a.own_usd_per_million_output_tokens)
      out += fmt::format("Owned: ${:.3f} per million output tokens ({:g} years: bought new with a host, run around the clock, "
                         "resold at the end; hwplan tco's defaults)\n",
                         *a.own_usd_per_million_output_tokens, a.own_years);
    out += fmt::format("Energy: {:.3f} kWh per million output tokens (at {:.0f}% of TDP)\n", a.kwh_per_million_output_tokens,
                       a.power_fraction * 100);
  }
  const std::string rounds = rounds_left_out(s.first_round_left_out, s.last_round_left_out);
  out += fmt::format("Simulation: {} requests ({} {}), {:.1f} s simulated, {} steps, {} preemptions, seed {}\n",
                     s.records.size(), s.measured, rounds.empty() ? "after warm-up" : "measured: the warm-up and " + rounds + " left out",
                     s.seconds, s.steps, s.preemptions, r.question->traffic.seed);
  if (a.layouts.size() > 1) {
    Table l;
    l.header = {"tp", "pp", "KV tokens", "max load/replica", "replicas", "devices", "binding"};
    l.right_align = {true, true, true, true, true, true, false};
    for (const auto& x : a.layouts)
      if (x.tried) l.rows.push_back({std::to_string(x.tp), std::to_string(x.pp), x.fits ? std::to_string(x.kv.tokens) : "does not fit",
                        x.capacity.max_load ? fmt::format("{:.3g}", *x.capacity.max_load) : "-",
                        x.replicas ? std::to_string(x.replicas) : "-", x.devices ? std::to_string(x.devices) : "-",
                        binding_key(x.capacity.binding)});
    out += "\nLayouts tried:\n" + render(l, Format::kTable);
  }
  for (const auto& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace hwplan::report
