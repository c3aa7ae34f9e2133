// Layout search: the fastest parallel layout (tp, pp, dp, micro-batch, recompute, ZeRO stage) that fits.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "estimators/estimate_types.hpp"
#include "estimators/training.hpp"

namespace hwplan {

// Micro-batch costs by (tp, cp, micro-batch, ep): they depend on the model, device and workload but not on the
// device count or the recomputation (training_time prices what recomputation repeats), so searches of one workload
// on one device at several counts can share them.
using CostCache = std::map<std::tuple<int, int, std::int64_t, int>, MicroBatchCost>;

// The shortest sequence chunk the search gives a context-parallel rank (tokens).
inline constexpr std::int64_t kMinContextChunk = 1024;

// What the user fixed; unset fields are searched.
struct SearchSpace {
  std::shared_ptr<CostCache> cost_cache;  // optional, shared across counts (recommend)
  std::optional<int> tp, pp, dp, zero, ep;
  // Context parallelism the user fixed; else searched (cp = 1 and, with a stack that has it and flash attention,
  // degrees that leave each rank chunks of at least kMinContextChunk tokens).
  std::optional<int> cp;
  std::optional<int> shard_group;  // ZeRO shard size the user fixed (HSDP); else full sharding and, when dp spans
                                   // nodes, shards of one node are tried too
  std::optional<Recompute> recompute;
  // Layers per stage that recompute (with full recomputation) the user fixed; else, when recomputation is free,
  // the fewest that fit on stacks that recompute some layers only (a fixed `recompute` full means every layer).
  std::optional<int> recompute_layers;
  // Model chunks per device (interleaved pipeline) the user fixed; else searched when the stack interleaves.
  std::optional<int> vp;
  std::optional<std::int64_t> micro_batch;
  std::optional<std::int64_t> grad_accum;
  std::int64_t global_batch = 0;  // sequences per optimizer step (training); batch per replica (inference)
  // Training: false when the user fixed the micro-batch and/or accumulation but not the global batch; the global
  // batch is then micro-batch x accumulation x dp of each layout.
  bool global_batch_fixed = true;
  bool prune = true;              // memory-infeasible layouts are not timed (results are identical)
};

struct SearchResult {
  bool found = false;
  Plan best;
  Estimate estimate;                 // of the best layout (or of the nearest miss when none fits)
  long long layouts_evaluated = 0;
  long long layouts_feasible = 0;
  double seconds = 0;
};

SearchResult search_layouts(const EstimateInput& base, const SearchSpace& space);

}  // namespace hwplan
