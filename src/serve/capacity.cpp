#include "serve/capacity.hpp"

#include <algorithm>
#include <cmath>

#include "core/assumptions.hpp"
#include "estimators/memory.hpp"
#include "estimators/params.hpp"

namespace hwplan::serve {
namespace {

double worst_ratio(const SimResult& r, const Targets& t, Metric* which) {
  double worst = 0;
  *which = Metric::kNone;
  auto check = [&](const std::optional<double>& target, double value, Metric m) {
    if (!target) return;
    double ratio = value / std::max(1e-12, *target);
    if (ratio > worst) {
      worst = ratio;
      *which = m;
    }
  };
  check(t.ttft_p95, r.ttft.p95, Metric::kTtft);
  check(t.ttft_p99, r.ttft.p99, Metric::kTtft);
  check(t.tpot_p95, r.tpot.p95, Metric::kTpot);
  check(t.tpot_p99, r.tpot.p99, Metric::kTpot);
  check(t.e2e_p95, r.e2e.p95, Metric::kE2e);
  check(t.e2e_p99, r.e2e.p99, Metric::kE2e);
  return worst;
}

bool meets(const SimResult& r, const Targets& t) { return !r.unservable && missed_target(r, t) == Metric::kNone; }

// Decode steps are bandwidth-bound while doubling the batch costs well under twice the time.
bool decode_bandwidth_bound(const Replica& rep, double batch) {
  StepModel m(step_rates(*rep.input), 0);
  long long b = std::max(1LL, std::llround(batch));
  return m.decode_step_seconds(2 * b, 0) < 1.6 * m.decode_step_seconds(b, 0);
}

Binding binding_of(const Replica& rep, const SimResult& r, Metric missed) {
  if (r.unservable) return Binding::kRequestTooLong;
  if (r.preemptions > 0 || r.kv_blocked_fraction > 0.25) return Binding::kKvCapacity;
  if (r.sequences_blocked_fraction > 0.25) return Binding::kMaxSequences;
  if (missed == Metric::kTtft) return r.prefill_time_fraction > 0.5 ? Binding::kPrefillCompute : Binding::kQueueing;
  if (r.prefill_time_fraction > 0.5) return Binding::kPrefillCompute;
  return decode_bandwidth_bound(rep, r.mean_batch) ? Binding::kDecodeBandwidth : Binding::kDecodeCompute;
}


}  // namespace

Metric missed_target(const SimResult& r, const Targets& t) {
  Metric m;
  return worst_ratio(r, t, &m) > 1 ? m : Metric::kNone;
}

KvCapacity kv_capacity(const EstimateInput& in, const EngineConfig& engine, double mean_request_tokens, double occupied_tokens) {
  KvCapacity k;
  // The engine's profiling pass: weights, the activations of one full token budget, the runtime; it runs before the
  // cache exists (its attention keeps no KV), so the pass's own cache is not part of what it holds.
  Workload w = in.workload;
  w.prompt = engine.max_batched_tokens;
  w.generate = 0;
  Plan p = in.plan;
  p.micro_batch = 1;
  ParameterCounts params = count_parameters(*in.model);
  MemoryBreakdown m = inference_memory(*in.model, params, *in.device, w, p);
  m.kv_cache = 0;
  m.runtime_fragmentation = allocator_fragmentation(m);
  const double device = in.device->plan_memory_bytes(), f = kv_fraction_for(engine, in.plan.tp);
  k.free_bytes = device - m.total();
  k.bytes_per_token = kv_bytes_per_token(*in.model, in.workload, in.plan, occupied_tokens > 0 ? occupied_tokens : mean_request_tokens);
  k.mean_request_tokens = mean_request_tokens;
  switch (engine.kv_budget) {
    case KvBudget::kShareOfDevice:
      if (engine.kv_profile == KvProfile::kAllocatedPeak) {
        const double reported = device * (1 - assumptions().driver_reserved_memory_fraction);
        // Never more than is really free: past that the engine would run out of memory, not serve.
        k.kv_bytes = std::min(f * reported - (m.weights + m.activations + m.runtime_workspace), k.free_bytes);
      } else {
        k.kv_bytes = f * device - m.total();
      }
      break;
    case KvBudget::kStaticShareOfDevice: k.kv_bytes = std::min(f * device - m.weights, k.free_bytes); break;
    case KvBudget::kShareOfFree: k.kv_bytes = f * k.free_bytes; break;
  }
  // --headroom, when given: the engine's share is never allowed past it.
  if (engine.memory_cap_fraction < 1) k.kv_bytes = std::min(k.kv_bytes, engine.memory_cap_fraction * device - m.total());
  if (k.kv_bytes <= 0 || k.bytes_per_token <= 0) return k;
  const double tokens = k.kv_bytes / k.bytes_per_token;
  const double blocks = std::floor(tokens / std::max(1, engine.block_tokens));
  k.tokens = static_cast<long long>(std::min(blocks * std::max(1, engine.block_tokens), 1e15));
  k.max_sequences = std::min<long long>(engine.max_sequences,
                                        static_cast<long long>(static_cast<double>(k.tokens) / std::max(1.0, mean_request_tokens)));
  return k;
}

// The engine's per-step CPU overhead: the given one or the preset's, paid once per multi-step round.
double step_overhead(const Replica& r, const StepRates& rates) {
  const double per_round = r.overhead_seconds >= 0 ? r.overhead_seconds : rates.step_overhead_seconds;
  return per_round / std::max(1, r.engine.scheduler_steps);
}

SimResult simulate_replica(const Replica& r, const Traffic& traffic, Load load) {
  const StepRates rates = step_rates(*r.input);
  StepModel model(rates, step_overhead(r, rates));
  SimConfig cfg;
  cfg.engine = r.engine;
  // Pipeline stages (vLLM's virtual engines): pp batches are in flight, one per stage; each batch's step walks
  // through every stage (the step model's time of all layers plus the stage-to-stage sends) and owns 1/pp of the
  // KV blocks and of the load. One of them is simulated; the replica delivers pp times its throughput at the
  // same latencies.
  const int pp = std::max(1, r.input->plan.pp);
  cfg.kv_capacity_tokens = r.unlimited_kv ? -1 : r.kv.tokens / pp;
  cfg.warmup_fraction = traffic.warmup_fraction;
  auto scale = [](SimResult s, double engines) {
    s.requests_per_second *= engines;
    s.output_tokens_per_second *= engines;
    s.total_tokens_per_second *= engines;
    return s;
  };
  if (!load.closed_loop) return scale(simulate(model, cfg, make_requests(traffic, load.value / pp)), pp);  // Poisson splits
  // A closed loop of C clients keeps at most C batches in flight: min(pp, C) engines busy, the clients dealt out
  // as evenly as they go (some engines one more). The busier engines' latencies are reported.
  const long long clients = std::max(1LL, std::llround(load.value));
  const long long engines = std::min<long long>(pp, clients);
  const long long base = clients / engines, extra = clients % engines;
  // Unless --requests fixed the run: ten rounds of the engine's clients at least, so that the first round (every
  // client's prompt at once) and the last (a falling load) are left out of the latencies with a steady state between.
  auto requests_for = [&](long long engine_clients) {
    Traffic t = traffic;
    if (!t.requests_given && t.warmup_fraction > 0 && t.arrival != ArrivalKind::kTrace)
      t.requests = std::clamp<long long>(10 * engine_clients, t.requests, 1'000'000);
    return make_requests(t, 1.0);
  };
  cfg.closed_loop_clients = base + (extra > 0 ? 1 : 0);
  SimResult busy = simulate(model, cfg, requests_for(cfg.closed_loop_clients));
  if (extra == 0) return scale(busy, static_cast<double>(engines));
  cfg.closed_loop_clients = base;
  SimResult rest = simulate(model, cfg, requests_for(base));
  SimResult out = scale(busy, static_cast<double>(extra));
  out.requests_per_second += rest.requests_per_second * static_cast<double>(engines - extra);
  out.output_tokens_per_second += rest.output_tokens_per_second * static_cast<double>(engines - extra);
  out.total_tokens_per_second += rest.total_tokens_per_second * static_cast<double>(engines - extra);
  return out;
}

// What caps a saturated replica's throughput: prompt compute, or the number of sequences decoding together (set by
// the KV cache or by the engine's cap).
Binding saturation_binding(const Replica& rep, const SimResult& r) {
  if (r.prefill_time_fraction > 0.5) return Binding::kPrefillCompute;
  if (!rep.unlimited_kv && rep.kv.max_sequences < rep.engine.max_sequences) return Binding::kKvCapacity;
  return Binding::kMaxSequences;
}

// The clients a replica batches at once: each pipeline stage's virtual engine up to the engine's cap or what its
// share of the KV cache holds of the mean request.
double batch_clients(const Replica& rep) {
  const double pp = static_cast<double>(std::max(1, rep.input->plan.pp));
  if (rep.unlimited_kv) return static_cast<double>(rep.engine.max_sequences) * pp;
  if (pp == 1)
    return std::max<double>(1, std::min<double>(static_cast<double>(rep.engine.max_sequences), static_cast<double>(rep.kv.max_sequences)));
  const double by_kv = static_cast<double>(rep.kv.tokens) / pp / std::max(1.0, rep.kv.mean_request_tokens);
  return pp * std::max(1.0, std::floor(std::min(static_cast<double>(rep.engine.max_sequences), by_kv)));
}

SimResult saturation_run(const Replica& rep, const Traffic& traffic) {
  const double pp = static_cast<double>(std::max(1, rep.input->plan.pp));
  const double clients = batch_clients(rep);
  // The steady state of a full batch whatever run the user asked for: four rounds of the clients at least, the
  // first of them (every client's prompt at once) left out.
  Traffic t = traffic;
  const double per_engine = std::ceil(clients / pp);
  t.requests = std::max<long long>(traffic.requests, static_cast<long long>(4 * per_engine));
  t.warmup_fraction = std::max(traffic.warmup_fraction, std::min(0.5, per_engine / static_cast<double>(t.requests)));
  return simulate_replica(rep, t, {true, clients});
}

CapacityResult search_capacity(const Replica& rep, const Traffic& traffic, const Targets& targets, bool closed) {
  CapacityResult out;
  if (!targets.any()) return out;
  // Open loop: a rate above what the replica completes when saturated is not sustainable, whatever a finite
  // simulation's percentiles say (the queue grows without bound; a short run may not have seen it yet). The
  // saturated throughput comes from a closed loop that keeps the batch full.
  double saturated = INFINITY;
  SimResult saturation;
  // A closed loop beyond the clients the replica batches adds no throughput, only a queue before the first token:
  // with no TTFT or end-to-end target to bound that queue, the batch is the capacity (the time per output token
  // stays within its target however many clients wait). Nor can a simulation of N requests say anything about more
  // than N clients: the search stops there.
  double client_cap = closed ? static_cast<double>(std::max<long long>(1, traffic.requests)) : INFINITY;
  const bool batch_caps = closed && !targets.ttft_p95 && !targets.ttft_p99 && !targets.e2e_p95 && !targets.e2e_p99;
  if (!closed || batch_caps) {
    saturation = saturation_run(rep, traffic);
    ++out.simulations;
    if (saturation.unservable) {
      out.max_load = 0;
      out.binding = Binding::kRequestTooLong;
      return out;
    }
    if (closed) client_cap = std::min(client_cap, batch_clients(rep));
    else saturated = saturation.requests_per_second;
  }
  bool over_saturation = false;
  SimResult cap_failure;  // the closed loop at client_cap, when that misses a target
  bool cap_failed = false;
  auto pass = [&](double x, SimResult* failed) {
    if (cap_failed && x >= client_cap) {
      *failed = cap_failure;
      return false;
    }
    if (x > saturated) {
      *failed = saturation;
      over_saturation = true;
      return false;
    }
    ++out.simulations;
    SimResult r = simulate_replica(rep, traffic, {closed, x});
    if (meets(r, targets)) return true;
    *failed = std::move(r);
    over_saturation = false;
    return false;
  };
  if (closed && std::isfinite(client_cap)) {
    // The cap first: where it meets the targets it is the answer, set by the batch (or by the simulated requests,
    // which the report says to raise); where it does not, the search below stays under it.
    client_cap = std::floor(client_cap);
    if (pass(client_cap, &cap_failure)) {
      out.max_load = client_cap;
      out.saturated = true;
      out.clients_capped_by_requests = client_cap >= static_cast<double>(traffic.requests);
      out.binding = out.clients_capped_by_requests ? Binding::kQueueing : saturation_binding(rep, saturation);
      return out;
    }
    cap_failed = true;
  }
  // Seed: one request at a time (open loop: the rate at which one request is in flight on average).
  const StepRates rates = step_rates(*rep.input);
  StepModel model(rates, step_overhead(rep, rates));
  const double prompt = traffic.prompt.average(), output = traffic.output.average();
  const long long first_chunk = static_cast<long long>(std::min<double>(prompt, static_cast<double>(rep.engine.max_batched_tokens)));
  const double single = model.decode_step_seconds(1, prompt) * std::max(1.0, output) +
                        model.time({first_chunk, 1, 0, prompt * prompt / 2, prompt, first_chunk}).seconds;
  double lo = 0, hi = closed ? 1 : std::min(saturated, 1 / std::max(1e-6, single));
  SimResult fail;
  if (pass(hi, &fail)) {
    lo = hi;
    for (int i = 0; i < 40; ++i) {
      hi = lo * 2;
      if (!pass(hi, &fail)) break;
      lo = hi;
    }
  } else {
    for (int i = 0; i < 12 && !closed; ++i) {
      double x = hi / 2;
      if (pass(x, &fail)) {
        lo = x;
        break;
      }
      hi = x;
    }
    if (lo == 0) {
      out.max_load = 0;
      out.missed = fail.unservable ? Metric::kNone : missed_target(fail, targets);
      out.binding = fail.unservable ? Binding::kRequestTooLong : Binding::kUnloaded;
      return out;
    }
  }
  // Bisect: to 1% of the rate, or to one client.
  for (int i = 0; i < 14; ++i) {
    if (closed ? hi - lo <= 1 : hi / lo < 1.01) break;
    double mid = closed ? std::floor((lo + hi) / 2) : std::sqrt(lo * hi);
    if (pass(mid, &fail)) lo = mid;
    else hi = mid;
  }
  out.max_load = lo;
  out.saturated = over_saturation;
  out.missed = over_saturation ? Metric::kNone : missed_target(fail, targets);
  out.binding = over_saturation ? saturation_binding(rep, saturation) : binding_of(rep, fail, out.missed);
  return out;
}

long long replicas_needed(double load, double max_load) {
  if (!(max_load > 0)) return 0;
  return std::max(1LL, static_cast<long long>(std::ceil(load / max_load - 1e-9)));
}

}  // namespace hwplan::serve
