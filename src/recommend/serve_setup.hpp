// A serving question as stated (the flags of hwplan serve, a serving measurement case) resolved into the serve
// engine's inputs: the model, the device, the candidate layouts, the traffic, the targets and the engine.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/model.hpp"
#include "core/workload_spec.hpp"
#include "recommend/query.hpp"
#include "serve/plan.hpp"

namespace hwplan {

// Strings and optional numbers as the user gives them, like WorkloadSpec; prepare_serve validates them.
struct ServeSpec {
  WorkloadSpec workload;
  std::optional<double> rate;
  std::string arrival = "poisson";
  bool arrival_given = false;  // --arrival on the command line (an explicit poisson with --burstiness is a conflict)
  std::optional<double> burstiness;
  std::optional<long long> concurrency;
  std::optional<std::string> trace;
  std::optional<long long> requests;
  bool requests_assumed = false;  // recommend's default: a closed loop may still simulate more (Traffic::requests_given)
  // Share of the requests (the first by arrival) left out of the statistics; default 0.1. Benchmark clients such
  // as vllm bench serve report over every request: 0 compares with them.
  std::optional<double> warmup;
  long long seed = 1;
  std::optional<std::string> prompt_dist, generate_dist;
  double prefix_cache_hit = 0;
  serve::Targets targets;
  std::optional<long long> block_size, max_batched_tokens, max_sequences, scheduler_steps;
  std::optional<double> kv_memory_fraction, step_overhead_ms, request_overhead_ms;
  std::optional<std::string> chunked_prefill, preempted_kv, kv_admission, separate_prefill, kv_profile;
  int threads = 0;
  double own_years = 3;  // the owned cost per million tokens over this horizon (serve --own-years; recommend's)
};

// A resolved serving question: the model, the device, the candidate layouts (each a validated query) and the
// traffic, targets and engine. Owns what the layouts point at.
struct ServeSetup {
  Model model;
  const Device* device = nullptr;
  std::deque<Query> queries;
  std::vector<const EstimateInput*> layouts;
  serve::ServeQuestion question;
  std::string traffic;                 // in words
  std::vector<std::string> warnings;
};
// A length distribution as a flag gives it: uniform:MIN:MAX, lognormal:MEAN:SIGMA or file:PATH (one length a
// line); a fixed length when the flag is absent. Throws InputError naming `flag` (or the file's line).
serve::LengthDist read_length_dist(const std::string& flag, const std::optional<std::string>& spec, long long fixed);

// Validates every field (exit-2 errors name the flag or the trace's file:line). `device_override` replaces the
// spec's device. A trace without a rate or a concurrency sets `o.rate` to the trace's own.
// The model and device resolved by the front end (front_end.hpp); `scope`: whether a --profile applies to this
// device when it measured another (query.hpp).
ServeSetup prepare_serve(const Model& model, const Device& device, ServeSpec& o,
                         ProfileScope scope = ProfileScope::kNamedDevice);

}  // namespace hwplan
