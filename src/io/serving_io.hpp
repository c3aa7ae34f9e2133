// Published serving measurements (data/measurements/serving.yaml): a workload as hwplan serve states it (model,
// device, engine, lengths, concurrency or rate) and what the benchmark measured (throughput, TTFT, TPOT).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hwplan::io {

struct ServingCase {
  std::string name;
  SourceLocation where;
  std::string model, device, engine;
  long long count = 1;
  long long tp = 1;
  long long prompt = 0;
  std::optional<long long> generate;
  std::optional<std::string> prompt_dist, generate_dist;  // uniform:MIN:MAX | lognormal:MEAN:SIGMA
  // What the server ran when it differs from the engine preset's defaults (hwplan serve's flags of the same names):
  // weight and KV-cache formats, and the scheduler's settings.
  std::optional<std::string> weights, kv_cache, kv_admission, preempted_kv, kv_profile;
  std::optional<bool> chunked_prefill, overlap_scheduling, separate_prefill;
  std::optional<long long> max_sequences, max_batched_tokens, block_size, scheduler_steps;
  std::optional<double> kv_memory_fraction;
  // Where each key given in the case sits (a value checked later, when the case is resolved, names its own line).
  std::map<std::string, SourceLocation> key_where;
  std::optional<long long> concurrency;
  std::optional<double> rate;
  long long requests = 300;
  // Share of the requests left out of the statistics: 0 (the default) as the benchmark clients these figures come
  // from (vllm bench serve, benchmark_serving.py) report over every request, the first burst included.
  double warmup = 0;
  // requests_per_second, output_tokens_per_second, ttft_median_seconds, tpot_median_seconds, ...
  std::map<std::string, double> measured;
  std::string source, note, confidence;
};

struct ServingSet {
  std::string file, source, description;
  std::vector<ServingCase> cases;
};

ServingSet load_serving_measurements(const std::string& path);
// The file (or text) declares `kind: serving` at its top: `hwplan validate` reads it with the serving loader.
bool is_serving_measurements(const std::string& path);
bool is_serving_document(const std::string& text);
ServingSet parse_serving_measurements(const std::string& text, const std::string& file);

}  // namespace hwplan::io
