// The requests a simulation serves: arrival process (Poisson, gamma with a burstiness, closed loop, a trace) and
// prompt / output lengths (fixed or drawn), from a seeded generator whose every draw is written out here (no
// library distribution whose algorithm could change between standard libraries).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hwplan::serve {

struct Request {
  double arrival_seconds = 0;   // open loop; closed loop sets it when the client's previous request ends
  long long prompt_tokens = 1;
  long long output_tokens = 1;
  long long cached_tokens = 0;  // prompt tokens found in the prefix cache
};

enum class LengthKind { kFixed, kUniform, kLognormal, kEmpirical };

struct LengthDist {
  LengthKind kind = LengthKind::kFixed;
  long long fixed = 1;
  long long min = 1, max = 1;     // uniform, inclusive
  double mean = 1, sigma = 0;     // lognormal: mean of the lengths (tokens), sigma of the underlying normal
  std::vector<long long> values;  // empirical: drawn uniformly
  double average() const;
  // The longest length drawn (a lognormal's, which has none, its 99th percentile).
  double longest() const;
};

enum class ArrivalKind { kPoisson, kGamma, kClosedLoop, kTrace };

// One row of a trace: arrival (seconds from the trace's start), prompt and output tokens.
struct TraceRow {
  double arrival_seconds = 0;
  long long prompt_tokens = 1;
  long long output_tokens = 1;
  bool has_arrival = true;
  int line = 0;  // the file line it was read from (0: a JSON document's element), for messages
};

struct Traffic {
  ArrivalKind arrival = ArrivalKind::kPoisson;
  double burstiness_cv = 1;      // gamma: coefficient of variation of the inter-arrival times (1 = Poisson)
  LengthDist prompt, output;
  double prefix_cache_hit = 0;   // fraction of each prompt served from the prefix cache
  long long requests = 2000;
  // Simulate exactly `requests` (--requests given, or a caller's own Traffic). False where it is a default: a closed
  // loop then simulates ten rounds of each engine's clients when that is more (simulate_replica), so that its first
  // and last rounds can be left out.
  bool requests_given = true;
  std::uint64_t seed = 1;
  double warmup_fraction = 0.1;  // the first requests (by arrival) are left out of the statistics
  std::vector<TraceRow> trace;   // kTrace: lengths (and arrivals, when the trace has them)
  // Mean request rate of the trace's own arrivals (0 when it has none).
  double trace_rate() const;
};

// Parses "uniform:MIN:MAX", "lognormal:MEAN:SIGMA" (file:PATH is read by the caller into kEmpirical).
// Throws InputError naming `flag`.
LengthDist parse_length_dist(const std::string& flag, const std::string& spec);

// The requests at `rate` requests/s (open loop and traces: arrivals scaled to that rate; closed loop: arrival
// times left at 0). Deterministic in traffic.seed.
std::vector<Request> make_requests(const Traffic& traffic, double rate);

}  // namespace hwplan::serve
