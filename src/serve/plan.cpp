#include "serve/plan.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>

#include "core/error.hpp"
#include "core/power.hpp"
#include "tco/tco.hpp"

namespace hwplan::serve {
namespace {

double mean_request_tokens(const Traffic& t) {
  if (t.arrival == ArrivalKind::kTrace && !t.trace.empty()) {
    double s = 0;
    for (const TraceRow& r : t.trace) s += static_cast<double>(r.prompt_tokens + r.output_tokens);
    return s / static_cast<double>(t.trace.size());
  }
  return t.prompt.average() + t.output.average();
}

// The mean length a sequence holds while it runs: its prompt and, averaged over its decode, half its output.
double mean_occupied_tokens(const Traffic& t) {
  if (t.arrival == ArrivalKind::kTrace && !t.trace.empty()) {
    double s = 0;
    for (const TraceRow& r : t.trace) s += static_cast<double>(r.prompt_tokens) + 0.5 * static_cast<double>(r.output_tokens);
    return s / static_cast<double>(t.trace.size());
  }
  return t.prompt.average() + 0.5 * t.output.average();
}

long long longest_request(const Traffic& t) {
  if (t.arrival == ArrivalKind::kTrace) {
    long long m = 0;
    for (const TraceRow& r : t.trace) m = std::max(m, r.prompt_tokens + r.output_tokens);
    return m;
  }
  auto top = [](const LengthDist& d) -> long long {
    switch (d.kind) {
      case LengthKind::kFixed: return d.fixed;
      case LengthKind::kUniform: return d.max;
      case LengthKind::kEmpirical: return d.values.empty() ? 0 : *std::max_element(d.values.begin(), d.values.end());
      case LengthKind::kLognormal: return 0;  // unbounded: the simulation finds out
    }
    return 0;
  };
  return top(t.prompt) + top(t.output);
}

}  // namespace

ServeAnswer plan_serving(const std::vector<const EstimateInput*>& layouts, const ServeQuestion& q, int threads) {
  ServeAnswer a;
  const double mean_tokens = mean_request_tokens(q.traffic);
  const long long longest = longest_request(q.traffic);
  std::vector<Replica> replicas;
  for (const EstimateInput* in : layouts) {
    LayoutOption o;
    o.tp = in->plan.tp;
    o.pp = in->plan.pp;
    Replica r{in, q.engine, kv_capacity(*in, q.engine, mean_tokens, mean_occupied_tokens(q.traffic)), q.overhead_seconds};
    o.kv = r.kv;
    // Each pipeline stage's engine holds 1/pp of the KV blocks: the longest request must fit one of them.
    o.fits = r.kv.tokens > 0 && r.kv.tokens / std::max(1, o.pp) >= longest;
    a.layouts.push_back(o);
    replicas.push_back(r);
  }
  // Pipeline stages are for models beyond one stage's devices: when a layout without them holds the model and the
  // longest request, the pipelined ones are not tried (a user's --pp gives only pipelined layouts).
  const bool flat_fits = std::any_of(a.layouts.begin(), a.layouts.end(), [](const LayoutOption& o) { return o.pp == 1 && o.fits; });
  if (flat_fits)
    for (LayoutOption& o : a.layouts)
      if (o.pp > 1) o.tried = false;
  // Without latency targets and without a device count, an open loop's one requirement is to keep up: the replicas
  // whose saturated rate covers the load (recommend --task serve).
  const bool sustain = !q.targets.any() && !q.load.closed_loop && !q.devices;
  auto evaluate = [&](size_t i) {
    LayoutOption& o = a.layouts[i];
    if (!o.tried) return;
    if (o.fits && sustain) {
      const SimResult saturation = saturation_run(replicas[i], q.traffic);
      o.capacity.simulations = 1;
      if (saturation.unservable || !(saturation.requests_per_second > 0)) {
        o.capacity.max_load = 0;
        o.capacity.binding = Binding::kRequestTooLong;
        return;
      }
      o.capacity.max_load = saturation.requests_per_second;
      o.capacity.saturated = true;
      o.capacity.binding = saturation_binding(replicas[i], saturation);
      o.replicas = replicas_needed(q.load.value, *o.capacity.max_load);
      o.devices = o.replicas * o.tp * o.pp;
    } else if (o.fits && q.targets.any()) {
      o.capacity = search_capacity(replicas[i], q.traffic, q.targets, q.load.closed_loop);
      if (o.capacity.max_load && *o.capacity.max_load > 0) {
        o.replicas = replicas_needed(q.load.value, *o.capacity.max_load);
        o.devices = o.replicas * o.tp * o.pp;
      }
    } else if (o.fits && q.devices && *q.devices % (o.tp * o.pp) == 0) {
      o.replicas = *q.devices / (o.tp * o.pp);
      o.devices = *q.devices;
    }
  };
  if (q.prune_layouts) {
    long long best = 0;
    for (size_t i = 0; i < a.layouts.size(); ++i) {
      LayoutOption& o = a.layouts[i];
      if (best > 0 && static_cast<long long>(o.tp) * o.pp > best) continue;
      evaluate(i);
      if (o.devices > 0 && (best == 0 || o.devices < best)) best = o.devices;
    }
  } else {
    // Each layout's capacity search is independent: the workers take layouts by index and write only their own.
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < a.layouts.size(); i = next++) evaluate(i);
    };
    std::vector<std::future<void>> workers;
    const int n = std::max(1, std::min<int>(threads, static_cast<int>(a.layouts.size())));
    for (int i = 1; i < n; ++i) workers.push_back(std::async(std::launch::async, work));
    work();
    for (auto& f : workers) f.get();
  }
  // Fewest devices; then the most headroom per replica; then the smaller layout (the order given).
  for (size_t i = 0; i < a.layouts.size(); ++i) {
    const LayoutOption& o = a.layouts[i];
    if (o.replicas == 0) continue;
    if (!a.chosen) {
      a.chosen = i;
      continue;
    }
    const LayoutOption& best = a.layouts[*a.chosen];
    double head = o.capacity.max_load.value_or(0) * static_cast<double>(o.replicas);
    double best_head = best.capacity.max_load.value_or(0) * static_cast<double>(best.replicas);
    if (o.devices < best.devices || (o.devices == best.devices && head > best_head)) a.chosen = i;
    if (!q.targets.any() && !sustain) break;  // a given count: the smallest layout that fits
  }
  if (!a.chosen) return a;
  const LayoutOption& o = a.layouts[*a.chosen];
  const Replica& r = replicas[*a.chosen];
  a.load_per_replica = {q.load.closed_loop, q.load.value / static_cast<double>(o.replicas)};
  if (q.load.closed_loop) a.load_per_replica.value = std::ceil(a.load_per_replica.value - 1e-9);
  a.at_load = simulate_replica(r, q.traffic, a.load_per_replica);
  // Clients that do not split evenly: some replicas hold one client fewer. The latencies are the busier replicas';
  // the throughput is the replicas' mean (times the replicas below, the whole load's).
  if (q.load.closed_loop && o.replicas > 1 && !a.at_load.unservable) {
    const long long clients = std::llround(q.load.value), per = static_cast<long long>(a.load_per_replica.value);
    const long long busier = clients - (per - 1) * o.replicas;  // replicas with `per` clients
    if (busier < o.replicas) {
      // One client fewer; none at all leaves a replica idle.
      const SimResult fewer = per > 1 ? simulate_replica(r, q.traffic, {true, static_cast<double>(per - 1)}) : SimResult{};
      const double share = static_cast<double>(busier) / static_cast<double>(o.replicas);
      auto mix = [&](double busy, double rest) { return busy * share + rest * (1 - share); };
      a.at_load.requests_per_second = mix(a.at_load.requests_per_second, fewer.requests_per_second);
      a.at_load.output_tokens_per_second = mix(a.at_load.output_tokens_per_second, fewer.output_tokens_per_second);
      a.at_load.total_tokens_per_second = mix(a.at_load.total_tokens_per_second, fewer.total_tokens_per_second);
    }
  }
  a.missed = a.at_load.unservable ? Metric::kNone : missed_target(a.at_load, q.targets);
  a.meets_targets = !a.at_load.unservable && a.missed == Metric::kNone;
  // An open loop the replicas cannot keep up with: the queue grows without bound, and a finite simulation's
  // percentiles only say how long it ran. With targets the search kept the load below saturation; with a given
  // count, the saturated rate is checked here.
  if (!q.load.closed_loop && !a.at_load.unservable) {
    LayoutOption& chosen = a.layouts[*a.chosen];
    double saturated = INFINITY;
    if (chosen.capacity.saturated && chosen.capacity.max_load) {
      saturated = *chosen.capacity.max_load;
    } else if (!q.targets.any()) {
      const SimResult saturation = saturation_run(r, q.traffic);
      saturated = saturation.requests_per_second;
      if (a.load_per_replica.value > saturated * (1 + 1e-9)) {
        chosen.capacity.max_load = saturated;
        chosen.capacity.saturated = true;
        chosen.capacity.binding = saturation_binding(r, saturation);
      }
    }
    a.overloaded = a.load_per_replica.value > saturated * (1 + 1e-9);
    a.saturated_rate_per_replica = std::isfinite(saturated) ? std::optional<double>(saturated) : std::nullopt;
    if (a.overloaded) a.meets_targets = false;
    // Kept up with, in the steady state (a warm-up left out), a Poisson or gamma load is served as it arrives: the
    // throughput is the load itself, not a finite run's sample of it (the latencies are the simulation's).
    if (!a.overloaded && q.traffic.warmup_fraction > 0 && q.traffic.arrival != ArrivalKind::kTrace) {
      const double rate = a.load_per_replica.value;
      a.at_load.requests_per_second = rate;
      a.at_load.output_tokens_per_second = rate * q.traffic.output.average();
      a.at_load.total_tokens_per_second = rate * (q.traffic.prompt.average() + q.traffic.output.average());
    }
  }

  const Device& d = *r.input->device;
  const double output_per_second = a.at_load.output_tokens_per_second * static_cast<double>(o.replicas);
  if (output_per_second > 0) {
    const double hours_per_million = 1e6 / output_per_second / 3600;
    if (d.price.cloud_usd_per_hour)
      a.usd_per_million_output_tokens = *d.price.cloud_usd_per_hour * static_cast<double>(o.devices) * hours_per_million;
    a.power_fraction = kInferencePowerFraction;
    a.kwh_per_million_output_tokens = d.tdp_w * kInferencePowerFraction * static_cast<double>(o.devices) * hours_per_million / 1000;
    a.own_years = q.own_years;
    if (d.price.launch_msrp_usd || d.price.street_usd) {
      tco::Inputs in = tco::default_inputs(d, static_cast<int>(o.devices), false, "on-demand");
      in.years = q.own_years;
      in.utilization = 1;  // the fleet serves this load around the clock
      in.device_power_fraction = kInferencePowerFraction;
      const double horizon_hours = q.own_years * 8760;  // tco counts 8,760 hours a year
      a.own_usd_per_million_output_tokens = tco::own_cost(d, in).total_usd / horizon_hours * hours_per_million;
    }
  }
  return a;
}

}  // namespace hwplan::serve
