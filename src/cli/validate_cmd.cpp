// hwplan validate: predicted vs measured, per case, with the error distribution.
//   --measurements FILE   recorded measurements (data/measurements/*.yaml)
//   (no flag)             microbenchmarks on the local device, predicted from the catalog and the profile
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <utility>
#include <nlohmann/json.hpp>

#include "calibrate/calibrate.hpp"
#include "calibrate/local_validation.hpp"
#include "cli/commands.hpp"
#include "core/precision.hpp"
#include "core/strings.hpp"
#include "io/profile_io.hpp"
#include "report/json.hpp"
#include "report/table.hpp"
#include "validate/validation.hpp"

namespace hwplan::cli {
namespace {

using nlohmann::json;
using validate::AssumptionSensitivity;
using validate::FactorGrid;
using validate::RefitCrossValidation;
using validate::ValidationRow;
using validate::ValidationSummary;

struct ValidateOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  std::vector<std::string> measurements;
  std::string backend = "auto";
  std::string model = "gpt2-large";
  long long batch = 1;
  long long seq = 512;
  std::optional<std::string> profile;
  bool quick = false;
  std::optional<int> device_index;
  bool sensitivity = false;
};

// Bias (signed mean error) and spread per regime, device and source, and the leave-one-out checks.
std::string render_groups(const std::vector<ValidationRow>& rows, const std::vector<RefitCrossValidation>& refits,
                          report::Format format) {
  std::string out;
  for (auto [key, title] : {std::pair{&ValidationRow::regime, "regime"}, std::pair{&ValidationRow::device, "device"},
                            std::pair{&ValidationRow::source, "source"}}) {
    report::Table t;
    t.header = {title, "rows", "bias (mean error)", "median |error|", "p80 |error|"};
    t.right_align = {false, true, true, true, true};
    for (const auto& g : validate::group_errors(rows, key))
      t.rows.push_back({g.key, std::to_string(g.count), fmt::format("{:+.1f}%", 100 * g.bias),
                        fmt::format("{:.1f}%", 100 * g.median_abs), fmt::format("{:.1f}%", 100 * g.p80_abs)});
    out += "\n" + report::render(t, format);
  }
  out += "\n";
  std::size_t i = 0;
  for (const auto& cv : {validate::cross_validate(rows, &ValidationRow::device, "device"),
                         validate::cross_validate(rows, &ValidationRow::source, "source")}) {
    const RefitCrossValidation& r = refits.at(i++);
    if (cv.groups < 2) {
      out += fmt::format("leave-one-{}-out: n/a (the rows come from {} {}; nothing is left to fit without it)\n", cv.by,
                         cv.groups, cv.by);
      continue;
    }
    out += fmt::format(
        "leave-one-{}-out ({} groups): held-out median |error| {:.1f}%, p90 {:.1f}% with the eager 16-bit traffic factor "
        "refitted without each group (the folds chose {:g}-{:g}; all rows {:g}; nothing else is fitted); the p80 band "
        "fitted without the group covers {} of {} held-out rows ({:.0f}%)\n",
        cv.by, cv.groups, 100 * r.median_abs, 100 * r.p90_abs, r.factor_min, r.factor_max, r.factor_all, cv.covered,
        cv.rows, cv.rows ? 100.0 * cv.covered / cv.rows : 0.0);
  }
  return out;
}

// The measurement files, each once: a file given twice (or by two paths) would count its rows twice.
std::vector<std::string> distinct_files(const std::vector<std::string>& given) {
  std::vector<std::string> files;
  std::vector<std::filesystem::path> seen;
  for (const auto& f : given) {
    std::error_code ec;
    std::filesystem::path canonical = std::filesystem::weakly_canonical(f, ec);
    if (ec) canonical = f;
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) {
      std::fprintf(stderr, "hwplan: note: %s is given more than once; its cases are counted once\n", f.c_str());
      continue;
    }
    seen.push_back(canonical);
    files.push_back(f);
  }
  return files;
}

int run_measurements(const ValidateOptions& o) {
  io::Registry registry = make_registry(*o.global);
  const std::vector<std::string> files = distinct_files(o.measurements);
  std::vector<ValidationRow> rows;
  for (const auto& file : files) {
    auto set_rows = validate::validate_any_file(registry, file);
    rows.insert(rows.end(), set_rows.begin(), set_rows.end());
  }
  ValidationSummary summary = validate::summarize(rows);
  const FactorGrid grid = validate::eager_factor_grid(registry, files);
  const std::vector<RefitCrossValidation> refits = {validate::refit_cross_validate(grid, &ValidationRow::device, "device"),
                                                    validate::refit_cross_validate(grid, &ValidationRow::source, "source")};
  report::Format format = format_of(*o.global);
  std::vector<AssumptionSensitivity> sensitivity;
  if (o.sensitivity) sensitivity = validate::assumption_sensitivity(registry, files);
  if (format == report::Format::kJson) {
    json j = {{"schema_version", report::kSchemaVersion}, {"cases", json::array()}};
    if (o.sensitivity) {
      j["assumption_sensitivity"] = json::array();
      for (const auto& a : sensitivity)
        j["assumption_sensitivity"].push_back({{"assumption", a.assumption}, {"regime", a.regime}, {"raised_to", a.value},
                                               {"bias_change", a.bias_change}, {"median_abs_error_change", a.median_change}});
    }
    for (const auto& r : rows)
      j["cases"].push_back({{"name", r.name},
                            {"quantity", r.quantity},
                            {"measured", r.measured},
                            {"predicted", r.predicted},
                            {"error", r.error},
                            {"unit", r.unit},
                            {"confidence", r.confidence},
                            {"set", r.set},
                            {"predicted_fits", r.predicted_fits}});
    auto groups = [&](std::string ValidationRow::*key) {
      json a = json::array();
      for (const auto& g : validate::group_errors(rows, key))
        a.push_back({{"key", g.key}, {"count", g.count}, {"bias", g.bias}, {"median_abs_error", g.median_abs},
                     {"p80_abs_error", g.p80_abs}});
      return a;
    };
    j["by_regime"] = groups(&ValidationRow::regime);
    j["by_device"] = groups(&ValidationRow::device);
    j["by_source"] = groups(&ValidationRow::source);
    std::size_t i = 0;
    for (const auto& cv : {validate::cross_validate(rows, &ValidationRow::device, "device"),
                           validate::cross_validate(rows, &ValidationRow::source, "source")}) {
      const RefitCrossValidation& r = refits.at(i++);
      if (cv.groups < 2) {  // one group: nothing is left to fit without it
        j["cross_validation"].push_back({{"leave_one_out_by", cv.by}, {"groups", cv.groups}, {"rows", cv.rows},
                                         {"held_out_median_abs_error", nullptr}, {"held_out_p90_abs_error", nullptr},
                                         {"in_sample_median_abs_error", cv.median_abs},
                                         {"refitted_eager_traffic_factor", nullptr}, {"band_coverage", nullptr}});
        continue;
      }
      j["cross_validation"].push_back({{"leave_one_out_by", cv.by}, {"groups", cv.groups}, {"rows", cv.rows},
                                       {"held_out_median_abs_error", r.median_abs}, {"held_out_p90_abs_error", r.p90_abs},
                                       {"in_sample_median_abs_error", cv.median_abs},
                                       {"refitted_eager_traffic_factor", {{"min", r.factor_min}, {"max", r.factor_max},
                                                                          {"all_rows", r.factor_all}}},
                                       {"band_coverage", cv.rows ? static_cast<double>(cv.covered) / cv.rows : 0.0}});
    }
    j["summary"] = {{"cases", summary.count},
                    {"median_abs_error", summary.median_abs},
                    {"mean_abs_error", summary.mean_abs},
                    {"worst_abs_error", summary.worst_abs},
                    {"worst_case", summary.worst_name},
                    {"within_10_percent", summary.within_10},
                    {"within_35_percent", summary.within_35}};
    emit(*o.global, j.dump(2) + "\n");
    return 0;
  }
  report::Table t;
  if (format == report::Format::kCsv) {
    // Plain numbers, one row per comparison; the summaries are in the table and JSON forms.
    t.header = {"case", "set", "quantity", "unit", "measured", "predicted", "error", "device", "source", "regime",
                "confidence", "predicted_fits"};
    for (const auto& r : rows)
      t.rows.push_back({r.name, r.set, r.quantity, r.unit, fmt::format("{:.10g}", r.measured), fmt::format("{:.10g}", r.predicted),
                        fmt::format("{:.6g}", r.error), r.device, r.source, r.regime, r.confidence,
                        r.predicted_fits ? "true" : "false"});
    emit(*o.global, report::render(t, format));
    return 0;
  }
  t.header = {"case", "quantity", "measured", "predicted", "error"};
  t.right_align = {false, false, true, true, true};
  int no_fit = 0;
  for (const auto& r : rows) {
    no_fit += r.predicted_fits ? 0 : 1;
    t.rows.push_back({r.predicted_fits ? r.name : r.name + " *", r.quantity, fmt::format("{:.4g} {}", r.measured, r.unit),
                      fmt::format("{:.4g} {}", r.predicted, r.unit), fmt::format("{:+.1f}%", 100 * r.error)});
  }
  std::string out = report::render(t, format);
  if (no_fit > 0)
    out += fmt::format("\nMarked *: {} comparison{} of run{} hwplan predicts do not fit the device's memory (the source ran "
                       "them), compared as if {} did\n",
                       no_fit, no_fit == 1 ? "" : "s", no_fit == 1 ? "" : "s", no_fit == 1 ? "it" : "they");
  out += fmt::format(
      "\n{} comparisons: median |error| {:.1f}%, mean {:.1f}%, worst {:.1f}% ({}); {} within 10%, {} within 35%\n",
      summary.count, 100 * summary.median_abs, 100 * summary.mean_abs, 100 * summary.worst_abs, summary.worst_name,
      summary.within_10, summary.within_35);
  out += render_groups(rows, refits, format);
  if (o.sensitivity) {
    report::Table st;
    st.header = {"assumption (+10%)", "regime", "bias change", "median |error| change"};
    st.right_align = {false, false, true, true};
    for (const auto& a : sensitivity)
      st.rows.push_back({a.assumption, a.regime, fmt::format("{:+.1f} points", 100 * a.bias_change),
                         fmt::format("{:+.1f} points", 100 * a.median_change)});
    out += "\nWhich assumption the residuals point at (each raised by 10% alone; a regime's bias moves toward 0 when\n"
           "the assumption should move that way):\n" + report::render(st, format);
  }
  emit(*o.global, out);
  return 0;
}

// Microbenchmark mode: the kernels of one layer run here (src/calibrate), against the catalog's and the profile's
// predictions.
int run_local_validation(const ValidateOptions& o) {
  const GlobalOptions& g = *o.global;
  io::Registry registry = make_registry(g);
  Model model = registry.model(o.model);
  if (!model.is_transformer()) throw InputError({}, "--model", model.id + " is not a transformer: pick one with layer shapes");
  if (o.batch < 1) throw InputError({}, "--batch", "must be at least 1");
  if (o.seq < 1) throw InputError({}, "--seq", "must be at least 1");
  // The profile to predict with: given, or measured now (quick).
  std::vector<calibrate::CalibrationRun> runs;
  Profile profile;
  if (o.profile) {
    profile = io::load_profile(*o.profile);
  } else {
    calibrate::CalibrateOptions co;
    co.backend = o.backend;
    co.device_index = o.device_index;
    // One GPU is validated: the first unless --device-index names another (calibrate alone measures them all).
    if (!co.device_index && o.backend != "cpu" && calibrate::cuda_device_count() > 0) co.device_index = 0;
    co.quick = true;
    co.progress = [](const std::string& line) { std::fprintf(stderr, "hwplan: %s\n", line.c_str()); };
    runs = calibrate::run_calibration(registry, co);
    if (runs.empty()) throw InputError({}, "--backend", "no device to validate");
    profile = runs.front().profile;
  }
  const Device* catalog_device = profile.catalog_id.empty() ? registry.find_device(profile.device_name)
                                                            : registry.find_device(profile.catalog_id);
  std::vector<ValidationRow> rows;
  struct Check {
    std::string kernel, shape;
    double measured;
    std::optional<double> catalog;
    double profile;
  };
  std::vector<Check> checks;
  auto add = [&](const std::string& kernel, const std::string& shape, double measured, std::optional<double> catalog, double prof) {
    checks.push_back({kernel, shape, measured, catalog, prof});
    ValidationRow r;
    r.name = kernel;
    r.quantity = "seconds (profile)";
    r.measured = measured;
    r.predicted = prof;
    r.error = prof / measured - 1;
    rows.push_back(r);
  };
  if (profile.backend == "cpu") {
    auto v = calibrate::validate_cpu_layer(model, static_cast<long>(o.batch), static_cast<long>(o.seq), profile, catalog_device, o.quick);
    for (const auto& c : v.checks) add(c.kernel, c.shape, c.measured_seconds, c.catalog_seconds, c.profile_seconds);
  } else {
    // CUDA: the measured GEMM and bandwidth points of the profile against the catalog-only prediction, and the
    // profile's own curves (which the estimator interpolates) against each point.
    if (!catalog_device) throw InputError({}, "--profile", "'" + profile.device_name + "' is not in the catalog: nothing to compare with");
    Device d = *catalog_device;
    for (const auto& x : profile.measurements) {
      if (x.kernel.rfind("gemm_", 0) == 0) {
        auto prec = parse_precision(x.kernel.substr(5));
        if (!prec) continue;
        double measured = x.size / x.median;
        long mm = 0, nn = 0, kk = 0;
        std::sscanf(x.shape.c_str(), "M=%ld N=%ld K=%ld", &mm, &nn, &kk);
        if (mm <= 0 || nn <= 0 || kk <= 0) continue;
        add(x.kernel, x.shape, measured, calibrate::predict_gemm_seconds(d, nullptr, *prec, mm, nn, kk),
            calibrate::predict_gemm_seconds(d, &profile, *prec, mm, nn, kk));
      } else if (x.kernel == "triad" || x.kernel == "copy") {
        double measured = x.size / x.median;
        add(x.kernel, x.shape, measured, calibrate::predict_memory_seconds(d, nullptr, x.size),
            calibrate::predict_memory_seconds(d, &profile, x.size));
      }
    }
  }
  ValidationSummary s = validate::summarize(rows);
  const report::Format format = format_of(g);
  if (format == report::Format::kJson) {
    json j = {{"schema_version", report::kSchemaVersion},
              {"device", profile.device_name},
              {"catalog_id", catalog_device ? json(catalog_device->id) : json(nullptr)},
              {"backend", profile.backend},
              {"model", model.id},
              {"batch", o.batch},
              {"seq", o.seq},
              {"checks", json::array()}};
    for (const auto& c : checks)
      j["checks"].push_back({{"kernel", c.kernel},
                             {"shape", c.shape},
                             {"measured_seconds", c.measured},
                             {"predicted_catalog_seconds", c.catalog ? json(*c.catalog) : json(nullptr)},
                             {"catalog_error", c.catalog ? json(*c.catalog / c.measured - 1) : json(nullptr)},
                             {"predicted_profile_seconds", c.profile},
                             {"profile_error", c.profile / c.measured - 1}});
    j["summary"] = {{"checks", s.count}, {"profile_median_abs_error", s.median_abs}, {"profile_worst_abs_error", s.worst_abs},
                    {"worst_case", s.worst_name}};
    emit(g, j.dump(2) + "\n");
    return 0;
  }
  report::Table t;
  if (format == report::Format::kCsv) {
    t.header = {"kernel", "shape", "measured_seconds", "predicted_catalog_seconds", "catalog_error", "predicted_profile_seconds",
                "profile_error"};
    for (const auto& c : checks)
      t.rows.push_back({c.kernel, c.shape, fmt::format("{:.6g}", c.measured), c.catalog ? fmt::format("{:.6g}", *c.catalog) : "",
                        c.catalog ? fmt::format("{:.6g}", *c.catalog / c.measured - 1) : "", fmt::format("{:.6g}", c.profile),
                        fmt::format("{:.6g}", c.profile / c.measured - 1)});
    emit(g, report::render(t, format));
    return 0;
  }
  t.header = {"kernel", "shape", "measured", "predicted (catalog)", "error", "predicted (profile)", "error"};
  t.right_align = {false, false, true, true, true, true, true};
  for (const auto& c : checks)
    t.rows.push_back({c.kernel, c.shape, human_seconds(c.measured), c.catalog ? human_seconds(*c.catalog) : "-",
                      c.catalog ? fmt::format("{:+.0f}%", 100 * (*c.catalog / c.measured - 1)) : "-", human_seconds(c.profile),
                      fmt::format("{:+.0f}%", 100 * (c.profile / c.measured - 1))});
  std::string out = fmt::format("{} ({}), one layer of {} at batch {} x seq {}\n\n", profile.device_name,
                                catalog_device ? "catalog " + catalog_device->id : std::string("not in the catalog"), model.id,
                                o.batch, o.seq);
  out += report::render(t, format);
  out += fmt::format("\nprofile predictions: median |error| {:.1f}%, worst {:.1f}% ({})\n", 100 * s.median_abs, 100 * s.worst_abs,
                     s.worst_name);
  if (!catalog_device) out += "catalog predictions: n/a (this device is not in the catalog)\n";
  emit(g, out);
  return 0;
}

}  // namespace

Command validate_command() {
  auto o = std::make_shared<ValidateOptions>();
  Command c;
  c.name = "validate";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("validate", "Check the estimators against measurements.")->footer(R"(Examples:
  hwplan validate --measurements data/measurements/step-latency-neusight.yaml
  hwplan validate --measurements data/measurements/published-throughput.yaml --format json
  hwplan validate --backend cpu --quick       # microbenchmarks on this machine vs predictions)");
    o->app->add_option("--measurements", o->measurements, "Measurement files (YAML); repeatable")->check(CLI::ExistingFile);
    o->app->add_option("--backend", o->backend, "auto | cpu | cuda (microbenchmark mode)")->capture_default_str();
    o->app->add_option("--device-index", o->device_index, "CUDA device index (default: the first)");
    o->app->add_option("--model", o->model, "Model whose layer shapes are benchmarked")->capture_default_str();
    o->app->add_option("--batch", o->batch, "Batch for the layer shapes")->capture_default_str();
    o->app->add_option("--seq", o->seq, "Sequence length for the layer shapes")->capture_default_str();
    o->app->add_option("--profile", o->profile, "Calibration profile to predict with (else calibrate quickly first)");
    o->app->add_flag("--sensitivity", o->sensitivity,
                     "With --measurements: re-predict with each assumption raised by 10% and show how each regime's bias moves");
    o->app->add_flag("--quick", o->quick, "Small sizes, few repetitions");
    add_format_option(*o->app, g);
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] {
    if (!o->measurements.empty()) {
      if (o->sensitivity && o->global->format == "csv")
        throw InputError({}, "--sensitivity", "the CSV holds the comparisons alone: use --format table, markdown or json");
      return run_measurements(*o);
    }
    if (o->sensitivity)
      throw InputError({}, "--sensitivity", "re-predicts measurement sets: give them with --measurements FILE");
    return run_local_validation(*o);
  };
  return c;
}

}  // namespace hwplan::cli
