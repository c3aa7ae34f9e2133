// A discrete-event simulation of a vLLM-like scheduler: continuous batching, a paged KV cache, chunked prefill
// under a token budget per step, a cap on batched sequences, first-come-first-served admission and preemption by
// recomputation (the most recently admitted sequence gives its blocks back) when the cache is full. Time advances
// one engine step at a time; each step's length comes from the StepModel. Deterministic: no clock, no threads.
#pragma once

#include <vector>

#include "serve/engine.hpp"
#include "serve/step_model.hpp"
#include "serve/traffic.hpp"

namespace hwplan::serve {

struct SimConfig {
  EngineConfig engine;
  long long kv_capacity_tokens = 0;  // < 0: unlimited
  long long closed_loop_clients = 0; // > 0: closed loop, each client sends its next request when one finishes
  double warmup_fraction = 0.1;
};

struct RequestRecord {
  double arrival = 0;
  double first_token = 0;
  double finish = 0;
  long long prompt_tokens = 0;
  long long output_tokens = 0;
  int preemptions = 0;
};

struct Percentiles {
  double p50 = 0, p95 = 0, p99 = 0, mean = 0;
};

struct SimResult {
  std::vector<RequestRecord> records;  // every request, in arrival order
  long long measured = 0;              // requests after the warm-up, the ones the statistics describe
  bool first_round_left_out = false;   // a closed loop's first round (every client's prompt at once), beyond the warm-up
  bool last_round_left_out = false;    // a closed loop's last round (each client's final request)
  Percentiles ttft, tpot, e2e;         // seconds
  bool tpot_defined = false;           // some measured request wrote more than one token (else TPOT does not exist)
  double requests_per_second = 0;      // completions per second over the measured window
  double output_tokens_per_second = 0;
  double total_tokens_per_second = 0;
  double seconds = 0;                  // simulated time until the last request finished
  long long steps = 0;
  long long preemptions = 0;
  double mean_batch = 0;               // sequences per step, time-weighted
  double mean_decode_context = 0;      // tokens a decoding sequence attends to, on average over decode slots
  // Why admission stalled while requests waited (fraction of the steps that had a waiting request):
  double kv_blocked_fraction = 0;      // no free KV blocks for the next request's first chunk
  double sequences_blocked_fraction = 0;  // the batch held max_sequences
  double prefill_time_fraction = 0;    // share of the GPU step time spent on prefill tokens
  bool unservable = false;             // a request needs more KV than the whole cache
  long long longest_request_tokens = 0;
};

SimResult simulate(StepModel& model, const SimConfig& config, std::vector<Request> requests);

// Percentile (0..1) of a sample with linear interpolation between order statistics (numpy's default).
double percentile(std::vector<double>& values, double p);

}  // namespace hwplan::serve
