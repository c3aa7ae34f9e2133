#include "report/recommend_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/strings.hpp"
#include "core/units.hpp"
#include "estimators/stack.hpp"
#include "report/estimate_report.hpp"

namespace hwplan::report {
using nlohmann::json;

// A rejection in words; an over-budget one names its cheapest working configuration in money.
std::string rejection_reason(const Rejection& x) {
  if (!x.over_budget) return x.reason;
  const OverBudget& o = *x.over_budget;
  return fmt::format("over budget: the cheapest configuration that does the job is {} x {} at {}{} (budget {})", o.count, x.device,
                     money(o.cost_usd),
                     o.porting_usd > 0 ? ", of which " + money(o.porting_usd) + " porting to its stack (--porting-cost-usd)" : "",
                     money(o.budget_usd));
}

namespace {

const char* basis_words(const std::string& basis) {
  return basis == "rent" ? "rent (cloud on-demand price x job time)"
         : basis == "buy" ? "buy (purchase price of the devices)"
                          : "own (cost of ownership over --own-years, as hwplan tco)";
}

// Why the list is costed as it is: the user's flag, or the automatic rule with its counts.
std::string cost_basis_rule(const CostBasisChoice& c) {
  if (!c.automatic) return "asked for";
  return fmt::format("automatic: the basis that prices more of the {} candidate devices ({} have a rental price, {} a "
                     "purchase price; a tie goes to rent); choose with --buy, --rent or --own-years N",
                     c.devices, c.with_rent_price, c.with_buy_price);
}

json rejection_json(const Rejection& x) {
  json j = {{"device", x.device}, {"reason", rejection_reason(x)}, {"fix", x.fix}};
  if (x.over_budget)
    j["cheapest_configuration"] = {{"device", x.device}, {"count", x.over_budget->count}, {"cost_usd", x.over_budget->cost_usd},
                                   {"porting_cost_usd", x.over_budget->porting_usd}};
  return j;
}

}  // namespace

json recommendation_json(const Recommendation& r, const WorkloadSpec& w, const RecommendSpec& spec) {
  json j;
  j["schema_version"] = kSchemaVersion;
  j["query"] = {{"model", r.model_id},
                {"task", w.task},
                {"precision", w.precision},
                {"tokens", r.job_tokens},
                {"tokens_assumed", r.job_tokens_assumed},
                {"optimize", spec.optimize},
                {"cost_basis", r.cost_basis.basis},
                {"cost_basis_requested", spec.cost_basis},
                {"cost_basis_rule", cost_basis_rule(r.cost_basis)},
                {"budget_usd", spec.budget_usd ? json(*spec.budget_usd) : json(nullptr)},
                {"max_count", spec.max_count},
                {"deadline", spec.deadline ? json(*spec.deadline) : json(nullptr)},
                {"global_batch", r.global_batch > 0 ? json(r.global_batch) : json(nullptr)},
                {"global_batch_assumed", r.global_batch_assumed},
                {"profile_device", r.profile_device.empty() ? json(nullptr) : json(r.profile_device)},
                {"devices", spec.devices},
                {"count", spec.count ? json(*spec.count) : json(nullptr)}};
  j["candidates"] = json::array();
  long long shown = 0;
  for (const auto& c : r.candidates) {
    if (shown++ >= spec.top) break;
    j["candidates"].push_back({{"device", c.device->id},
                               {"device_name", c.device->name},
                               {"count", c.count},
                               {"plan", plan_json(c.estimate.plan)},
                               {"stack", c.stack},
                               {"stack_assumed", c.stack_assumed},
                               {"fits", c.estimate.fits},
                               {"per_device_bytes", c.estimate.memory.total()},
                               {"capacity_bytes", c.estimate.capacity_bytes},
                               {"step_seconds", c.step_seconds},
                               {"tokens_per_second", c.tokens_per_second},
                               {"total_seconds", c.total_seconds},
                               {"cost_usd", c.cost_usd >= 0 ? json(c.cost_usd) : json(nullptr)},
                               {"cost_basis", c.cost_basis},
                               {"priced", c.cost_usd >= 0},
                               {"energy_kwh", c.energy_kwh},
                               {"power_w", c.power_w},
                               {"score", c.score},
                               {"at_search_limit", c.at_search_limit},
                               {"reasons", c.reasons},
                               {"warnings", c.estimate.warnings},
                               {"price_notes", c.price_notes}});
  }
  j["feasible_devices"] = r.candidates.size();
  j["feasible_configurations"] = r.feasible_configurations;
  j["unpriced_devices"] = r.unpriced;
  j["rejected"] = json::array();
  for (const auto& x : r.rejected) j["rejected"].push_back(rejection_json(x));
  if (r.candidates.empty()) {
    j["nearest_misses"] = json::array();
    for (const auto& x : r.nearest_misses) j["nearest_misses"].push_back(rejection_json(x));
  }
  j["search"] = {{"configurations", r.configurations}, {"layouts_evaluated", r.layouts_evaluated}};
  return j;
}

// CSV: one number per cell, the unit in the column name (a spreadsheet can sort and sum it).
Table recommendation_csv_table(const Recommendation& r, const WorkloadSpec& w, const RecommendSpec& spec) {
  Table t;
  const bool inference = w.task == "infer";
  t.header = {"rank", "device", "count", "tp", "pp", "dp", "stack", "memory_per_device_gib", "capacity_gib",
              r.counts_input_tokens ? "input_tokens_per_second" : inference ? "output_tokens_per_second" : "tokens_per_second", "job_hours", "cost_usd", "cost_basis",
              "energy_kwh", "score", "at_search_limit", "job_tokens", "job_tokens_assumed", "warnings", "price_notes"};
  long long shown = 0;
  for (const auto& c : r.candidates) {
    if (shown >= spec.top) break;
    ++shown;
    const Plan& p = c.estimate.plan;
    t.rows.push_back({std::to_string(shown), c.device->id, std::to_string(c.count), std::to_string(p.tp), std::to_string(p.pp),
                      std::to_string(p.dp), c.stack, fmt::format("{:.3f}", c.estimate.memory.total() / kGiB),
                      fmt::format("{:.3f}", c.estimate.capacity_bytes / kGiB), fmt::format("{:.1f}", c.tokens_per_second),
                      fmt::format("{:.4f}", c.total_seconds / 3600), c.cost_usd >= 0 ? fmt::format("{:.2f}", c.cost_usd) : "",
                      c.cost_usd >= 0 ? c.cost_basis : "", fmt::format("{:.3f}", c.energy_kwh), fmt::format("{:.4f}", c.score),
                      c.at_search_limit ? "true" : "false", fmt::format("{:.6g}", r.job_tokens),
                      r.job_tokens_assumed ? "true" : "false", fmt::format("{}", fmt::join(c.estimate.warnings, " | ")),
                      fmt::format("{}", fmt::join(c.price_notes, " | "))});
  }
  return t;
}

Table recommendation_table(const Recommendation& r, const WorkloadSpec& w, const RecommendSpec& spec) {
  Table t;
  const bool inference = w.task == "infer";
  double longest = 0;  // one time unit for the whole column
  long long counted = 0;
  for (const auto& c : r.candidates)
    if (counted++ < spec.top) longest = std::max(longest, c.total_seconds);
  const char* rate = r.counts_samples ? "samples/s" : r.counts_input_tokens ? "input tok/s" : inference ? "output tok/s" : "tokens/s";
  t.header = {"#", "device", "count", "layout", "memory/device", rate, "job time", "cost", "basis", "energy", "score"};
  t.right_align = {true, false, true, false, true, true, true, true, false, true, true};
  // Inference: each device is priced with an engine, without --engine its own default (vLLM on a datacenter GPU,
  // llama.cpp on a Mac, its NPU runtime on an NPU), which changes memory and speed: each row names it.
  if (inference) {
    t.header.insert(t.header.begin() + 4, "engine");
    t.right_align.insert(t.right_align.begin() + 4, false);
  }
  long long shown = 0;
  for (const auto& c : r.candidates) {
    if (shown >= spec.top) break;
    ++shown;
    const Plan& p = c.estimate.plan;
    t.rows.push_back({std::to_string(shown), c.device->id, std::to_string(c.count),
                      c.count > 1 ? fmt::format("tp{}{} pp{} dp{}{}{}", p.tp, p.cp > 1 ? fmt::format(" cp{}", p.cp) : "", p.pp, p.dp,
                                                  p.shard_replicas() > 1 ? fmt::format("/{}", p.zero_ranks()) : "",
                                                  p.ep > 1 ? fmt::format(" ep{}", p.ep) : "")
                                    : "-",
                      fmt::format("{} / {}", human_bytes(c.estimate.memory.total()), human_bytes(c.estimate.capacity_bytes)),
                      fmt::format("{:.0f}", c.tokens_per_second), human_days_or_hours(c.total_seconds, longest),
                      c.cost_usd >= 0 ? money(c.cost_usd) : std::string("-"), c.cost_usd >= 0 ? c.cost_basis : "no price",
                      fmt::format("{:.2f} kWh", c.energy_kwh),
                      fmt::format("{:.2f}", c.score)});
    if (inference) t.rows.back().insert(t.rows.back().begin() + 4, c.stack);
  }
  return t;
}

std::string render_recommendation(const Recommendation& r, const WorkloadSpec& w, const RecommendSpec& spec,
                                  Format format) {
  if (format == Format::kJson) return recommendation_json(r, w, spec).dump(2) + "\n";
  if (format == Format::kCsv) return render(recommendation_csv_table(r, w, spec), format);
  Table t = recommendation_table(r, w, spec);
  std::string out;
  // Markdown carries what the table says around the ranking (the job, the cost basis, reasons and warnings).
  const bool words = format == Format::kTable || format == Format::kMarkdown;
  // The training stack every candidate is priced with (a default changes the numbers: say so, as estimate does).
  std::string stack;
  if (auto task = parse_task(w.task); task && *task != Task::kInfer)
    stack = w.framework ? ", " + *w.framework + " stack"
                        : ", " + std::string(to_string(default_framework(*task))) + " stack, assumed: set --framework";
  else if (task && !w.engine)
    stack = ", engine: each device's default, named per row; --engine sets one";
  if (words)
    out += fmt::format("{} {} ({}{}), job of {} {}{}{}; optimizing {}\n\n", r.model_id, w.task, 
                       w.weights ? *w.weights + " weights" : w.precision, stack, human_count(r.job_tokens),
                       r.counts_samples ? "samples" : "tokens", r.job_tokens_assumed ? " (assumed: set --tokens)" : "",
                       r.global_batch > 0 ? fmt::format(", global batch {} {} for every candidate{}", r.global_batch,
                                                        r.counts_samples ? "samples" : "sequences",
                                                        r.global_batch_assumed ? " (default: set --global-batch)" : "")
                                          : std::string(),
                       spec.optimize);
  if (words)
    out += fmt::format("Cost basis: {}; {}.{}\n\n", basis_words(r.cost_basis.basis), cost_basis_rule(r.cost_basis),
                       r.unpriced > 0 ? fmt::format(" {} device(s) have no price on it: listed as 'no price'{}, ranked on the "
                                                    "other criteria only.", r.unpriced,
                                                    spec.optimize == "cost" || spec.optimize == "balanced"
                                                        ? " after the priced ones" : "")
                                      : std::string());
  if (words && !r.profile_device.empty())
    out += r.profile_in_catalog
               ? fmt::format("Profile: measured on {}; it applies to {} only, the other devices use the catalog.\n\n",
                             r.profile_device, r.profile_device)
               : fmt::format("Profile: measured on {}, which the catalog does not know: its curves apply to every "
                             "device evaluated.\n\n", r.profile_device);
  out += render(t, format);
  if (!words) return out;
  long long shown = 0;
  out += "\n";
  // The estimates' warnings (a precision a device lacks, an assumed network or efficiency): each under its candidate,
  // and once at the end those every listed candidate shares.
  const long long listed = std::min<long long>(spec.top, static_cast<long long>(r.candidates.size()));
  std::vector<std::string> shared;
  if (listed > 0)
    for (const auto& warning : r.candidates.front().estimate.warnings)
      if (std::all_of(r.candidates.begin(), r.candidates.begin() + listed, [&](const Candidate& c) {
            return std::find(c.estimate.warnings.begin(), c.estimate.warnings.end(), warning) != c.estimate.warnings.end();
          }))
        shared.push_back(warning);
  for (const auto& c : r.candidates) {
    if (shown++ >= spec.top) break;
    out += fmt::format("{}. {} x{}: ", shown, c.device->id, c.count);
    for (std::size_t i = 0; i < c.reasons.size(); ++i) out += (i ? "; " : "") + c.reasons[i];
    out += "\n";
    for (const auto& warning : c.estimate.warnings)
      if (std::find(shared.begin(), shared.end(), warning) == shared.end()) out += "   warning: " + warning + "\n";
    for (const auto& note : c.price_notes) out += "   note: " + note + "\n";
  }
  for (const auto& warning : shared) out += "warning: " + warning + "\n";
  if (r.candidates.empty()) {
    out += "\nNothing is feasible. Nearest misses:\n";
    for (const auto& x : r.nearest_misses)
      out += "  " + x.device + ": " + rejection_reason(x) + (x.fix.empty() || x.over_budget ? "" : " (" + x.fix + ")") + "\n";
  }
  out += fmt::format("\nRejected ({}):\n", r.rejected.size());
  for (const auto& x : r.rejected)
    out += "  " + x.device + ": " + rejection_reason(x) + (x.fix.starts_with("use --") ? " (" + x.fix + ")" : "") + "\n";
  out += fmt::format("\n{} feasible configurations of {} evaluated ({} layouts).\n", r.feasible_configurations, r.configurations,
                     r.layouts_evaluated);
  return out;
}

json fit_json(const FitReport& f, const WorkloadSpec& w) {
  json j;
  j["schema_version"] = kSchemaVersion;
  j["query"] = {{"model", w.model}, {"device", w.device}, {"count", w.count}, {"task", w.task}};
  j["fits"] = f.baseline.fits;
  // Fits the device while offloading more than a host of its class holds (a warning says how much).
  j["host_memory_short"] = f.baseline.host_memory_short;
  j["per_device_bytes"] = f.baseline.memory.total();
  j["capacity_bytes"] = f.baseline.capacity_bytes;
  j["max_micro_batch"] = f.max_micro_batch ? json(*f.max_micro_batch) : json(nullptr);
  j["max_seq"] = f.max_seq ? json(*f.max_seq) : json(nullptr);
  j["model_context_tokens"] = f.model_context;
  j["max_seq_beyond_context"] = f.max_seq_beyond_context();
  j["changes"] = json::array();
  for (const auto& c : f.changes)
    j["changes"].push_back({{"change", c.change}, {"flags", c.flags}, {"fits", c.fits}, {"per_device_bytes", c.per_device_bytes},
                            {"seconds", c.seconds}, {"time_change_fraction", c.slowdown}, {"changes_numerics", c.quality_change}});
  j["combinations"] = json::array();
  for (const auto& c : f.combinations)
    j["combinations"].push_back({{"change", c.change}, {"flags", c.flags}, {"fits", c.fits}, {"per_device_bytes", c.per_device_bytes},
                                 {"seconds", c.seconds}, {"time_change_fraction", c.slowdown}, {"changes_numerics", c.quality_change}});
  if (f.combined)
    j["combined"] = {{"change", f.combined->change}, {"flags", f.combined->flags}, {"fits", f.combined->fits},
                     {"per_device_bytes", f.combined->per_device_bytes}, {"seconds", f.combined->seconds},
                     {"time_change_fraction", f.combined->slowdown}, {"changes_numerics", f.combined->quality_change}};
  j["warnings"] = f.baseline.warnings;  // what the estimate assumed or fell back to, as estimate reports it
  return j;
}

Table fit_table(const FitReport& f) {
  Table t;
  t.header = {"change", "flags", "fits", "memory/device", "time change"};
  t.right_align = {false, false, false, true, true};
  std::vector<FitChange> rows = f.changes;
  for (const auto& c : f.combinations) {
    rows.push_back(c);
    rows.back().change = "together: " + rows.back().change;
  }
  for (const auto& c : rows)
    t.rows.push_back({c.change + (c.quality_change ? " *" : ""), c.flags, c.fits ? "yes" : "no",
                      c.per_device_bytes > 0 ? human_bytes(c.per_device_bytes) : "-",
                      c.seconds > 0 ? fmt::format("{:+.0f}%", 100 * c.slowdown) : "-"});
  return t;
}

std::string render_fit(const FitReport& f, const WorkloadSpec& w, Format format) {
  if (format == Format::kJson) return fit_json(f, w).dump(2) + "\n";
  std::string out;
  const MemoryBreakdown& m = f.baseline.memory;
  // Fitting the device while offloading more than a host of its class holds is not a plain "fits" (the same
  // configuration suggested as a change is marked as no way to fit).
  const std::string verdict = !f.baseline.fits ? "DOES NOT FIT"
                              : f.baseline.host_memory_short
                                  ? "fits the device, but its host needs more memory than a typical one has (warning below)"
                                  : "fits";
  const bool words = format == Format::kTable || format == Format::kMarkdown;
  if (words) {
    out += fmt::format("As configured: {} of {} per device: {}.\n", human_bytes(m.total()), human_bytes(f.baseline.capacity_bytes),
                       verdict);
    out += fmt::format("  weights {}, gradients {}, optimizer {}, activations {}, KV cache {}, runtime {}\n", human_bytes(m.weights),
                       human_bytes(m.gradients), human_bytes(m.optimizer), human_bytes(m.activations), human_bytes(m.kv_cache),
                       human_bytes(m.runtime()));
    out += fmt::format("Largest {} that fits as configured: {}; longest {}: {}\n\n", w.task == "infer" ? "batch" : "micro-batch",
                       f.max_micro_batch ? std::to_string(*f.max_micro_batch) : "none", w.task == "infer" ? "context" : "sequence",
                       f.max_seq ? std::to_string(*f.max_seq) +
                                       (f.max_seq_beyond_context()
                                            ? fmt::format(" (beyond the model's {}-token context: it would need context extension)",
                                                          f.model_context)
                                            : std::string())
                                 : "none");
  }
  Table t = fit_table(f);
  if (format == Format::kCsv) {
    // The configuration as given first, then the changes; the largest batch and sequence and the warnings as rows
    // of their own (what the table prints around its rows).
    t.rows.insert(t.rows.begin(), {"as configured", "", !f.baseline.fits ? "no" : f.baseline.host_memory_short ? "host memory short" : "yes",
                                   human_bytes(m.total()), "-"});
    t.rows.push_back({fmt::format("largest {} that fits as configured", w.task == "infer" ? "batch" : "micro-batch"), "",
                      f.max_micro_batch ? std::to_string(*f.max_micro_batch) : "none", "", ""});
    t.rows.push_back({fmt::format("longest {} that fits as configured", w.task == "infer" ? "context" : "sequence"), "",
                      f.max_seq ? std::to_string(*f.max_seq) : "none", "", ""});
    for (const auto& warning : f.baseline.warnings) t.rows.push_back({"warning", warning, "", "", ""});
  }
  out += render(t, format);
  if (words) {
    out += "\n* changes the model's numerics or the task (quantisation, adapters, shorter context).\n";
    bool any = f.baseline.fits || std::any_of(f.changes.begin(), f.changes.end(), [](const FitChange& c) { return c.fits; });
    if (f.combined)
      out += fmt::format("No single change fits; the fastest combination that does: {} ({}), {}, {:+.0f}% time{}.\n",
                         f.combined->change, f.combined->flags, human_bytes(f.combined->per_device_bytes),
                         100 * f.combined->slowdown, f.combined->quality_change ? " (changes the numerics)" : "");
    else if (!any)
      out += "Nothing fits on this device, even with every change combined: use more devices (hwplan estimate --count N,\n"
             "or hwplan recommend) or a shorter sequence.\n";
    for (const auto& warning : f.baseline.warnings)
      out += (format == Format::kMarkdown ? "\n**warning:** " : "warning: ") + warning + "\n";
  }
  return out;
}

}  // namespace hwplan::report
