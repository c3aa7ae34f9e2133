// Recorded measurements (data/measurements/*.yaml) that the estimators are checked against.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/model.hpp"
#include "core/workload_spec.hpp"

namespace hwplan::io {

struct MeasurementCase {
  std::string name;
  SourceLocation where;
  std::string kind;             // step_latency | train_throughput | decode | training (memory and speed of a recipe)
  WorkloadSpec spec;            // the workload to estimate
  std::optional<Model> inline_model;  // architecture given in the case itself
  std::map<std::string, double> measured;
  std::string confidence;
  std::string source;
  std::map<std::string, SourceLocation> key_where;  // where each of the case's keys is (errors name them)
};

struct MeasurementSet {
  std::string file;
  std::string source;
  std::string description;
  std::vector<MeasurementCase> cases;
};

MeasurementSet load_measurements(const std::string& path);
MeasurementSet parse_measurements(const std::string& text, const std::string& file);

}  // namespace hwplan::io
