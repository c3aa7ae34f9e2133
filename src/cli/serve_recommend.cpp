// recommend --task serve: every catalog device (within --class / --vendor / --exclude) gets the serving plan of
// hwplan serve for the same traffic and targets; those that meet them are ranked by cost per million output tokens
// (--optimize energy: energy per million tokens; time: fewest devices).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <future>

#include "cli/serve_setup.hpp"
#include "estimators/estimate.hpp"
#include "core/strings.hpp"
#include "report/html_report.hpp"
#include "report/plots.hpp"
#include "report/serve_report.hpp"
#include "recommend/front_end.hpp"
#include "recommend/recommend.hpp"

namespace hwplan::cli {
namespace {

constexpr long long kRecommendRequests = 500;

struct ServeCandidate {
  const Device* device = nullptr;
  bool ok = false;
  std::string reason;  // why not, when !ok
  serve::LayoutOption layout;
  serve::SimResult at_load;
  std::optional<double> usd;      // on the ranking's cost basis (rent, or owned over the horizon)
  std::optional<double> rent_usd, own_usd;
  double kwh = 0;
  std::string binding;
  std::vector<std::string> warnings;  // the chosen layout's estimate's (a precision the device lacks, ...)
  std::vector<std::string> price_notes;  // the ranking's price over two years old
  std::optional<double> saturated_rate;  // open loop: the most one replica sustains, when simulated (serve's field)
};

ServeCandidate evaluate(const io::Registry& registry, ServeOptions s, const Device& d, const RecommendSpec& spec) {
  ServeCandidate c;
  c.device = &d;
  try {
    ServeSetup setup = prepare_serve(registry, s, &d);
    setup.question.prune_layouts = true;
    // No latency targets and no --count: an open loop's devices are those that keep up with it (each replica below
    // its saturated rate), so that every candidate is ranked at a load it can serve.
    if (!setup.question.targets.any() && !setup.question.load.closed_loop && !spec.count) setup.question.devices.reset();
    // --require-interconnect: without an NVLink-class fabric a replica stays on one device.
    const bool single = spec.require_interconnect && !d.interconnect.pools_memory();
    if (single) std::erase_if(setup.layouts, [](const EstimateInput* in) { return in->plan.tp * in->plan.pp > 1; });
    const char* why_single = "no single-device layout meets the targets, and a replica over several has no NVLink-class "
                             "fabric (--require-interconnect)";
    if (setup.layouts.empty()) {
      c.reason = why_single;
      return c;
    }
    serve::ServeAnswer a = serve::plan_serving(setup.layouts, setup.question, 1);
    if (!a.chosen) {
      c.reason = single ? why_single : "no layout meets the targets";
      return c;
    }
    c.layout = a.layouts[*a.chosen];
    // What serve would say on this device (the engine assumed, inputs serving ignores), then its estimate's notes.
    // (recommend reads --count as the most devices a candidate may take: serve's note that targets leave it unused
    // is not recommend's.)
    for (const auto& w : setup.warnings)
      if (w.rfind("--count is not used", 0) != 0) c.warnings.push_back(w);
    for (auto& w : estimate(*setup.layouts[*a.chosen]).warnings)
      if (std::find(c.warnings.begin(), c.warnings.end(), w) == c.warnings.end()) c.warnings.push_back(std::move(w));
    c.at_load = a.at_load;
    c.saturated_rate = a.saturated_rate_per_replica;
    c.rent_usd = a.usd_per_million_output_tokens;
    c.own_usd = a.own_usd_per_million_output_tokens;
    c.usd = spec.cost_basis == "rent" ? c.rent_usd : c.own_usd;
    // The price the ranking's cost rests on, when it is old (as serve and tco say it).
    if (c.usd) {
      std::string note = spec.cost_basis == "rent" ? stale_rental_price_note(d) : stale_purchase_price_note(d);
      if (!note.empty()) c.price_notes.push_back(note);
    }
    c.kwh = a.kwh_per_million_output_tokens;
    report::ServeReport r{&setup.model, &d, &setup.question, &a, setup.traffic, {}};
    c.binding = report::binding_words(r);
    if (a.at_load.unservable) c.reason = "a request does not fit the KV cache";
    else if (a.overloaded) c.reason = "cannot keep up with the asked rate (overloaded)";
    else if (!a.meets_targets) c.reason = "misses the targets at the asked load";
    else if (spec.count && c.layout.devices > *spec.count)
      c.reason = fmt::format("needs {} devices (--count {})", c.layout.devices, *spec.count);
    else if (c.layout.devices > spec.max_count) c.reason = fmt::format("needs {} devices (--max-count {})", c.layout.devices, spec.max_count);
    else if (spec.max_power_w && d.tdp_w * static_cast<double>(c.layout.devices) > *spec.max_power_w)
      c.reason = "over --max-power-w";
    else c.ok = true;
  } catch (const InputError& e) {
    c.reason = e.detail();
  }
  return c;
}

// Every device's serving plan, those that meet the targets ranked.
struct ServeRanking {
  std::vector<ServeCandidate> results;
  std::vector<const ServeCandidate*> ranked;  // those that meet the targets, best first, at most --top
  long long requests = 0;
  bool requests_assumed = false;
  std::optional<ServeSetup> first;  // the question as resolved for the first device (the flags checked once)
  ServeOptions options;             // the flags every device was evaluated with
  CostBasisChoice basis;            // rent, or own (--buy and --own-years: owned over a horizon)
  int unpriced = 0;                 // of the ranked, without a price on that basis
  double own_years = 3;
};

void rank(const io::Registry& registry, const WorkloadOptions& w, const ServeOptions& serve_flags, const RecommendSpec& spec,
          int threads, ServeRanking& out) {
  if (spec.optimize != "cost" && spec.optimize != "time" && spec.optimize != "energy" && spec.optimize != "balanced")
    throw InputError({}, "--optimize", "'" + spec.optimize + "' is not one of: cost, time, energy, balanced");
  ServeOptions s = serve_flags;
  s.workload = w;
  s.workload.task = "infer";
  // Ranking the catalog simulates every device: 500 requests per simulation unless --requests says otherwise
  // (hwplan serve on the chosen device, with its default 2000, tells the latencies more precisely).
  out.requests_assumed = !s.requests;
  if (out.requests_assumed) {
    s.requests = kRecommendRequests;
    s.requests_assumed = true;
  }
  out.requests = *s.requests;
  out.options = s;
  // The candidates as recommend's other tasks take them: --class, --vendor, --devices (and --device), --exclude.
  std::vector<const Device*> devices =
      select_devices(registry.devices(), spec, [&](const std::string& name) { return &registry.device(name); });
  // Flags are checked once, on the first device, so that a bad flag is an error rather than a skipped device.
  // A --tp or --pp above 1 is checked on the first device that takes several per replica (a standalone device
  // refuses it and is left out of the ranking, whichever the order).
  if (!devices.empty()) {
    const Device* check = devices.front();
    if (s.workload.tp.value_or(1) > 1 || s.workload.pp.value_or(1) > 1)
      for (const Device* d : devices)
        if (!d->host_link.standalone()) {
          check = d;
          break;
        }
    out.first.emplace(prepare_serve(registry, s, check));
  }
  // One cost basis for the list: per million tokens, buying means owning over the horizon (hwplan tco).
  out.basis = choose_cost_basis(devices, spec.cost_basis);
  out.own_years = spec.own_years;
  if (out.basis.basis == "buy") out.basis.basis = "own";
  RecommendSpec ranked_spec = spec;
  ranked_spec.cost_basis = out.basis.basis;
  std::vector<ServeCandidate>& results = out.results;
  results.resize(devices.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < devices.size(); i = next++) results[i] = evaluate(registry, s, *devices[i], ranked_spec);
  };
  std::vector<std::future<void>> workers;
  for (int t = 1; t < std::max(1, threads); ++t) workers.push_back(std::async(std::launch::async, work));
  work();
  for (auto& f : workers) f.get();

  std::vector<const ServeCandidate*>& ranked = out.ranked;
  for (const auto& c : results)
    if (c.ok) ranked.push_back(&c);
  auto key = [&](const ServeCandidate* c) {
    if (spec.optimize == "energy") return c->kwh;
    if (spec.optimize == "time") return static_cast<double>(c->layout.devices);
    return c->usd.value_or(INFINITY);  // unpriced devices after the priced ones
  };
  std::stable_sort(ranked.begin(), ranked.end(), [&](const ServeCandidate* a, const ServeCandidate* b) {
    double ka = key(a), kb = key(b);
    if (ka != kb) return ka < kb;
    if (a->layout.devices != b->layout.devices) return a->layout.devices < b->layout.devices;
    return a->device->id < b->device->id;
  });
  if (static_cast<long long>(ranked.size()) > spec.top) ranked.resize(static_cast<size_t>(spec.top));
  for (const auto* c : ranked) out.unpriced += !c->usd;
}

std::string basis_words(const ServeRanking& sr) {
  if (sr.basis.basis == "rent") return "rent (cloud on-demand price per device-hour)";
  return fmt::format("own ({:g} years: bought new with a host, run around the clock, resold at the end; hwplan tco)",
                     sr.own_years);
}

// What a candidate's capacity counts, as serve names it: a closed loop's clients, an open loop's requests/s within the
// targets, or without targets the rate one replica saturates at.
enum class CapacityKind { kClients, kRate, kSaturatedRate };
CapacityKind capacity_kind(const ServeRanking& sr) {
  if (sr.first && sr.first->question.load.closed_loop) return CapacityKind::kClients;
  return sr.first && sr.first->question.targets.any() ? CapacityKind::kRate : CapacityKind::kSaturatedRate;
}

nlohmann::json ranking_json(const ServeRanking& sr, const RecommendSpec& spec) {
  const std::vector<ServeCandidate>& results = sr.results;
  const std::vector<const ServeCandidate*>& ranked = sr.ranked;
  nlohmann::json j = {{"schema_version", 1},       {"task", "serve"},
                      {"optimize", spec.optimize}, {"simulation_requests", sr.requests},
                      {"cost_basis", sr.basis.basis},
                      {"cost_basis_automatic", sr.basis.automatic},
                      {"own_years", spec.own_years},
                      {"candidates", nlohmann::json::array()}};
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  const CapacityKind kind = capacity_kind(sr);
  auto capacity = [&](const ServeCandidate& c, CapacityKind k) {
    return kind == k ? opt(c.layout.capacity.max_load) : nlohmann::json(nullptr);
  };
  for (const auto* c : ranked)
    j["candidates"].push_back({{"device", c->device->id},
                               {"layout", {{"tp", c->layout.tp}, {"pp", c->layout.pp}}},
                               {"replicas", c->layout.replicas},
                               {"devices_total", c->layout.devices},
                               {"max_rate_per_replica", capacity(*c, CapacityKind::kRate)},
                               {"max_concurrency_per_replica", capacity(*c, CapacityKind::kClients)},
                               {"saturated_rate_per_replica",
                                c->saturated_rate ? opt(c->saturated_rate) : capacity(*c, CapacityKind::kSaturatedRate)},
                               {"ttft_p95_seconds", c->at_load.ttft.p95},
                               {"tpot_p95_seconds", c->at_load.tpot.p95},
                               {"usd_per_million_output_tokens", opt(c->usd)},
                               {"rent_usd_per_million_output_tokens", opt(c->rent_usd)},
                               {"own_usd_per_million_output_tokens", opt(c->own_usd)},
                               {"kwh_per_million_output_tokens", c->kwh},
                               {"binding_constraint", c->binding},
                               {"warnings", c->warnings},
                               {"price_notes", c->price_notes}});
  nlohmann::json left = nlohmann::json::array();
  for (const auto& c : results)
    if (!c.ok) left.push_back({{"device", c.device->id}, {"reason", c.reason}});
  j["excluded"] = left;
  return j;
}

report::Table ranking_table(const ServeRanking& sr) {
  report::Table t;
  const CapacityKind kind = capacity_kind(sr);
  t.header = {"#", "device", "tp", "pp", "replicas", "devices",
              kind == CapacityKind::kClients ? "max clients per replica"
              : kind == CapacityKind::kRate  ? "max req/s per replica"
                                             : "saturates at req/s per replica",
              "p95 TTFT ms", "p95 TPOT ms",
              "$/M out tokens (" + sr.basis.basis + ")", "kWh/M out tokens"};
  t.right_align = {true, false, true, true, true, true, true, true, true, true, true};
  for (size_t i = 0; i < sr.ranked.size(); ++i) {
    const ServeCandidate& c = *sr.ranked[i];
    t.rows.push_back({std::to_string(i + 1), c.device->id, std::to_string(c.layout.tp), std::to_string(c.layout.pp),
                      std::to_string(c.layout.replicas),
                      std::to_string(c.layout.devices),
                      c.layout.capacity.max_load ? fmt::format("{:.3g}", *c.layout.capacity.max_load) : "-",
                      report::num(c.at_load.ttft.p95 * 1000, 1), report::num(c.at_load.tpot.p95 * 1000, 1),
                      c.usd ? fmt::format("{:.3f}", *c.usd) : "no price", fmt::format("{:.3f}", c.kwh)});
  }
  return t;
}

std::string ranking_text(const ServeRanking& sr, report::Format format) {
  const std::vector<ServeCandidate>& results = sr.results;
  const std::vector<const ServeCandidate*>& ranked = sr.ranked;
  report::Table t = ranking_table(sr);
  // A CSV carries each device's warnings and price notes in columns of its own (several joined by " | ").
  if (format == report::Format::kCsv) {
    t.header.push_back("warnings");
    t.header.push_back("price_notes");
    for (size_t i = 0; i < t.rows.size(); ++i) {
      t.rows[i].push_back(fmt::format("{}", fmt::join(ranked[i]->warnings, " | ")));
      t.rows[i].push_back(fmt::format("{}", fmt::join(ranked[i]->price_notes, " | ")));
    }
  }
  std::string out = render(t, format);
  if (format == report::Format::kTable || format == report::Format::kMarkdown) {
    size_t left = 0;
    for (const auto& c : results) left += !c.ok;
    const bool targets = sr.first && sr.first->question.targets.any();
    out += fmt::format("{} of {} devices {}; {} left out (--format json lists why).\n", results.size() - left, results.size(),
                       targets ? "meet the targets" : "serve the load", left);
    out += "Cost basis: " + basis_words(sr) + (sr.basis.automatic ? "; automatic: the basis more devices have a price on" : "; asked for") +
           (sr.unpriced > 0 ? fmt::format(". {} listed without a price on it, after the priced ones.\n", sr.unpriced) : ".\n");
    if (!ranked.empty()) out += "Binding constraint of #1: " + ranked.front()->binding + "\n";
    // What the listed devices' estimates assumed or fell back to, each once with the devices it applies to.
    std::vector<std::pair<std::string, std::string>> warned;
    for (const ServeCandidate* c : ranked)
      for (const auto& w : c->warnings) {
        auto it = std::find_if(warned.begin(), warned.end(), [&](const auto& x) { return x.first == w; });
        if (it == warned.end()) warned.push_back({w, c->device->id});
        else it->second += ", " + c->device->id;
      }
    for (const auto& [w, ids] : warned) out += "warning (" + ids + "): " + w + "\n";
    for (const ServeCandidate* c : ranked)
      for (const auto& note : c->price_notes) out += "note: " + note + "\n";
    out += fmt::format("Each simulation: {} requests{}; check the pick with hwplan serve.\n", sr.requests,
                       sr.requests_assumed ? " (recommend's default; --requests to change)" : "");
  }
  return out;
}

}  // namespace

int run_recommend_serve(GlobalOptions& g, const WorkloadOptions& w, const ServeOptions& serve_flags,
                        const RecommendSpec& spec, int threads) {
  ServeRanking sr;
  rank(registry_of(g), w, serve_flags, spec, threads, sr);
  report::Format format = format_of(g);
  if (format == report::Format::kHtml) {
    report::ServeRankingReport r{ranking_json(sr, spec), sr.first ? &sr.first->model : nullptr,
                                 sr.first ? &sr.first->question : nullptr, sr.first ? sr.first->traffic : "", {},
                                 ranking_table(sr)};
    for (const auto* c : sr.ranked) r.devices.push_back(c->device);
    // The latency-against-load picture of hwplan plot serve for the first three, with the same flags.
    std::vector<report::LatencySeries> series;
    for (size_t i = 0; i < sr.ranked.size() && i < 3; ++i) {
      ServeOptions o = sr.options;
      ServeSetup setup = prepare_serve(registry_of(g), o, sr.ranked[i]->device);
      setup.question.prune_layouts = true;
      serve::ServeAnswer a = serve::plan_serving(setup.layouts, setup.question, threads);
      if (auto one = report::serve_latency_series(setup.layouts, setup.question, a, sr.ranked[i]->device->id))
        series.push_back(std::move(*one));
    }
    if (!series.empty() && sr.first) r.latency = report::serve_latency_chart(sr.first->model.id, std::move(series), sr.first->question);
    emit(g, report::recommend_serve_html(r, html_context(g)));
  } else {
    emit(g, format == report::Format::kJson ? ranking_json(sr, spec).dump(2) + "\n" : ranking_text(sr, format));
  }
  return sr.ranked.empty() ? kExitNothingFeasible : kExitOk;
}

CommandResult recommend_serve_result(GlobalOptions& g, const WorkloadOptions& w, const ServeOptions& serve_flags,
                                     const RecommendSpec& spec, int threads) {
  ServeRanking sr;
  rank(registry_of(g), w, serve_flags, spec, threads, sr);
  return {ranking_json(sr, spec), sr.ranked.empty() ? kExitNothingFeasible : kExitOk};
}

}  // namespace hwplan::cli
