// hwplan batch FILE.yaml: many scenarios at once; a bad scenario fails alone, the others still run.
#include <fmt/format.h>

#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.hpp"
#include "report/recommend_report.hpp"
#include "core/strings.hpp"
#include "io/batch_io.hpp"
#include "report/estimate_report.hpp"
#include "recommend/front_end.hpp"
#include "estimators/inference.hpp"

namespace hwplan::cli {
namespace {

using nlohmann::json;

struct BatchOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  std::string file;
  int threads = 0;
};

struct ScenarioResult {
  bool ok = false;
  bool infeasible = false;  // answered, with nothing feasible (estimate and recommend would exit 3)
  std::string error;
  std::vector<std::string> row;  // name, command, device, count, fits, memory, time, throughput, note
  json full;
};

// The first warning (an assumption or fallback that changes the numbers) and how many more there are; empty if none.
std::string first_warning(const std::vector<std::string>& warnings) {
  if (warnings.empty()) return "";
  return "warning: " + warnings.front() +
         (warnings.size() > 1 ? fmt::format(" (+{} more warnings: --format json)", warnings.size() - 1) : "");
}

// The row's note: the first warning, else the first informational note.
std::string first_note(const Estimate& e) {
  if (e.warnings.empty()) return e.notes.empty() ? "" : e.notes.front();
  return first_warning(e.warnings);
}

ScenarioResult run_scenario(const io::Registry& registry, const io::Scenario& s, bool want_json) {
  ScenarioResult r;
  auto fail = [&](const std::string& message) {
    r.ok = false;
    r.error = message;
    r.row = {s.name, s.command, s.workload.device, std::to_string(s.workload.count), "-", "-", "-", "-", "error: " + message};
  };
  if (s.error) {
    fail(*s.error);
    return r;
  }
  try {
    if (s.command == "estimate") {
      // A deadline asks for the smallest count that finishes the job in time, as estimate --deadline does.
      WorkloadSpec w = s.workload;
      int deadline_count = 0;
      if (s.deadline_given && s.recommend.deadline) {
        auto seconds = parse_duration_seconds(*s.recommend.deadline);
        if (!seconds) throw InputError({}, "deadline", "'" + *s.recommend.deadline + "' is not a duration such as 14d, 36h, 90m");
        if (s.count_given) throw InputError({}, "count", "deadline searches the count; give one or the other");
        if (w.task == "infer") throw InputError({}, "deadline", "applies to training tasks (inference: hwplan serve)");
        const long long max_count = s.max_count_given ? s.recommend.max_count : 4096;  // estimate --max-count's default
        const Device& device = registry.device(w.device);
        auto answer = smallest_count_for_deadline(registry, w, device, *seconds, max_count);
        if (!answer) {
          const std::string reason = "nothing feasible: no count up to " + std::to_string(max_count) +
                                     " (max_count) finishes the job within " + *s.recommend.deadline;
          r.row = {s.name, s.command, device.id, "-", "no", "-", "-", "-", reason};
          r.ok = true;
          r.infeasible = true;
          if (want_json) r.full = {{"feasible", false}, {"reason", reason}};
          return r;
        }
        w = answer->workload;
        deadline_count = answer->count;
      }
      Query q = resolve_query(registry, w);
      Outcome o = run_query(q);
      // The refusals estimate makes: no layout of this count, or none with a finite time.
      if (no_layout(o)) throw no_layout_error(q, "count");
      if (o.search && !o.search->found && o.estimate.params.total <= 0)
        throw InputError({}, "count", "no layout of " + std::to_string(q.input.system.count) + " x " + q.device->id + " can run " +
                                          q.model.id + ": none has a finite time");
      const Estimate& e = o.estimate;
      std::string time, rate;
      // A generic network (a CNN) counts samples (images), and its inference is one batch's latency.
      // An encoder's inference (BERT, ViT), or a decoder's with --generate 0, is one forward pass too: samples/s.
      const bool one_pass = !e.training && one_forward_pass(q.model, q.input.workload.generate);
      const char* unit = q.model.is_transformer() && !one_pass ? "tok/s" : "samples/s";
      if (e.training) {
        time = human_seconds(e.total_seconds >= 0 ? e.total_seconds : e.train.step_seconds) + (e.total_seconds >= 0 ? " total" : " /step");
        rate = fmt::format("{:.0f} {}", e.train.tokens_per_second, unit);  // a CNN's training counts samples already
      } else if (e.total_seconds >= 0) {
        // A job of --tokens: its time and rate, as estimate gives them (batches of whole requests back to back).
        const InferenceJobRate& job = e.infer.job;
        time = human_seconds(e.total_seconds) + " total";
        rate = fmt::format("{:.1f} {}", job.per_second, std::string(job.counts) == "output" ? "tok/s"
                                                        : std::string(job.counts) == "input" ? "input tok/s" : "samples/s");
      } else {
        time = human_seconds(e.infer.prefill_seconds) + (one_pass ? " /batch" : " TTFT");
        rate = fmt::format("{:.1f} {}", one_pass ? e.forward_samples_per_second()
                                                 : e.infer.total_decode_tokens_per_second(), unit);
      }
      r.row = {s.name, s.command, q.device->id, std::to_string(q.input.system.count), e.fits ? "yes" : "no",
               human_bytes(e.memory.total()), time, rate, first_note(e)};
      if (want_json) {
        r.full = report::estimate_json(q.input, e, o.search ? &*o.search : nullptr);
        if (deadline_count > 0)  // as estimate --deadline --format json gives it
          r.full["deadline"] = {{"deadline", *s.recommend.deadline}, {"smallest_count", deadline_count},
                                {"global_batch", w.global_batch ? json(*w.global_batch) : json(nullptr)}};
      }
    } else if (s.command == "recommend") {
      // device and count restrict the candidates as recommend's --device and --count do.
      RecommendSpec spec = s.recommend;
      if (s.device_given) spec.devices.insert(spec.devices.begin(), s.workload.device);
      if (s.count_given) spec.count = s.workload.count;
      Recommendation rec = recommend(registry, s.workload, spec, 1);
      if (rec.candidates.empty()) {
        r.row = {s.name, s.command, "-", "-", "no", "-", "-", "-", "nothing feasible"};
        r.infeasible = true;
      } else {
        const Candidate& c = rec.candidates.front();
        const std::string warned = c.estimate.warnings.empty() ? std::string() : "; " + first_warning(c.estimate.warnings);
        r.row = {s.name, s.command, c.device->id, std::to_string(c.count), "yes", human_bytes(c.estimate.memory.total()),
                 human_seconds(c.total_seconds), fmt::format("{:.0f} {}", c.tokens_per_second, rec.counts_samples ? "samples/s" : "tok/s"),
                 (c.cost_usd >= 0 ? report::money(c.cost_usd) + " " + c.cost_basis : "no " + c.cost_basis + " price") + warned};
      }
      if (want_json) r.full = report::recommendation_json(rec, s.workload, spec);
    } else {
      FitReport f = fit_advice(registry, s.workload);
      std::string best = "-";
      for (const auto& c : f.changes)
        if (c.fits) {
          best = c.change;
          break;
        }
      // No single change fits: the fastest combination that does, as fit prints it.
      if (best == "-" && f.combined) best = "together: " + f.combined->change + " (" + f.combined->flags + ")";
      // The warnings travel with the row, as estimate's do (a precision the device lacks changes the memory too).
      const std::string warned = f.baseline.warnings.empty() ? std::string() : "; " + first_warning(f.baseline.warnings);
      if (!f.baseline.fits && best == "-") r.infeasible = true;
      r.row = {s.name, s.command, s.workload.device, std::to_string(s.workload.count), f.baseline.fits ? "yes" : "no",
               human_bytes(f.baseline.memory.total()), "-", "-", (f.baseline.fits ? "fits as is" : "try: " + best) + warned};
      if (want_json) r.full = report::fit_json(f, s.workload);
    }
    r.ok = true;
  } catch (const InputError& e) {
    // An error about a flag names the scenario's key of the same name at its line (or the scenario's, for a flag it
    // does not give); an error in another file (a model YAML, a profile) keeps its own position after the scenario's.
    fail(keyed_to_file(e, s.where, s.key_where, "", "scenario '" + s.name + "': ", &s.key_name).what());
  }
  return r;
}

int run_batch(BatchOptions& o) {
  io::Registry registry = make_registry(*o.global);
  std::vector<io::Scenario> scenarios = io::load_batch(o.file);
  report::Format format = format_of(*o.global);
  const bool want_json = format == report::Format::kJson;
  // Make the registry parse its files before the workers share it.
  registry.devices();
  registry.models();
  std::vector<ScenarioResult> results(scenarios.size());
  int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads), std::max<std::size_t>(1, scenarios.size())));
  auto work = [&](std::size_t begin, std::size_t step) {
    for (std::size_t i = begin; i < scenarios.size(); i += step) results[i] = run_scenario(registry, scenarios[i], want_json);
  };
  std::vector<std::future<void>> workers;
  for (int t = 1; t < threads; ++t) workers.push_back(std::async(std::launch::async, work, t, threads));
  work(0, threads);
  for (auto& f : workers) f.get();

  std::size_t failed = 0, infeasible = 0;
  for (const auto& r : results) {
    failed += r.ok ? 0 : 1;
    infeasible += r.ok && r.infeasible ? 1 : 0;
  }
  if (want_json) {
    json j = {{"schema_version", report::kSchemaVersion}, {"file", o.file}, {"scenarios", json::array()}};
    for (std::size_t i = 0; i < results.size(); ++i)
      j["scenarios"].push_back({{"name", scenarios[i].name},
                                {"command", scenarios[i].command},
                                {"ok", results[i].ok},
                                {"feasible", results[i].ok ? json(!results[i].infeasible) : json(nullptr)},
                                {"error", results[i].ok ? json(nullptr) : json(results[i].error)},
                                {"result", results[i].ok ? results[i].full : json(nullptr)}});
    j["summary"] = {{"scenarios", results.size()}, {"failed", failed}, {"infeasible", infeasible}};
    emit(*o.global, j.dump(2) + "\n");
  } else {
    report::Table t;
    t.header = {"scenario", "command", "device", "count", "fits", "memory/device", "time", "throughput", "note"};
    t.right_align = {false, false, false, true, false, true, true, true, false};
    for (const auto& r : results) t.rows.push_back(r.row);
    emit(*o.global, report::render(t, format));
  }
  for (const auto& r : results)
    if (!r.ok) std::fprintf(stderr, "hwplan: error: %s\n", r.error.c_str());
  if (failed > 0) std::fprintf(stderr, "hwplan: %zu of %zu scenarios failed\n", failed, results.size());
  if (infeasible > 0) std::fprintf(stderr, "hwplan: %zu of %zu scenarios have nothing feasible\n", infeasible, results.size());
  return failed > 0 ? kExitBadInput : kExitOk;
}

}  // namespace

Command batch_command() {
  auto o = std::make_shared<BatchOptions>();
  Command c;
  c.name = "batch";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("batch", "Evaluate many scenarios from a YAML file (see data/examples/batch.yaml).")->footer(R"(Examples:
  hwplan batch data/examples/batch.yaml
  hwplan batch data/examples/batch.yaml --format csv -o results.csv)");
    o->app->add_option("file", o->file, "Batch YAML file")->required();
    o->app->add_option("--threads", o->threads, "Worker threads (default: all cores); output does not depend on it");
    add_format_option(*o->app, g);
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_batch(*o); };
  return c;
}

}  // namespace hwplan::cli
