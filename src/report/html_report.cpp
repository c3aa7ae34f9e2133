#include "report/html_report.hpp"
#include "estimators/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/strings.hpp"
#include "estimators/uncertainty.hpp"
#include "report/estimate_report.hpp"
#include "report/plots.hpp"
#include "report/recommend_report.hpp"
#include "report/serve_report.hpp"
#include "report/tco_report.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"
#include "estimators/inference.hpp"

namespace hwplan::report {
namespace {

using nlohmann::json;

struct Page {
  std::string title;
  std::string answer;                                          // one sentence, shown first
  std::vector<std::pair<std::string, std::string>> tables;     // caption, <table> HTML
  std::vector<std::string> explanation;                        // sentences
  std::vector<std::string> warnings;
  std::vector<std::pair<std::string, std::string>> plots;      // caption, inline SVG
  std::vector<std::pair<std::string, std::string>> assumptions;  // name, value
  std::vector<std::pair<std::string, std::string>> sources;      // figure, citation
};

// Readable on screen and on paper, in light and dark; no web fonts, no script.
constexpr const char* kStyle = R"(
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0969da; --bg: #ffffff; --answer: #ddf4ff; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #8d96a0; --line: #30363d; --accent: #4493f8; --bg: #0d1117; --answer: #0c2d4b; } }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); max-width: 72rem; margin: 2rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; } h2 { font-size: 1.15rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; margin-top: 2rem; }
code, pre { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; background: color-mix(in srgb, var(--line) 35%, transparent); padding: .6rem .8rem; border-radius: 6px; }
#answer p { font-size: 1.1rem; background: var(--answer); border-left: 4px solid var(--accent); padding: .7rem 1rem; border-radius: 4px; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .7rem; text-align: left; vertical-align: top; }
th { font-weight: 600; } td.num, th.num { text-align: right; } td[data-marked] strong { color: var(--accent); }
caption { text-align: left; font-weight: 600; padding: .3rem 0; color: var(--muted); }
.warning { color: #9a6700; } #answer p.warning { font-size: 1rem; background: color-mix(in srgb, #d4a72c 18%, transparent); border-left-color: #d4a72c; } .muted { color: var(--muted); }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; } dt { font-weight: 600; } dd { margin: 0; }
@media print { body { margin: 0; max-width: none; } }
)";

std::string esc(const std::string& s) { return xml_escape(s); }

std::string render_page(const Page& p, const HtmlContext& ctx) {
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  o += "<meta name=\"generator\" content=\"hwplan " + esc(ctx.version) + "\">\n";
  o += "<title>" + esc(p.title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  o += "<header><h1>" + esc(p.title) + "</h1><p class=\"muted\">A report by hwplan " + esc(ctx.version) +
       ", a model of deep-learning hardware: every figure below is an estimate with the accuracy stated at the end.</p></header>\n";
  o += "<section id=\"question\">\n<h2>Question</h2>\n<pre><code>" + esc(ctx.question) + "</code></pre>\n</section>\n";
  o += "<section id=\"answer\">\n<h2>Answer</h2>\n<p>" + esc(p.answer) + "</p>\n";
  for (const auto& w : p.warnings) o += "<p class=\"warning\">Warning: " + esc(w) + "</p>\n";
  o += "</section>\n";
  o += "<section id=\"tables\">\n<h2>Figures</h2>\n";
  for (const auto& [caption, table] : p.tables) {
    std::string t = table;
    if (!caption.empty()) t.insert(t.find('>') + 1, "\n<caption>" + esc(caption) + "</caption>");
    o += t;
  }
  o += "</section>\n";
  o += "<section id=\"explanation\">\n<h2>Why</h2>\n<ul>\n";
  for (const auto& e : p.explanation) o += "<li>" + esc(e) + "</li>\n";
  o += "</ul>\n</section>\n";
  o += "<section id=\"plots\">\n<h2>Plots</h2>\n";
  for (const auto& [caption, svg] : p.plots)
    o += "<figure>\n" + svg.substr(svg.find("<svg")) + "\n<figcaption>" + esc(caption) + "</figcaption>\n</figure>\n";
  if (p.plots.empty()) o += "<p class=\"muted\">No plot for this question.</p>\n";
  o += "</section>\n";
  o += "<section id=\"assumptions\">\n<h2>Assumptions and defaults used</h2>\n<dl>\n";
  for (const auto& [k, v] : p.assumptions) o += "<dt>" + esc(k) + "</dt><dd>" + esc(v) + "</dd>\n";
  o += "</dl>\n</section>\n";
  o += "<section id=\"sources\">\n<h2>Sources of the figures used</h2>\n<dl>\n";
  for (const auto& [k, v] : p.sources) o += "<dt>" + esc(k) + "</dt><dd>" + esc(v) + "</dd>\n";
  o += "</dl>\n</section>\n";
  o += "<section id=\"about\">\n<h2>About these numbers</h2>\n<p>hwplan " + esc(ctx.version) +
       ". Typical error, the 80th percentile of |predicted / measured - 1| over the recorded measurement sets:</p>\n<ul>\n";
  for (Regime r : {Regime::kStep, Regime::kThroughput, Regime::kDecode, Regime::kMemory, Regime::kImage}) {
    const Band& b = band(r);
    o += fmt::format("<li>{}: within &#177;{:.0f}% ({} comparisons)</li>\n", esc(b.name), 100 * b.p80_relative_error, b.rows);
  }
  o += "</ul>\n</section>\n</body>\n</html>\n";
  return o;
}

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array() && v.empty()) return "none";
  if (v.is_array()) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + value_text(x);
    return s;
  }
  return v.dump();
}

// "stack.preset" = "fsdp", ... for every leaf of the objects named.
void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else {
    out.push_back({prefix, value_text(j)});
  }
}

void add_assumptions(const json& estimate, Page& p) {
  for (const char* key : {"workload", "plan", "stack"}) flatten(estimate[key], key, p.assumptions);
  const auto& st = estimate["stack"];
  if (st["preset_assumed"].get<bool>())
    p.assumptions.push_back({"note", "the software stack preset was assumed; set --framework (training) or --engine (inference)"});
}

void add_sources(const Device& d, Page& p, std::set<std::string>& seen) {
  if (!seen.insert("device:" + d.id).second) return;
  for (const auto& [k, v] : d.sources) p.sources.push_back({d.id + ": " + k, v});
  // The price quotes' own citations (street, used, cloud, ...), where the entry gives them beside each quote rather
  // than under sources.price.
  if (!d.sources.count("price"))
    for (const auto& [k, v] : d.price.sources) p.sources.push_back({d.id + ": price (" + k + ")", v});
  for (const auto& [k, v] : d.derived) p.sources.push_back({d.id + ": " + k + " (derived)", v});
}

void add_sources(const Model& m, Page& p, std::set<std::string>& seen) {
  if (!seen.insert("model:" + m.id).second) return;
  p.sources.push_back({m.id + ": architecture", m.source.empty() ? std::string("not given (") + m.origin + ")" : m.source});
}

std::string estimate_answer(const EstimateInput& in, const Estimate& e) {
  std::string s = fmt::format("{} {} on {} x {}: {} ({} of {} per device)", in.model->id, to_string(in.workload.task),
                              in.system.count, in.device->name, e.fits ? "fits" : "does not fit",
                              human_bytes(e.memory.total()), human_bytes(e.capacity_bytes));
  if (e.training) {
    s += fmt::format("; a step takes {}, {:.0f} tokens/s", human_seconds(e.train.step_seconds), e.train.tokens_per_second);
    if (e.total_seconds >= 0) s += fmt::format(", {} for the whole job", human_seconds(e.total_seconds));
  } else if (one_forward_pass(*in.model, in.workload.generate)) {
    // One forward pass (a CNN, an encoder, --generate 0): a batch latency, no first token.
    s += fmt::format("; a forward pass of batch {} takes {}, {:.1f} samples/s", e.plan.micro_batch,
                     human_seconds(e.infer.prefill_seconds), e.forward_samples_per_second());
  } else {
    s += fmt::format("; first token after {}, then {:.1f} tokens/s", human_seconds(e.infer.prefill_seconds),
                     e.infer.decode_tokens_per_second);
  }
  return s + ".";
}

std::string roofline_svg(const EstimateInput& in, const Plan& plan) {
  EstimateInput at = in;
  at.plan = plan;
  return render_roofline_svg(roofline_chart(at, to_string(in.workload.task)));
}

}  // namespace

std::string estimate_html(const EstimateInput& in, const Estimate& e, const SearchResult* search, const HtmlContext& ctx) {
  Page p;
  p.title = fmt::format("{} on {} x {}", in.model->id, in.system.count, in.device->name);
  p.answer = estimate_answer(in, e);
  p.tables.push_back({"Estimate", render(estimate_summary_table(in, e), Format::kHtml)});
  p.explanation = e.notes;
  p.warnings = e.warnings;
  if (search)
    p.explanation.push_back(fmt::format("The layout was searched: {} layouts, {} of them fit; the fastest that fits is shown.",
                                        search->layouts_evaluated, search->layouts_feasible));
  p.plots.push_back({"Roofline of the device with the workload's operators (forward pass).", roofline_svg(in, e.plan)});
  MemoryChart mc{fmt::format("{} memory per device", in.model->id), {memory_bar(fmt::format("{} x{}", in.device->id, in.system.count), e)}};
  p.plots.push_back({"Memory per device against its capacity.", render_memory_svg(mc)});
  add_assumptions(estimate_json(in, e, search), p);
  std::set<std::string> seen;
  add_sources(*in.device, p, seen);
  add_sources(*in.model, p, seen);
  return render_page(p, ctx);
}

std::string recommendation_html(const Recommendation& r, const WorkloadSpec& w, const RecommendSpec& spec,
                                const HtmlContext& ctx) {
  Page p;
  p.title = fmt::format("Hardware for {} {}", r.model_id, w.task);
  if (r.candidates.empty()) {
    p.answer = "Nothing is feasible under these constraints; the nearest misses and what they lack are listed below.";
  } else {
    const Candidate& c = r.candidates.front();
    p.answer = fmt::format("Best on {}: {} x {} ({}), {} for the job of {} tokens{}.", spec.optimize, c.count, c.device->name,
                           c.device->id, human_seconds(c.total_seconds), human_count(r.job_tokens),
                           c.cost_usd >= 0 ? fmt::format(", {} ({})", money(c.cost_usd), c.cost_basis)
                                           : fmt::format(", no {} price", c.cost_basis));
  }
  p.answer += fmt::format(" Every cost is on one basis: {}{}.", r.cost_basis.basis,
                          r.cost_basis.automatic ? " (chosen automatically: it prices more of the candidates; --buy, --rent or "
                                                   "--own-years N choose it)"
                                                 : "");
  p.tables.push_back({"Candidates, best first", render(recommendation_table(r, w, spec), Format::kHtml)});
  Table rejected;
  rejected.header = {"device", "why not", "what would help"};
  for (const auto& x : r.candidates.empty() ? r.nearest_misses : r.rejected) rejected.rows.push_back({x.device, rejection_reason(x), x.fix});
  p.tables.push_back({r.candidates.empty() ? "Nearest misses" : "Rejected", render(rejected, Format::kHtml)});
  long long shown = 0;
  for (const auto& c : r.candidates) {
    if (shown++ >= spec.top) break;
    std::string s = fmt::format("{}. {} x{}: ", shown, c.device->id, c.count);
    for (std::size_t i = 0; i < c.reasons.size(); ++i) s += (i ? "; " : "") + c.reasons[i];
    p.explanation.push_back(s);
  }
  p.explanation.push_back(fmt::format("{} feasible configurations of {} evaluated ({} layouts).", r.feasible_configurations,
                                      r.configurations, r.layouts_evaluated));
  MemoryChart mc{fmt::format("{} {}: memory per device", r.model_id, w.task), {}};
  shown = 0;
  for (const auto& c : r.candidates)
    if (shown++ < spec.top) mc.bars.push_back(memory_bar(fmt::format("{} x{}", c.device->id, c.count), c.estimate));
  if (!mc.bars.empty()) p.plots.push_back({"Memory per device of the candidates shown.", render_memory_svg(mc)});
  json q = recommendation_json(r, w, spec)["query"];
  flatten(q, "query", p.assumptions);
  if (r.job_tokens_assumed) p.assumptions.push_back({"job", "the job size was assumed (set --tokens)"});
  p.assumptions.push_back({"energy", "the devices' TDP times a utilisation fraction (recommend's model), for the job time"});
  std::set<std::string> seen;
  shown = 0;
  for (const auto& c : r.candidates)
    if (shown++ < spec.top) add_sources(*c.device, p, seen);
  return render_page(p, ctx);
}

std::string fit_html(const FitReport& f, const EstimateInput& in, const WorkloadSpec& w, const HtmlContext& ctx) {
  Page p;
  p.title = fmt::format("Fitting {} {} on {} x {}", in.model->id, w.task, in.system.count, in.device->name);
  const MemoryBreakdown& m = f.baseline.memory;
  auto first_fit = std::find_if(f.changes.begin(), f.changes.end(), [](const FitChange& c) { return c.fits; });
  if (f.baseline.fits) {
    p.answer = fmt::format("It fits as configured: {} of {} per device.", human_bytes(m.total()), human_bytes(f.baseline.capacity_bytes));
  } else if (first_fit != f.changes.end()) {
    p.answer = fmt::format("It does not fit as configured ({} of {}); the cheapest change that fits: {} ({}), {:+.0f}% time.",
                           human_bytes(m.total()), human_bytes(f.baseline.capacity_bytes), first_fit->change, first_fit->flags,
                           100 * first_fit->slowdown);
  } else if (f.combined) {
    p.answer = fmt::format("No single change fits; together: {} ({}), {}, {:+.0f}% time.", f.combined->change, f.combined->flags,
                           human_bytes(f.combined->per_device_bytes), 100 * f.combined->slowdown);
  } else {
    p.answer = "Nothing fits on this device, even with every change combined: use more devices or a shorter sequence.";
  }
  p.tables.push_back({"Changes, those that fit first, cheapest first", render(fit_table(f), Format::kHtml)});
  p.explanation.push_back(fmt::format("As configured: weights {}, gradients {}, optimizer {}, activations {}, KV cache {}, runtime {}.",
                                      human_bytes(m.weights), human_bytes(m.gradients), human_bytes(m.optimizer),
                                      human_bytes(m.activations), human_bytes(m.kv_cache), human_bytes(m.runtime())));
  p.explanation.push_back(fmt::format("Largest {} that fits as configured: {}; longest {}: {}.", w.task == "infer" ? "batch" : "micro-batch",
                                      f.max_micro_batch ? std::to_string(*f.max_micro_batch) : "none",
                                      w.task == "infer" ? "context" : "sequence", f.max_seq ? std::to_string(*f.max_seq) : "none"));
  if (f.max_seq_beyond_context())
    p.explanation.push_back(fmt::format("That length is beyond the model's {}-token context: it would need context extension.",
                                        f.model_context));
  p.explanation.push_back("Changes marked * change the model's numerics or the task (quantisation, adapters, shorter context).");
  MemoryChart mc{fmt::format("{} memory per device, as configured", in.model->id),
                 {memory_bar(fmt::format("{} x{}", in.device->id, in.system.count), f.baseline)}};
  p.plots.push_back({"Memory per device as configured, against its capacity.", render_memory_svg(mc)});
  add_assumptions(estimate_json(in, f.baseline), p);
  std::set<std::string> seen;
  add_sources(*in.device, p, seen);
  add_sources(*in.model, p, seen);
  return render_page(p, ctx);
}

std::string compare_html(const std::vector<Compared>& items, const HtmlContext& ctx) {
  Page p;
  if (items.empty()) return render_page(p, ctx);
  const EstimateInput& in0 = *items.front().input;
  p.title = fmt::format("{} {} on {} configurations", in0.model->id, to_string(in0.workload.task), items.size());
  // The answer: the fastest configuration that fits.
  const Compared* best = nullptr;
  auto speed = [](const Compared& c) { return c.estimate->training ? c.estimate->train.tokens_per_second : c.estimate->infer.decode_tokens_per_second; };
  for (const auto& c : items)
    if (c.estimate->fits && (!best || speed(c) > speed(*best))) best = &c;
  p.answer = best ? fmt::format("Fastest that fits: {} x {} ({}). ", best->input->system.count, best->input->device->name,
                                best->input->device->id) + estimate_answer(*best->input, *best->estimate)
                  : std::string("None of these configurations fits.");
  p.tables.push_back({"Side by side (bold: the best of the row among those that fit)", render(compare_table(items), Format::kHtml)});
  p.explanation.push_back("Cost: rental (count x catalog $/h x time to finish) where the catalog has a cloud price, else the purchase price; "
                          "the best cost is marked only when every column has the same basis.");
  p.explanation.push_back("Energy: the devices drawing 80% of their TDP training, 60% serving (as recommend, serve and tco count it) for the time to finish.");
  MemoryChart mc{fmt::format("{} memory per device", in0.model->id), {}};
  std::set<std::string> seen;
  for (const auto& c : items) {
    for (const auto& n : c.estimate->notes) p.explanation.push_back(fmt::format("{} x{}: {}", c.input->device->id, c.input->system.count, n));
    for (const auto& w : c.estimate->warnings) p.warnings.push_back(fmt::format("{} x{}: {}", c.input->device->id, c.input->system.count, w));
    mc.bars.push_back(memory_bar(fmt::format("{} x{}", c.input->device->id, c.input->system.count), *c.estimate));
    add_sources(*c.input->device, p, seen);
  }
  add_sources(*in0.model, p, seen);
  p.plots.push_back({"Memory per device against each device's capacity.", render_memory_svg(mc)});
  if (best) p.plots.push_back({"Roofline of the fastest configuration with the workload's operators.", roofline_svg(*best->input, best->estimate->plan)});
  add_assumptions(estimate_json(in0, *items.front().estimate), p);
  return render_page(p, ctx);
}

namespace {

// Figures in the serve tables come from serve_json, so the page shows the numbers the JSON carries.
std::string ms_of(const json& seconds) { return seconds.is_number() ? num(seconds.get<double>() * 1000, 1) : "-"; }
std::string fixed(const json& v, int decimals) { return v.is_number() ? num(v.get<double>(), decimals) : "-"; }
std::string count_of(const json& v) { return v.is_number() ? fmt::format("{}", v.get<double>()) : "-"; }

std::string layout_of(const json& layout) {
  if (!layout["tp"].is_number()) return "tp=-";
  return serve::layout_name(layout["tp"].get<int>(), layout["pp"].is_number() ? layout["pp"].get<int>() : 1);
}

std::string serve_answer(const ServeReport& r, const json& j) {
  const json& sv = j["serve"];
  if (!r.answer->chosen) return "No layout serves this load: " + binding_words(r) + ".";
  std::string s = fmt::format("{} x {} ({} replica(s) of {}) for {}: p95 TTFT {} ms, p95 TPOT {} ms; {}", count_of(sv["devices_total"]),
                              r.device->name, count_of(sv["replicas"]), layout_of(sv["layout"]), r.traffic,
                              ms_of(j["latency"]["ttft_seconds"]["p95"]), ms_of(j["latency"]["tpot_seconds"]["p95"]),
                              r.answer->at_load.unservable ? "CANNOT SERVE: a request needs more KV cache than a replica holds"
                              : r.answer->overloaded       ? "OVERLOADED: the replicas cannot keep up, the queue grows without bound"
                              : r.question->targets.any() ? (r.answer->meets_targets ? "meets the targets" : "MISSES the targets")
                                                          : "no latency target given; keeps up with the load");
  const json& usd = j["cost"]["usd_per_million_output_tokens"];
  if (usd.is_number()) s += fmt::format("; ${:.3f} per million output tokens (rent)", usd.get<double>());
  return s + ".";
}

void flatten_given(const json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  std::vector<std::pair<std::string, std::string>> all;
  flatten(j, prefix, all);
  for (auto& [k, v] : all)
    if (v != "null") out.push_back({k, v});
}

// The workload and the software stack an estimate of `in` assumes (precision, weights, KV format, stack preset).
void add_workload_assumptions(const EstimateInput& in, Page& p) {
  json e = estimate_json(in, estimate(in));
  for (const char* key : {"workload", "stack"}) flatten(e[key], key, p.assumptions);
}

}  // namespace

std::string serve_html(const ServeReport& r, const EstimateInput* layout, const LatencyChart& chart, const HtmlContext& ctx) {
  const json j = serve_json(r);
  const serve::ServeQuestion& q = *r.question;
  Page p;
  p.title = fmt::format("Serving {} on {}", r.model->id, r.device->name);
  p.answer = serve_answer(r, j);
  p.warnings = r.warnings;
  const bool closed = q.load.closed_loop;
  const std::string unit = closed ? "concurrent clients" : "requests/s";
  if (r.answer->chosen) {
    const json& lat = j["latency"];
    Table t;
    t.header = {"", "p50", "p95", "p99", "mean"};
    t.right_align = {false, true, true, true, true};
    for (const auto& [label, key] : {std::pair<const char*, const char*>{"TTFT (ms)", "ttft_seconds"}, {"TPOT (ms)", "tpot_seconds"}})
      t.rows.push_back({label, ms_of(lat[key]["p50"]), ms_of(lat[key]["p95"]), ms_of(lat[key]["p99"]), ms_of(lat[key]["mean"])});
    const json& e2e = lat["e2e_seconds"];
    t.rows.push_back({"end to end (s)", fixed(e2e["p50"], 2), fixed(e2e["p95"], 2), fixed(e2e["p99"], 2), fixed(e2e["mean"], 2)});
    p.tables.push_back({fmt::format("Latency at the asked load ({:.4g} {} per replica, simulated)", j["serve"]["load_per_replica"].get<double>(), unit),
                        render(t, Format::kHtml)});
    const json& sv = j["serve"];
    const json& tp = j["throughput"];
    const json& kv = j["kv_cache"];
    Table plan;
    plan.header = {"figure", "value"};
    plan.right_align = {false, true};
    const json& max_load = closed ? sv["max_concurrency_per_replica"] : sv["max_rate_per_replica"];
    plan.rows = {{"layout of a replica", fmt::format("tp={} pp={}", count_of(sv["layout"]["tp"]), count_of(sv["layout"]["pp"]))},
                 {"replicas", count_of(sv["replicas"])},
                 {"devices in all", count_of(sv["devices_total"])},
                 {q.targets.any() ? fmt::format("most {} per replica within the targets", unit)
                                  : fmt::format("most {} per replica it keeps up with (saturated)", unit),
                  fixed(q.targets.any() ? max_load : sv["saturated_rate_per_replica"], 3)},
                 {"requests/s (all replicas)", fixed(tp["requests_per_second"], 2)},
                 {"output tokens/s (all replicas)", fixed(tp["output_tokens_per_second"], 0)},
                 {"total tokens/s (all replicas)", fixed(tp["total_tokens_per_second"], 0)},
                 {"KV cache per replica (tokens)", count_of(kv["capacity_tokens"])},
                 {"sequences of the mean length the KV cache holds", count_of(kv["max_sequences"])},
                 {"KV bytes per token", count_of(kv["bytes_per_token"])},
                 {"$ per million output tokens", j["cost"]["usd_per_million_output_tokens"].is_number()
                                                     ? fmt::format("{:.3f}", j["cost"]["usd_per_million_output_tokens"].get<double>())
                                                     : "- (no cloud price)"},
                 {"kWh per million output tokens", fixed(j["energy"]["kwh_per_million_output_tokens"], 3)}};
    p.tables.push_back({"The plan", render(plan, Format::kHtml)});
  }
  Table layouts;
  layouts.header = {"tp", "fits", "KV tokens", fmt::format("max {} per replica", unit), "replicas", "devices", "binding", "simulations"};
  layouts.right_align = {true, false, true, true, true, true, false, true};
  for (const auto& l : j["layouts"])
    layouts.rows.push_back({count_of(l["tp"]), l["fits"].get<bool>() ? "yes" : "no", l["fits"].get<bool>() ? count_of(l["kv_capacity_tokens"]) : "-",
                            fixed(l["max_load_per_replica"], 3), l["replicas"].get<long long>() ? count_of(l["replicas"]) : "-",
                            l["devices"].get<long long>() ? count_of(l["devices"]) : "-", l["binding_constraint_key"].get<std::string>(),
                            count_of(l["simulations"])});
  p.tables.push_back({"Layouts tried (tensor-parallel sizes)", render(layouts, Format::kHtml)});

  p.explanation.push_back("Binding constraint: " + binding_words(r) + ".");
  p.explanation.push_back("Latencies: " + j["latency"]["scope"].get<std::string>() + ".");
  p.explanation.push_back(
      q.targets.any()
          ? fmt::format("With latency targets, the highest load one replica carries within them is searched by simulation; the "
                        "replicas are the asked load divided by it, rounded up, and the layout chosen is the one needing the "
                        "fewest devices.")
          : fmt::format("Without latency targets, the figures describe the {} given devices at the asked load.", q.devices.value_or(1)));
  const json& sim = j["simulation"];
  std::string rounds = rounds_left_out(sim["first_round_left_out"].get<bool>(), sim["last_round_left_out"].get<bool>());
  if (!rounds.empty()) rounds = ", and " + rounds;
  p.explanation.push_back(fmt::format("The {} engine's scheduler was simulated step by step: {} requests ({} measured after a warm-up of "
                                      "{:.0f}%{}), {:.1f} s of traffic, {} steps, a mean batch of {:.1f} sequences, {} preemptions, seed {}.",
                                      q.engine.preset, sim["requests"].get<long long>(), sim["measured_requests"].get<long long>(),
                                      100 * sim["warmup_fraction"].get<double>(), rounds, sim["seconds"].get<double>(), sim["steps"].get<long long>(),
                                      sim["mean_batch"].get<double>(), sim["preemptions"].get<long long>(), sim["seed"].get<long long>()));
  p.explanation.push_back(j["cost"]["usd_per_million_output_tokens"].is_number()
                              ? fmt::format("Cost: the devices' cloud price (${:.2f} per device-hour) for the time they take to produce a million "
                                            "output tokens at the simulated throughput.",
                                            j["cost"]["usd_per_device_hour"].get<double>())
                              : std::string("Cost: not given, the catalog has no cloud price for this device."));
  if (j["energy"]["power_fraction_of_tdp"].is_number())
    p.explanation.push_back(fmt::format("Energy: the devices' TDP at {:.0f}% (the power fraction assumed for serving) for the same time.",
                                        100 * j["energy"]["power_fraction_of_tdp"].get<double>()));
  if (!chart.series.empty())
    p.plots.push_back({"p95 TTFT and TPOT of one replica against its load (as hwplan plot serve draws it); the targets dashed, "
                       "the highest load within them marked.",
                       render_latency_svg(chart)});
  for (const char* key : {"engine", "traffic", "targets"}) flatten_given(j[key], key, p.assumptions);
  for (const char* key : {"requests", "warmup_fraction", "seed"}) p.assumptions.push_back({std::string("simulation.") + key, value_text(j["simulation"][key])});
  p.assumptions.push_back({"energy.power_fraction_of_tdp", value_text(j["energy"]["power_fraction_of_tdp"])});
  p.assumptions.push_back({"cost.basis", value_text(j["cost"]["basis"])});
  if (layout) add_workload_assumptions(*layout, p);
  if (j["cost"]["usd_per_device_hour"].is_number()) p.assumptions.push_back({"cost.usd_per_device_hour", value_text(j["cost"]["usd_per_device_hour"])});
  std::set<std::string> seen;
  add_sources(*r.device, p, seen);
  add_sources(*r.model, p, seen);
  return render_page(p, ctx);
}

std::string tco_html(const TcoReport& r, const EstimateInput& in, const Estimate& e, const SearchResult* search, const HtmlContext& ctx) {
  const tco::Inputs& ti = *r.inputs;
  const tco::Result& res = *r.result;
  Page p;
  p.title = fmt::format("Owning or renting {} x {} for {} {}", ti.count, r.device->name, in.model->id, to_string(in.workload.task));
  std::vector<std::string> verdict = tco_verdict(r);
  if (!res.own_priced) {
    p.answer = fmt::format("{} is not sold, only rented: renting {} x {} over {:g} years at {:.3g}% utilisation costs {}", r.device->id,
                           ti.count, r.device->id, ti.years, 100 * ti.utilization, money(res.rent_total_usd.value_or(0)));
  } else {
    p.answer = fmt::format("Owning costs {} over {:g} years at {:.3g}% utilisation", money(res.own.total_usd), ti.years, 100 * ti.utilization);
    p.answer += res.rent_total_usd ? fmt::format("; renting the same device-hours costs {}. {}", money(*res.rent_total_usd), verdict.front())
                                   : "; there is no rental price to compare with.";
  }
  p.warnings = r.notes;
  p.tables.push_back({tco_heading(r), render(tco_cost_table(r), Format::kHtml)});
  if (!verdict.empty()) p.tables.push_back({"What flips the decision (each input alone, the others as above)", render(tco_flip_table(r), Format::kHtml)});
  p.tables.push_back({"The workload costed (hwplan estimate)", render(estimate_summary_table(in, e), Format::kHtml)});
  for (std::size_t i = 1; i < verdict.size(); ++i) p.explanation.push_back(verdict[i]);
  p.explanation.push_back(ti.ownable ? fmt::format("Buying: {} per device ({}, {}).", money(ti.device_usd), ti.device_price_kind, ti.device_price_date)
                                      : "Buying: not sold (only rented); a --prices quote with street_usd costs owning too.");
  p.explanation.push_back(ti.rent_usd_per_device_hour
                              ? fmt::format("Renting: {} per device-hour ({}, {}{}).", money(*ti.rent_usd_per_device_hour), ti.rent_basis,
                                            ti.rent_provider.empty() ? "provider not named" : ti.rent_provider,
                                            ti.rent_date.empty() ? "" : ", " + ti.rent_date)
                              : "Renting: no " + ti.rent_basis + " rental price in the catalog (give one with --rent-usd-per-hour or --prices).");
  p.explanation.push_back(
      "Owned = devices + host share + networking + electricity (TDP x utilisation, device and host, x PUE) + space (provisioned "
      "kW x PUE x months) + operations (a fraction of capex a year) - resale. Rented = the device-hours of the same work (the "
      "horizon x utilisation) x the hourly price.");
  if (res.jobs)
    p.explanation.push_back(fmt::format("One {} takes {} (the estimate below); {:.3g} of them fit in the horizon at this utilisation.",
                                        ti.job_kind, human_seconds(ti.job_hours * 3600), *res.jobs));
  for (const auto& n : e.notes) p.explanation.push_back(n);
  if (search)
    p.explanation.push_back(fmt::format("The layout was searched: {} layouts, {} of them fit; the fastest that fits is costed.",
                                        search->layouts_evaluated, search->layouts_feasible));
  p.plots.push_back({"Cumulative cost against months, owning against renting (as hwplan plot tco draws it), break-even marked.",
                     render_cost_svg(tco_chart(r))});
  flatten(tco_json(r)["inputs"], "inputs", p.assumptions);
  add_assumptions(estimate_json(in, e, search), p);
  std::set<std::string> seen;
  add_sources(*r.device, p, seen);
  add_sources(*in.model, p, seen);
  for (const auto& [input, source] : tco::default_sources(ti.host_class)) p.sources.push_back({"tco: " + input, source});
  return render_page(p, ctx);
}

std::string recommend_serve_html(const ServeRankingReport& r, const HtmlContext& ctx) {
  const json& doc = r.document;
  const json& candidates = doc["candidates"];
  const json& excluded = doc["excluded"];
  Page p;
  const std::string model_id = r.model ? r.model->id : std::string("the model");
  p.title = fmt::format("Hardware to serve {}", model_id);
  const std::string optimize = doc["optimize"].get<std::string>();
  if (candidates.empty()) {
    p.answer = fmt::format("No device of the {} considered serves {} within the targets; why each was left out is listed below.",
                           excluded.size(), r.traffic);
  } else {
    const json& c = candidates.front();
    const char* best = optimize == "energy" ? "Least energy per million output tokens"
                       : optimize == "time"  ? "Fewest devices"
                                             : "Cheapest per million output tokens";
    p.answer = fmt::format("{}: {} x {} ({} replica(s) of {}) for {}: p95 TTFT {} ms, p95 TPOT {} ms{}.", best,
                           count_of(c["devices_total"]), c["device"].get<std::string>(), count_of(c["replicas"]),
                           layout_of(c["layout"]), r.traffic, ms_of(c["ttft_p95_seconds"]), ms_of(c["tpot_p95_seconds"]),
                           c["usd_per_million_output_tokens"].is_number()
                               ? fmt::format(", ${:.3f} per million output tokens (rent)", c["usd_per_million_output_tokens"].get<double>())
                               : std::string());
  }
  p.tables.push_back({"Devices that meet the targets, best first", render(r.table, Format::kHtml)});
  Table left;
  left.header = {"device", "why not"};
  for (const auto& x : excluded) left.rows.push_back({x["device"].get<std::string>(), x["reason"].get<std::string>()});
  p.tables.push_back({"Left out", render(left, Format::kHtml)});
  if (!candidates.empty())
    p.explanation.push_back("Binding constraint of #1: " + candidates.front()["binding_constraint"].get<std::string>() + ".");
  p.explanation.push_back(fmt::format("{} of {} devices meet the targets. Each device gets the plan hwplan serve makes (the layout and "
                                      "replicas on the fewest devices within the targets), simulated with {} requests; check the "
                                      "pick with hwplan serve.",
                                      candidates.size(), candidates.size() + excluded.size(), doc["simulation_requests"].get<long long>()));
  p.explanation.push_back(optimize == "energy" ? "Ranked by energy per million output tokens (TDP at the serving power fraction)."
                          : optimize == "time" ? "Ranked by the fewest devices."
                                               : "Ranked by cost per million output tokens (the cloud price for the simulated "
                                                 "throughput); devices without a cloud price after those with one.");
  for (const char* key : {"task", "optimize", "simulation_requests"}) p.assumptions.push_back({key, value_text(doc[key])});
  if (r.question) {
    const serve::ServeQuestion& q = *r.question;
    json given = {{"traffic", {{"description", r.traffic},
                               {"closed_loop", q.load.closed_loop},
                               {q.load.closed_loop ? "concurrency" : "requests_per_second", q.load.value},
                               {"mean_prompt_tokens", q.traffic.prompt.average()},
                               {"mean_output_tokens", q.traffic.output.average()},
                               {"prefix_cache_hit", q.traffic.prefix_cache_hit},
                               {"seed", q.traffic.seed}}},
                  {"targets", {{"ttft_p95_seconds", q.targets.ttft_p95 ? json(*q.targets.ttft_p95) : json(nullptr)},
                               {"ttft_p99_seconds", q.targets.ttft_p99 ? json(*q.targets.ttft_p99) : json(nullptr)},
                               {"tpot_p95_seconds", q.targets.tpot_p95 ? json(*q.targets.tpot_p95) : json(nullptr)},
                               {"tpot_p99_seconds", q.targets.tpot_p99 ? json(*q.targets.tpot_p99) : json(nullptr)},
                               {"e2e_p95_seconds", q.targets.e2e_p95 ? json(*q.targets.e2e_p95) : json(nullptr)},
                               {"e2e_p99_seconds", q.targets.e2e_p99 ? json(*q.targets.e2e_p99) : json(nullptr)}}},
                  {"engine", {{"preset", q.engine.preset}, {"block_tokens", q.engine.block_tokens},
                              {"kv_memory_fraction", q.engine.kv_fraction_by_tp
                                                         ? json(fmt::format("by tensor parallelism ({:g} at tp 1 to {:g} at 16)",
                                                                            serve::kv_fraction_for(q.engine, 1),
                                                                            serve::kv_fraction_for(q.engine, 16)))
                                                         : json(q.engine.kv_memory_fraction)},
                              {"chunked_prefill", q.engine.chunked_prefill},
                              {"preempted_kv", q.engine.keep_preempted_kv ? "cached" : "freed"},
                              {"kv_admission", serve::to_string(q.engine.kv_admission)},
                              {"separate_prefill", q.engine.separate_prefill}}}};
    for (const char* key : {"traffic", "targets", "engine"}) flatten_given(given[key], key, p.assumptions);
    p.assumptions.push_back({"engine.max_batched_tokens, engine.max_sequences",
                             "as set for each device: the engine's defaults for its memory unless --max-batched-tokens / "
                             "--max-sequences were given (see hwplan serve --help)"});
  }
  if (r.latency)
    p.plots.push_back({"p95 TTFT and TPOT of one replica against its load for the first candidates (as hwplan plot serve draws "
                       "them, with these flags); the targets dashed, the highest load within them marked.",
                       render_latency_svg(*r.latency)});
  std::set<std::string> seen;
  for (const Device* d : r.devices) add_sources(*d, p, seen);
  if (r.model) add_sources(*r.model, p, seen);
  return render_page(p, ctx);
}

}  // namespace hwplan::report
