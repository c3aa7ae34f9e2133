// `hwplan recommend`: every catalog device at every sensible count, with its best layout, filtered by the
// constraints and ranked by the objective, each with the reasons in words; and the devices rejected, with why.
#pragma once

#include <string>
#include <vector>

#include "core/workload_spec.hpp"
#include "estimators/estimate.hpp"
#include "io/registry.hpp"

namespace hwplan {

struct Candidate {
  const Device* device = nullptr;
  int count = 1;
  Estimate estimate;
  double step_seconds = 0;         // training step, or time per output token (inference)
  double tokens_per_second = 0;    // training tokens/s, or decode tokens/s over all replicas
  double total_seconds = 0;        // for the job's tokens
  double cost_usd = 0;
  std::string cost_basis;          // "buy" or "rent"
  double energy_kwh = 0;
  double power_w = 0;
  double score = 0;                // 0..1, 1 = best on the objective
  std::vector<std::string> reasons;
};

struct Rejection {
  std::string device;
  std::string reason;
  std::string fix;  // what would make it feasible, when known
};

struct Recommendation {
  std::string model_id;
  double job_tokens = 0;
  bool job_tokens_assumed = false;
  std::vector<Candidate> candidates;  // feasible, best first, one per device (its best count); the report shows the top K
  long long feasible_configurations = 0;  // (device, count) pairs that meet every constraint
  std::vector<Rejection> rejected;
  std::vector<Rejection> nearest_misses;  // when nothing is feasible: the closest ones and what they lack
  long long configurations = 0;           // (device, count) pairs evaluated
  long long layouts_evaluated = 0;
  double seconds = 0;
};

// Device counts tried: 1, 2, 4, multiples of 8 up to 64, then powers of two up to max_count.
std::vector<int> candidate_counts(long long max_count);

Recommendation recommend(const io::Registry& registry, const WorkloadSpec& workload, const RecommendSpec& spec,
                         int threads = 1);

}  // namespace hwplan
