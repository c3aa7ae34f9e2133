// Predicted-vs-measured comparisons shared by `hwplan validate` and the test suite.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/common.hpp"

namespace hwplan::cli {

struct ValidationRow {
  std::string name;
  std::string set;
  std::string quantity;  // forward_ms, backward_ms, tokens_per_second_per_device, ...
  std::string unit;
  double measured = 0;
  double predicted = 0;
  double error = 0;  // predicted / measured - 1
  std::string confidence;
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

std::vector<ValidationRow> validate_measurement_file(const io::Registry& registry, const std::string& path);
ValidationSummary summarize(const std::vector<ValidationRow>& rows);

// Microbenchmark mode of `hwplan validate` (src/calibrate runs the kernels).
int run_local_validation(const GlobalOptions& g, const std::string& backend, int device_index, const std::string& model,
                         long long batch, long long seq, const std::optional<std::string>& profile, bool quick);

}  // namespace hwplan::cli
