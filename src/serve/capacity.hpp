// Serving capacity: the KV cache a layout leaves, the highest load (request rate, or concurrent clients) at which
// the simulated engine still meets the latency targets, and the replicas and devices an asked load needs. The
// answer comes from the simulation; the step model's single-request time only seeds the search.
#pragma once

#include <optional>
#include <vector>

#include "estimators/estimate_types.hpp"
#include "serve/simulator.hpp"

namespace hwplan::serve {

struct Targets {
  std::optional<double> ttft_p95, ttft_p99, tpot_p95, tpot_p99, e2e_p95, e2e_p99;  // seconds
  bool any() const { return ttft_p95 || ttft_p99 || tpot_p95 || tpot_p99 || e2e_p95 || e2e_p99; }
};

enum class Metric { kNone, kTtft, kTpot, kE2e };
// The target a simulation misses by the largest ratio (kNone when it meets all, or there are none).
Metric missed_target(const SimResult& r, const Targets& t);

// What stops a replica from taking more load.
enum class Binding {
  kNone,             // no targets asked: nothing was searched
  kKvCapacity,       // the cache fills: admissions wait for blocks, sequences are preempted
  kMaxSequences,     // the batch holds the engine's maximum sequences
  kDecodeBandwidth,  // decode steps read weights and KV: the time per output token grows with the batch's context
  kDecodeCompute,    // decode batches large enough to be compute-bound
  kPrefillCompute,   // prompts' GEMMs and attention fill the steps
  kQueueing,         // the TTFT target: requests queue before their first token
  kUnloaded,         // even one request at a time misses a target
  kRequestTooLong,   // a request needs more KV than the cache holds
};

struct KvCapacity {
  long long tokens = 0;          // cache size in tokens (whole blocks)
  long long max_sequences = 0;   // sequences of the mean length that fit at once, at most the engine's cap
  double bytes_per_token = 0;    // per device
  double free_bytes = 0;         // device memory left after weights, activations and runtime
  double kv_bytes = 0;           // what the engine gives the cache (EngineConfig::kv_budget), per device
  double mean_request_tokens = 0;  // the mean request the sequence count is of
};
// `occupied_tokens`: the mean length a sequence holds while it runs (its prompt and half its output), at which a model
// with sliding-window layers is charged per token (those layers hold at most the window); the mean request length
// where not given.
KvCapacity kv_capacity(const EstimateInput& in, const EngineConfig& engine, double mean_request_tokens, double occupied_tokens = -1);

// One replica (one tensor-parallel group) of an engine under a traffic.
struct Replica {
  const EstimateInput* input = nullptr;
  EngineConfig engine;
  KvCapacity kv;
  double overhead_seconds = -1;  // < 0: the engine preset's
  bool unlimited_kv = false;     // tests: an infinite cache
};

struct Load {
  bool closed_loop = false;
  double value = 0;  // requests/s, or concurrent clients
};

SimResult simulate_replica(const Replica& r, const Traffic& traffic, Load load);

struct CapacityResult {
  std::optional<double> max_load;  // per replica; absent without targets
  Binding binding = Binding::kNone;
  Metric missed = Metric::kNone;   // the target that fails first above max_load
  bool saturated = false;          // above max_load the replica cannot keep up at all (open loop), or (closed loop)
                                   // further clients only queue for a place in the batch
  bool clients_capped_by_requests = false;  // closed loop: the search stopped at the simulated requests (--requests)
  int simulations = 0;
};
CapacityResult search_capacity(const Replica& r, const Traffic& traffic, const Targets& targets, bool closed_loop);

// The replica kept saturated: a closed loop of as many clients as its batch holds (the engine's cap, or the KV
// cache's sequences of the mean length). Its request rate is the most an open loop can sustain.
SimResult saturation_run(const Replica& r, const Traffic& traffic);
// What caps a saturated replica's throughput: prompt compute, or the number of sequences decoding together (set by
// the KV cache or by the engine's cap).
Binding saturation_binding(const Replica& r, const SimResult& saturation);

// Replicas needed for `load` given the per-replica maximum (at least one).
long long replicas_needed(double load, double max_load_per_replica);

}  // namespace hwplan::serve
