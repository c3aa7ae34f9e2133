// The time of one engine iteration from the estimators' step pieces (estimators/inference.hpp): GEMMs over the
// batched tokens, attention over each sequence's context, logits for the sampling sequences, the host's kernel
// issue and the engine's fixed per-step overhead. Token-count terms are cached per count (the simulator asks for
// the same few hundred counts millions of times).
#pragma once

#include <vector>

#include "estimators/inference.hpp"

namespace hwplan::serve {

struct StepLoad {
  long long tokens = 0;              // new tokens this step: prefill chunks + one per decoding sequence
  long long sampling_sequences = 0;  // sequences that produce a token (decoding, or finishing their prefill)
  double decode_context_tokens = 0;  // cached positions the decoding sequences attend to, summed
  double prefill_score_tokens = 0;   // sum over chunks of chunk x (positions before it + chunk / 2)
  double prefill_kv_tokens = 0;      // positions of K and V the prefill chunks read
  long long prefill_tokens = 0;      // part of `tokens` that is prefill
};

struct StepTime {
  double seconds = 0;
  double gpu_seconds = 0;      // the device's part of it (its work, or the host's kernel issue that paces it)
  double prefill_seconds = 0;  // GPU time attributable to prefill tokens (share of the token terms + attention)
  double decode_attention_seconds = 0;
};

class StepModel {
 public:
  // overhead_seconds < 0: the engine preset's per-step overhead.
  explicit StepModel(const StepRates& rates, double overhead_seconds = -1);
  StepTime time(const StepLoad& load);
  // A decode step of `batch` sequences at `context` tokens each (the figure inference_time reports).
  double decode_step_seconds(long long batch, double context);
  // The engine's time to a lone request's first token: its prompt in chunks of at most `budget` tokens (the whole
  // prompt in one step without chunked prefill), one step each, the last one sampling, as the simulator runs a request
  // that finds the engine idle.
  double lone_prefill_seconds(long long prompt, long long budget, bool chunked);
  double overhead_seconds() const { return overhead_; }
  const StepRates& rates() const { return rates_; }

 private:
  double tokens_seconds(long long tokens);
  double logits_seconds(long long sequences, long long step_tokens);
  StepRates rates_;
  double overhead_ = 0;
  std::vector<double> tokens_cache_, logits_cache_, memory_bound_logits_cache_;
};

}  // namespace hwplan::serve
