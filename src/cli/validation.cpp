#include "cli/validation.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/units.hpp"
#include "io/measurements_io.hpp"

namespace hwplan::cli {

namespace {

// Megatron-LM's FLOPs per iteration with full activation recomputation (Narayanan et al. 2021, eq. 3):
// 96 B s l h^2 (1 + s / 6h + V / 16 l h). Table 1's TFLOP/s are this count over the iteration time.
double megatron_flops(const Model& m, double global_batch, double seq) {
  double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden_size), v = static_cast<double>(m.vocab_size);
  return 96 * global_batch * seq * l * h * h * (1 + seq / (6 * h) + v / (16 * l * h));
}

}  // namespace

std::vector<ValidationRow> validate_measurement_file(const io::Registry& registry, const std::string& path) {
  io::MeasurementSet set = io::load_measurements(path);
  std::string set_name = std::filesystem::path(path).stem().string();
  std::vector<ValidationRow> rows;
  for (const auto& c : set.cases) {
    WorkloadSpec spec = c.spec;
    const Model* inline_model = c.inline_model ? &*c.inline_model : nullptr;
    // Throughput cases: fix what the source reports, search the rest (micro-batch, ZeRO, recompute).
    if (c.kind == "train_throughput") {
      if (!spec.global_batch) {
        // Not reported (NeMo table): assume enough micro-batches per replica to amortise the pipeline bubble.
        long long tp = spec.tp.value_or(1), pp = spec.pp.value_or(1);
        spec.global_batch = std::max<long long>(1, spec.count / (tp * pp)) * 8 * pp;
      }
      if (spec.tp && spec.pp) spec.dp = spec.count / (*spec.tp * *spec.pp);
    }
    Query q;
    try {
      q = resolve_query(registry, spec, nullptr, std::nullopt, inline_model);
    } catch (const InputError& e) {
      throw InputError(c.where, e.key(), "case '" + c.name + "': " + e.detail());
    }
    Outcome out = run_query(q);
    const Estimate& e = out.estimate;
    auto add = [&](const std::string& quantity, const std::string& unit, double measured, double predicted) {
      ValidationRow r;
      r.name = c.name;
      r.set = set_name;
      r.quantity = quantity;
      r.unit = unit;
      r.measured = measured;
      r.predicted = predicted;
      r.error = predicted / measured - 1;
      r.confidence = c.confidence;
      rows.push_back(r);
    };
    for (const auto& [key, value] : c.measured) {
      if (key == "forward_ms") {
        double predicted = e.training ? e.train.forward_seconds : e.infer.prefill_seconds;
        add(key, "ms", value, predicted * 1e3);
      } else if (key == "backward_ms") {
        add(key, "ms", value, e.train.backward_seconds * 1e3);
      } else if (key == "tokens_per_second_per_device") {
        add(key, "tok/s", value, e.train.tokens_per_second / q.input.system.count);
      } else if (key == "tflops_per_device") {
        if (c.measured.count("tokens_per_second_per_device")) continue;  // same run, counted once
        double flops = megatron_flops(q.model, static_cast<double>(e.plan.global_batch()), static_cast<double>(q.input.workload.seq));
        add(key, "TFLOP/s", value, flops / e.train.step_seconds / q.input.system.count / kTera);
      } else if (key == "decode_tokens_per_second") {
        add(key, "tok/s", value, e.infer.decode_tokens_per_second);
      } else {
        throw InputError(c.where, "measured." + key, "unknown measured quantity");
      }
    }
  }
  return rows;
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

}  // namespace hwplan::cli

namespace hwplan::cli {
int run_local_validation(const GlobalOptions&, const std::string&, int, const std::string&, long long, long long,
                         const std::optional<std::string>&, bool) {
  throw InputError({}, "measurements", "microbenchmark validation is not available yet; pass --measurements FILE");
}
}  // namespace hwplan::cli
