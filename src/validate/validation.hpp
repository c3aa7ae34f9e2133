// Predicted-vs-measured comparisons of the recorded measurement sets (data/measurements), shared by `hwplan validate`
// and the test suite: rows, their error distribution, cross-validation and sensitivity to the assumptions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/registry.hpp"

namespace hwplan::validate {

struct ValidationRow {
  std::string name;
  std::string set;
  std::string quantity;  // forward_ms, backward_ms, tokens_per_second_per_device, ...
  std::string unit;
  double measured = 0;
  double predicted = 0;
  double error = 0;  // predicted / measured - 1
  std::string confidence;
  std::string device;  // catalog id the case ran on
  std::string source;  // the publication or project the figure comes from (first word of the case's source)
  std::string regime;  // step | throughput | decode | memory (see estimators/uncertainty.hpp)
  // The estimate says the run does not fit the device's memory (the source ran it): its speed is compared as if it
  // did, and the row says so.
  bool predicted_fits = true;
};

struct ValidationSummary {
  int count = 0;
  double median_abs = 0;
  double mean_abs = 0;
  double worst_abs = 0;
  std::string worst_name;
  int within_10 = 0;
  int within_35 = 0;
};

// `eager_traffic_factor`, when given, replaces the stack's Stack::eager_traffic_factor in every case (the one
// physics constant fitted to the sets; cross-validation refits it).
std::vector<ValidationRow> validate_measurement_file(const io::Registry& registry, const std::string& path,
                                                     std::optional<double> eager_traffic_factor = std::nullopt);
// A serving set (`kind: serving`, data/measurements/serving.yaml): each case simulated as `hwplan serve` would
// (one replica, the case's engine, traffic and lengths), one row per measured figure. Regimes: `serving` for
// request and token throughput and TPOT, `serving-ttft` for time to first token.
std::vector<ValidationRow> validate_serving_file(const io::Registry& registry, const std::string& path);
// Either kind of measurement file, by what it declares.
std::vector<ValidationRow> validate_any_file(const io::Registry& registry, const std::string& path);
ValidationSummary summarize(const std::vector<ValidationRow>& rows);

// Signed mean error (bias), median |error| and count of the rows sharing a key (device, source or regime).
struct GroupError {
  std::string key;
  int count = 0;
  double bias = 0;
  double median_abs = 0;
  double p80_abs = 0;
};
std::vector<GroupError> group_errors(const std::vector<ValidationRow>& rows, std::string ValidationRow::*key);

// Leave-one-group-out check of the uncertainty bands: for each group (a device, or a source), the band of its
// regime is recomputed from the other groups' rows (the 80th percentile of |error|), and the group's rows are
// checked against it. Nothing else in the estimators is fitted to the measurement sets, so a held-out group's
// error is its in-sample error; the band is the one fitted quantity.
struct CrossValidation {
  std::string by;          // "device" or "source"
  int groups = 0;
  int rows = 0;
  int covered = 0;         // held-out rows within the band fitted without their group
  double median_abs = 0;   // held-out |error| (equal to in-sample: nothing else is fitted)
  double p90_abs = 0;
};
CrossValidation cross_validate(const std::vector<ValidationRow>& rows, std::string ValidationRow::*key, const char* by);

// Leave-one-group-out with the fitted constant refitted: for each group, the eager traffic factor (from a grid)
// that gives the other groups' rows the smallest median |error| predicts the held-out group's rows.
struct RefitCrossValidation {
  std::string by;
  int groups = 0;
  int rows = 0;
  double median_abs = 0;  // held-out |error| with the factor fitted without the group
  double p90_abs = 0;
  double factor_min = 0, factor_max = 0;  // the factors the folds chose
  double factor_all = 0;                  // the factor fitted on every row (for comparison with the default)
};
// The comparisons of `files` once per factor of the refit grid (rows in the same order for every factor).
struct FactorGrid {
  std::vector<double> factors;
  std::vector<std::vector<ValidationRow>> rows;  // rows[i]: every comparison with factors[i]
};
FactorGrid eager_factor_grid(const io::Registry& registry, const std::vector<std::string>& files);
RefitCrossValidation refit_cross_validate(const FactorGrid& grid, std::string ValidationRow::*key, const char* by);
double percentile(std::vector<double> values, double p);

// Which assumption (src/core/assumptions.hpp) the residuals point at: each one raised by `step` (x1.1: 10%) alone,
// the measurement files re-predicted, and the change of each regime's bias (mean signed error) and median |error|.
// Only the pairs where something moves are returned, the largest bias change first. The active assumptions are
// restored afterwards.
struct AssumptionSensitivity {
  std::string assumption;
  std::string regime;
  double value = 0;        // the raised value
  double bias_change = 0;  // in error units (0.05 = 5 points)
  double median_change = 0;
};
std::vector<AssumptionSensitivity> assumption_sensitivity(const io::Registry& registry, const std::vector<std::string>& files,
                                                          double step = 1.1);

}  // namespace hwplan::validate
