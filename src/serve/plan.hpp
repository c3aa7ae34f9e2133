// The serving plan for one device type: among tensor-parallel layouts, the one that serves the asked load within
// the targets on the fewest devices; the latencies at that load; cost and energy per million output tokens.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "serve/capacity.hpp"

namespace hwplan::serve {

struct ServeQuestion {
  Traffic traffic;
  Targets targets;
  Load load;                        // the whole load asked (all replicas)
  EngineConfig engine;
  double overhead_seconds = -1;
  std::optional<long long> devices; // without targets: the devices given (--count); replicas = devices / tp
  // Skip a layout whose single replica already holds more devices than an earlier (smaller) layout needs: it
  // cannot win. Layouts are then searched one after another; the chosen layout is the same, the table shorter.
  bool prune_layouts = false;
  double own_years = 3;             // horizon of the owned cost per million tokens (hwplan tco's default)
};

// A replica's layout in words: "tp=4", or "tp=4 pp=2" with pipeline stages.
inline std::string layout_name(int tp, int pp) {
  return "tp=" + std::to_string(tp) + (pp > 1 ? " pp=" + std::to_string(pp) : "");
}

struct LayoutOption {
  int tp = 1;
  int pp = 1;
  KvCapacity kv;
  CapacityResult capacity;
  long long replicas = 0;  // 0: this layout cannot serve the load
  long long devices = 0;
  bool fits = false;       // weights, activations and the longest request fit
  bool tried = true;       // false: a pipelined layout left out because an unpipelined one holds the model
};

struct ServeAnswer {
  std::vector<LayoutOption> layouts;  // every layout tried, in the order given
  std::optional<size_t> chosen;       // none: no layout serves the load within the targets
  Load load_per_replica;
  SimResult at_load;                  // one replica at its share of the load
  bool meets_targets = false;         // false too when the replicas cannot keep up with an open loop (overloaded)
  Metric missed = Metric::kNone;      // at the load, when the targets are missed
  // An open loop above what the replicas complete when saturated: the queue grows without bound.
  bool overloaded = false;
  std::optional<double> saturated_rate_per_replica;  // open loop: the most one replica sustains, when simulated
  std::optional<double> usd_per_million_output_tokens;  // from the device's cloud price; none without one
  // Owning the devices instead (hwplan tco: new purchase price, the class's host, electricity at the power fraction
  // around the clock, space, operations, less resale after own_years), serving this load for the whole horizon;
  // none without a purchase price.
  std::optional<double> own_usd_per_million_output_tokens;
  double own_years = 3;
  double kwh_per_million_output_tokens = 0;
  double power_fraction = 0;          // of TDP assumed for the energy
};

// `layouts`: the same workload on each candidate layout (plan.tp set, count = tp). Layouts are searched on up to
// `threads` threads; the answer does not depend on how many.
ServeAnswer plan_serving(const std::vector<const EstimateInput*>& layouts, const ServeQuestion& q, int threads = 1);

}  // namespace hwplan::serve
