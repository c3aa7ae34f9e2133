#include "serve/step_model.hpp"

#include <algorithm>

namespace hwplan::serve {
namespace {

// Counts above this are computed each time rather than cached (a hostile --max-batched-tokens must not allocate).
constexpr long long kCacheLimit = 1 << 16;

double cached(std::vector<double>& cache, long long n, auto compute) {
  if (n >= kCacheLimit) return compute(n);
  if (static_cast<long long>(cache.size()) <= n) cache.resize(static_cast<size_t>(n) + 1, -1.0);
  double& v = cache[static_cast<size_t>(n)];
  if (v < 0) v = compute(n);
  return v;
}

}  // namespace

StepModel::StepModel(const StepRates& rates, double overhead_seconds)
    : rates_(rates), overhead_(overhead_seconds >= 0 ? overhead_seconds : rates.step_overhead_seconds) {}

double StepModel::tokens_seconds(long long tokens) {
  return cached(tokens_cache_, tokens, [this](long long n) { return step_tokens_seconds(rates_, static_cast<double>(n)); });
}

double StepModel::logits_seconds(long long sequences, long long step_tokens) {
  // The logits' rates depend on the step's load (memory-bound or not): one cache per regime.
  const double tokens = static_cast<double>(step_tokens);
  auto& cache = rates_.memory_bound(tokens) ? memory_bound_logits_cache_ : logits_cache_;
  return cached(cache, sequences, [this, tokens](long long n) { return step_logits_seconds(rates_, static_cast<double>(n), tokens); });
}

StepTime StepModel::time(const StepLoad& l) {
  StepTime t;
  if (l.tokens <= 0) return t;
  const double tokens = tokens_seconds(l.tokens);
  const double step_tokens = static_cast<double>(l.tokens);
  const double prefill_attention =
      step_prefill_attention_seconds(rates_, l.prefill_score_tokens, l.prefill_kv_tokens, step_tokens);
  t.decode_attention_seconds = step_decode_attention_seconds(rates_, l.decode_context_tokens, step_tokens);
  const double unfused = rates_.unfused_prefill_seconds_per_token * static_cast<double>(l.prefill_tokens);
  const double gpu = tokens + logits_seconds(l.sampling_sequences, l.tokens) + prefill_attention + unfused +
                     t.decode_attention_seconds + rates_.extra_kernels_at(step_tokens);
  t.prefill_seconds =
      tokens * static_cast<double>(l.prefill_tokens) / static_cast<double>(l.tokens) + prefill_attention + unfused;
  t.gpu_seconds = std::max(gpu, rates_.host_seconds);
  t.seconds = engine_step_seconds(gpu, rates_.host_seconds, overhead_, rates_.overlap_scheduling);
  return t;
}

double StepModel::lone_prefill_seconds(long long prompt, long long budget, bool chunked) {
  double seconds = 0;
  for (long long done = 0; done < prompt;) {
    StepLoad l;
    l.tokens = l.prefill_tokens = chunked ? std::min(prompt - done, std::max(1LL, budget)) : prompt;
    const double before = static_cast<double>(done), chunk = static_cast<double>(l.tokens);
    l.prefill_score_tokens = chunk * (before + chunk / 2);
    l.prefill_kv_tokens = before + chunk;
    done += l.tokens;
    l.sampling_sequences = done >= prompt ? 1 : 0;
    seconds += time(l).seconds;
  }
  return seconds;
}

double StepModel::decode_step_seconds(long long batch, double context) {
  StepLoad l;
  l.tokens = batch;
  l.sampling_sequences = batch;
  l.decode_context_tokens = static_cast<double>(batch) * context;
  return time(l).seconds;
}

}  // namespace hwplan::serve
