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
  bool at_search_limit = false;    // the chosen count is the largest tried: more devices might do better
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
  long long global_batch = 0;        // training: sequences per optimizer step, the same for every candidate
  bool global_batch_assumed = false; // the documented default (default_global_batch), not the user's
  long long largest_count = 0;       // the largest count tried (a candidate there sits at the search limit)
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

// The global batch every candidate of a training recommendation is compared at, when the user gives none:
// pretraining about one million tokens per optimizer step (GPT-3 used 0.5-3.2M, Llama 2 4M; 1M keeps small
// models' recipes sane), rounded to a power of two in sequences; fine-tuning 16 sequences (the common
// per-device batch x accumulation of the Alpaca / PEFT recipes); non-transformer networks 256 samples
// (ResNet-50's reference batch, Goyal et al. 2017).
long long default_global_batch(const Model& model, const std::string& task, long long seq);

// Training: the smallest count in candidate_counts(max_count) at which `device` finishes the job within
// `deadline_seconds` (global batch as recommend uses it). Empty when even max_count is too slow or none fits.
struct DeadlineAnswer {
  int count = 0;
  WorkloadSpec workload;  // the workload with count and global batch set, ready for resolve_query
};
std::optional<DeadlineAnswer> smallest_count_for_deadline(const io::Registry& registry, const WorkloadSpec& w,
                                                          const Device& device, double deadline_seconds,
                                                          long long max_count);

Recommendation recommend(const io::Registry& registry, const WorkloadSpec& workload, const RecommendSpec& spec,
                         int threads = 1);

}  // namespace hwplan
