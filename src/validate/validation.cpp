#include "validate/validation.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "core/assumptions.hpp"
#include "core/units.hpp"
#include "estimators/estimate_types.hpp"
#include "io/measurements_io.hpp"
#include "io/serving_io.hpp"
#include "recommend/query.hpp"
#include "recommend/serve_setup.hpp"
#include "recommend/front_end.hpp"
#include "serve/plan.hpp"

namespace hwplan::validate {

namespace {

// Megatron-LM's FLOPs per iteration with full activation recomputation (Narayanan et al. 2021, eq. 3):
// 96 B s l h^2 (1 + s / 6h + V / 16 l h). Table 1's TFLOP/s are this count over the iteration time.
double megatron_flops(const Model& m, double global_batch, double seq) {
  double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden_size), v = static_cast<double>(m.vocab_size);
  return 96 * global_batch * seq * l * h * h * (1 + seq / (6 * h) + v / (16 * l * h));
}

std::string regime_of_quantity(const std::string& q) {
  if (q == "forward_ms" || q == "backward_ms") return "step";
  if (q == "decode_tokens_per_second") return "decode";
  if (q == "peak_memory_gib") return "memory";
  return "throughput";
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double x = p * static_cast<double>(v.size() - 1);
  std::size_t i = static_cast<std::size_t>(x);
  if (i + 1 >= v.size()) return v.back();
  return v[i] + (x - static_cast<double>(i)) * (v[i + 1] - v[i]);
}

std::vector<GroupError> group_errors(const std::vector<ValidationRow>& rows, std::string ValidationRow::*key) {
  std::map<std::string, std::vector<double>> by;
  for (const auto& r : rows) by[r.*key].push_back(r.error);
  std::vector<GroupError> out;
  for (const auto& [k, errors] : by) {
    GroupError g;
    g.key = k;
    g.count = static_cast<int>(errors.size());
    std::vector<double> abs;
    for (double e : errors) {
      g.bias += e;
      abs.push_back(std::fabs(e));
    }
    g.bias /= g.count;
    g.median_abs = median_of(abs);
    g.p80_abs = percentile(abs, 0.8);
    out.push_back(g);
  }
  return out;
}

CrossValidation cross_validate(const std::vector<ValidationRow>& rows, std::string ValidationRow::*key, const char* by) {
  CrossValidation cv;
  cv.by = by;
  std::map<std::string, int> groups;
  for (const auto& r : rows) ++groups[r.*key];
  cv.groups = static_cast<int>(groups.size());
  std::vector<double> held_out;
  for (const auto& [g, n] : groups) {
    (void)n;
    std::map<std::string, std::vector<double>> train;  // regime -> |error| without group g
    for (const auto& r : rows)
      if (r.*key != g) train[r.regime].push_back(std::fabs(r.error));
    std::map<std::string, double> bands;  // regime -> p80 band fitted without group g
    for (const auto& [regime, errors] : train) bands[regime] = percentile(errors, 0.8);
    for (const auto& r : rows) {
      if (r.*key != g) continue;
      ++cv.rows;
      held_out.push_back(std::fabs(r.error));
      auto it = bands.find(r.regime);
      if (it != bands.end() && std::fabs(r.error) <= it->second) ++cv.covered;
    }
  }
  cv.median_abs = median_of(held_out);
  cv.p90_abs = percentile(held_out, 0.9);
  return cv;
}

std::vector<ValidationRow> validate_measurement_file(const io::Registry& registry, const std::string& path,
                                                     std::optional<double> eager_traffic_factor) {
  io::MeasurementSet set = io::load_measurements(path);
  std::string set_name = std::filesystem::path(path).stem().string();
  std::vector<ValidationRow> rows;
  for (const auto& c : set.cases) {
    WorkloadSpec spec = c.spec;
    const Model* inline_model = c.inline_model ? &*c.inline_model : nullptr;
    // Throughput cases: fix what the source reports, search the rest (micro-batch, ZeRO, recompute).
    if (c.kind == "train_throughput" || (c.kind == "training" && spec.count > 1 && !spec.batch)) {
      if (!spec.global_batch) {
        // Not reported (NeMo table): assume enough micro-batches per replica to amortise the pipeline bubble.
        long long tp = spec.tp.value_or(1), cp = spec.cp.value_or(1), pp = spec.pp.value_or(1);
        spec.global_batch = std::max<long long>(1, spec.count / (tp * cp * pp)) * 8 * pp;
      }
      // dp follows from tp and pp; left free so that what the source does not state is searched.
    }
    Query q;
    try {
      q = resolve_query(registry, spec, inline_model);
    } catch (const InputError& e) {
      throw keyed_to_file(e, c.where, c.key_where, "cases[].", "case '" + c.name + "': ");
    }
    if (q.model.is_transformer() && !spec.seq && (c.kind == "train_throughput" || c.kind == "infer_throughput"))
      throw InputError(c.where, "seq", "case '" + c.name + "': " + q.model.id +
                                           " is a transformer: its throughput depends on the sequence length, give seq");
    if (eager_traffic_factor) {
      q.input.workload.stack.eager_traffic_factor = *eager_traffic_factor;
    }
    Outcome out = run_query(q);
    const Estimate& e = out.estimate;
    auto add = [&](const std::string& quantity, const std::string& unit, double measured, double predicted,
                   const char* regime = nullptr) {
      ValidationRow r;
      r.name = c.name;
      r.set = set_name;
      r.quantity = quantity;
      r.unit = unit;
      r.measured = measured;
      if (!(std::isfinite(predicted) && predicted > 0))
        throw InputError(c.where, "measured." + quantity, "case '" + c.name + "': hwplan predicts no " + quantity +
                                                              " for this case (" + std::to_string(predicted) + ")");
      r.predicted = predicted;
      r.error = predicted / measured - 1;
      r.confidence = c.confidence;
      r.device = q.device->id;
      r.source = c.source.substr(0, c.source.find_first_of(" ,"));
      r.regime = regime ? regime : regime_of_quantity(quantity);
      r.predicted_fits = e.fits;
      rows.push_back(r);
    };
    if (c.measured.empty()) throw InputError(c.where, "measured", "case '" + c.name + "': no measured figure");
    // A figure the case's task does not produce is not compared with a zero (a -100% error, an infinite one).
    auto needs = [&](const std::string& key, bool training) {
      if (e.training != training)
        throw InputError(c.where, "measured." + key, "case '" + c.name + "': " + key + " is a " + (training ? "training" : "decode") +
                                                         " figure; the case is " + (e.training ? "training" : "inference") +
                                                         " (its kind and task)");
    };
    for (const auto& [key, value] : c.measured) {
      if (key == "backward_ms" || key == "tokens_per_second_per_device" || key == "tokens_per_second" ||
          key == "tflops_per_device" || key == "mfu")
        needs(key, true);
      if (key == "decode_tokens_per_second") needs(key, false);
      if (key == "forward_ms") {
        double predicted = e.training ? e.train.forward_seconds : e.infer.prefill_seconds;
        add(key, "ms", value, predicted * 1e3);
      } else if (key == "backward_ms") {
        add(key, "ms", value, e.train.backward_seconds * 1e3);
      } else if (key == "tokens_per_second_per_device") {
        add(key, "tok/s", value, e.train.tokens_per_second / q.input.system.count);
      } else if (key == "tokens_per_second") {
        // The whole job's throughput (all devices together).
        add(key, "tok/s", value, e.train.tokens_per_second);
      } else if (key == "tflops_per_device") {
        if (c.measured.count("tokens_per_second_per_device")) continue;  // same run, counted once
        double flops = megatron_flops(q.model, static_cast<double>(e.plan.global_batch()), static_cast<double>(q.input.workload.seq));
        add(key, "TFLOP/s", value, flops / e.train.step_seconds / q.input.system.count / kTera);
      } else if (key == "mfu") {
        // Model FLOPs (6N + attention, PaLM's convention) per second over the dense peak, as Meta's Llama 3 paper
        // and most recent reports give it.
        add(key, "", value, e.train.mfu);
      } else if (key == "peak_memory_gib") {
        add(key, "GiB", value, e.memory.reported(q.input.workload.stack.memory_metric) / kGiB);
      } else if (key == "decode_tokens_per_second") {
        add(key, "tok/s", value, e.infer.decode_tokens_per_second);
      } else if (key == "samples_per_second_per_device" || key == "samples_per_second") {
        // Images (or sequences) per second: training steps, or forward passes over a batch (a step latency).
        if (key == "samples_per_second" && c.measured.count("samples_per_second_per_device")) continue;  // same run
        const double seq = q.model.is_transformer() ? static_cast<double>(q.input.workload.seq) : 1.0;
        const double devices = key == "samples_per_second" ? 1.0 : static_cast<double>(q.input.system.count);
        double total = 0;
        if (e.training) total = e.train.tokens_per_second / seq;
        else if (!q.model.is_transformer()) total = e.infer.total_decode_tokens_per_second();
        else total = e.forward_samples_per_second();
        // A generic network (a CNN) has its own regime and band; a ViT is timed as the transformer it is.
        add(key, "samples/s", value, total / devices,
            !q.model.is_transformer() ? "image" : e.training ? "throughput" : "step");
      } else {
        throw InputError(c.where, "measured." + key, "unknown measured quantity");
      }
    }
  }
  return rows;
}

std::vector<ValidationRow> validate_serving_file(const io::Registry& registry, const std::string& path) {
  io::ServingSet set = io::load_serving_measurements(path);
  const std::string set_name = std::filesystem::path(path).stem().string();
  std::vector<ValidationRow> rows;
  for (const auto& c : set.cases) {
    ServeSpec o;
    o.workload.task = "infer";
    o.workload.model = c.model;
    o.workload.device = c.device;
    o.workload.engine = c.engine;
    o.workload.count = c.count;
    o.workload.tp = c.tp;
    // A case's prompt_dist gives its lengths (its prompt stays as the source's mean, for the reader).
    if (!c.prompt_dist) o.workload.prompt = c.prompt;
    if (c.generate) o.workload.generate = *c.generate;
    o.generate_dist = c.generate_dist;
    o.prompt_dist = c.prompt_dist;
    o.workload.weights = c.weights;
    o.workload.kv_cache = c.kv_cache;
    o.workload.overlap_scheduling = c.overlap_scheduling;
    auto on_off = [](const std::optional<bool>& b) { return b ? std::optional<std::string>(*b ? "on" : "off") : std::nullopt; };
    o.chunked_prefill = on_off(c.chunked_prefill);
    o.preempted_kv = c.preempted_kv;
    o.kv_profile = c.kv_profile;
    o.separate_prefill = on_off(c.separate_prefill);
    o.kv_admission = c.kv_admission;
    o.max_sequences = c.max_sequences;
    o.max_batched_tokens = c.max_batched_tokens;
    o.block_size = c.block_size;
    o.scheduler_steps = c.scheduler_steps;
    o.kv_memory_fraction = c.kv_memory_fraction;
    o.concurrency = c.concurrency;
    o.rate = c.rate;
    o.requests = c.requests;
    o.warmup = c.warmup;
    serve::ServeAnswer a;
    try {
      ServeSetup setup = prepare_serve(registry, o);
      a = serve::plan_serving(setup.layouts, setup.question, 1);
    } catch (const InputError& e) {
      // A flag's error names the case's key of the same name (--kv-admission: cases[].kv_admission).
      throw keyed_to_file(e, c.where, c.key_where, "cases[].", "case '" + c.name + "': ");
    }
    if (!a.chosen || a.at_load.unservable)
      throw InputError(c.where, "cases[].name", "case '" + c.name + "': no layout serves it (the KV cache or the device is too small)");
    const serve::SimResult& r = a.at_load;
    const std::map<std::string, std::pair<const char*, double>> predicted = {
        {"requests_per_second", {"req/s", r.requests_per_second}},
        {"output_tokens_per_second", {"tok/s", r.output_tokens_per_second}},
        {"total_tokens_per_second", {"tok/s", r.total_tokens_per_second}},
        {"ttft_median_seconds", {"s", r.ttft.p50}},
        {"ttft_mean_seconds", {"s", r.ttft.mean}},
        {"ttft_p99_seconds", {"s", r.ttft.p99}},
        {"tpot_median_seconds", {"s", r.tpot.p50}},
        {"tpot_mean_seconds", {"s", r.tpot.mean}}};
    for (const auto& [metric, measured] : c.measured) {
      auto it = predicted.find(metric);
      if (it == predicted.end()) throw InputError(c.where, "measured." + metric, "unknown measured quantity");
      ValidationRow row;
      row.name = c.name;
      row.set = set_name;
      row.quantity = metric;
      row.unit = it->second.first;
      row.measured = measured;
      row.predicted = it->second.second;
      row.error = row.predicted / measured - 1;
      row.confidence = c.confidence;
      row.device = registry.device(c.device).id;  // grouped by catalog id, as the other sets (an alias is the same device)
      // The site that published it (a web address's host name; a project's owner/name is kept whole).
      row.source = c.source.substr(0, c.source.find_first_of(" ,"));
      if (auto slash = row.source.find('/'); slash != std::string::npos && row.source.find('.') < slash)
        row.source.resize(slash);
      row.regime = metric.rfind("ttft", 0) == 0 ? "serving-ttft" : "serving";
      rows.push_back(row);
    }
  }
  return rows;
}

std::vector<ValidationRow> validate_any_file(const io::Registry& registry, const std::string& path) {
  return io::is_serving_measurements(path) ? validate_serving_file(registry, path) : validate_measurement_file(registry, path);
}

std::vector<AssumptionSensitivity> assumption_sensitivity(const io::Registry& registry, const std::vector<std::string>& files,
                                                          double step) {
  auto rows_of = [&] {
    std::vector<ValidationRow> rows;
    for (const auto& f : files) {
      auto part = validate_any_file(registry, f);
      rows.insert(rows.end(), part.begin(), part.end());
    }
    return rows;
  };
  auto by_regime = [](const std::vector<ValidationRow>& rows) {
    std::map<std::string, GroupError> out;
    for (const auto& g : group_errors(rows, &ValidationRow::regime)) out[g.key] = g;
    return out;
  };
  const Assumptions active = assumptions();
  const auto base = by_regime(rows_of());
  std::vector<AssumptionSensitivity> out;
  for (const AssumptionInfo& info : describe_assumptions(active)) {
    Assumptions raised = active;
    const double value = std::min(info.max, info.value * step);
    if (value == info.value) continue;
    set_assumption(raised, info.name, value);
    set_assumptions(raised);
    std::map<std::string, GroupError> moved;
    try {
      moved = by_regime(rows_of());
    } catch (...) {
      set_assumptions(active);
      throw;
    }
    set_assumptions(active);
    for (const auto& [regime, g] : moved) {
      auto it = base.find(regime);
      if (it == base.end()) continue;
      AssumptionSensitivity a{info.name, regime, value, g.bias - it->second.bias, g.median_abs - it->second.median_abs};
      if (std::fabs(a.bias_change) >= 5e-4 || std::fabs(a.median_change) >= 5e-4) out.push_back(a);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const AssumptionSensitivity& a, const AssumptionSensitivity& b) {
    return std::fabs(a.bias_change) > std::fabs(b.bias_change);
  });
  return out;
}

ValidationSummary summarize(const std::vector<ValidationRow>& rows) {
  ValidationSummary s;
  std::vector<double> errors;
  for (const auto& r : rows) {
    double a = std::fabs(r.error);
    errors.push_back(a);
    s.mean_abs += a;
    if (a >= s.worst_abs) {
      s.worst_abs = a;
      s.worst_name = r.name + " " + r.quantity;
    }
    if (a <= 0.10) ++s.within_10;
    if (a <= 0.35) ++s.within_35;
  }
  s.count = static_cast<int>(rows.size());
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    std::size_t n = errors.size();
    s.median_abs = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
    s.mean_abs /= static_cast<double>(n);
  }
  return s;
}

FactorGrid eager_factor_grid(const io::Registry& registry, const std::vector<std::string>& files) {
  // The grid spans "the pass counts are right" (1) to three times them; rows come back in the same order for
  // every factor, so row i is the same comparison in each set.
  FactorGrid grid;
  grid.factors = {1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0};
  // Serving sets run inference engines the factor does not touch: simulated once, the same rows at every factor.
  std::map<std::string, std::vector<ValidationRow>> serving;
  for (const auto& file : files)
    if (io::is_serving_measurements(file)) serving[file] = validate_serving_file(registry, file);
  for (double f : grid.factors) {
    std::vector<ValidationRow> rows;
    for (const auto& file : files) {
      auto it = serving.find(file);
      auto part = it != serving.end() ? it->second : validate_measurement_file(registry, file, f);
      rows.insert(rows.end(), part.begin(), part.end());
    }
    grid.rows.push_back(std::move(rows));
  }
  return grid;
}

RefitCrossValidation refit_cross_validate(const FactorGrid& grid, std::string ValidationRow::*key, const char* by) {
  const auto& by_factor = grid.rows;
  const auto& factors = grid.factors;
  RefitCrossValidation cv;
  cv.by = by;
  if (by_factor.empty() || by_factor.front().empty()) return cv;
  // The factor whose rows outside `held_out` (none: all rows) have the smallest median |error|.
  auto fit = [&](const std::string* held_out) {
    std::size_t best = 0;
    double best_median = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < by_factor.size(); ++i) {
      std::vector<double> abs;
      for (const auto& r : by_factor[i])
        if (!held_out || r.*key != *held_out) abs.push_back(std::fabs(r.error));
      double m = median_of(abs);
      if (m < best_median - 1e-12) {
        best_median = m;
        best = i;
      }
    }
    return best;
  };
  cv.factor_all = factors[fit(nullptr)];
  std::map<std::string, int> groups;
  for (const auto& r : by_factor.front()) ++groups[r.*key];
  cv.groups = static_cast<int>(groups.size());
  cv.factor_min = std::numeric_limits<double>::infinity();
  cv.factor_max = 0;
  std::vector<double> held;
  for (const auto& [g, n] : groups) {
    (void)n;
    std::size_t f = fit(&g);
    cv.factor_min = std::min(cv.factor_min, factors[f]);
    cv.factor_max = std::max(cv.factor_max, factors[f]);
    for (const auto& r : by_factor[f])
      if (r.*key == g) held.push_back(std::fabs(r.error));
  }
  cv.rows = static_cast<int>(held.size());
  cv.median_abs = median_of(held);
  cv.p90_abs = percentile(held, 0.9);
  return cv;
}

}  // namespace hwplan::validate
