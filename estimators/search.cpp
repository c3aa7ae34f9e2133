#include "estimators/search.hpp"

#include <algorithm>
#include <chrono>
#include <tuple>
#include <cmath>
#include <map>

#include "estimators/efficiency.hpp"
#include "estimators/comm.hpp"
#include "estimators/estimate.hpp"
#include "estimators/training.hpp"

namespace hwplan {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int i = 1; static_cast<long long>(i) * i <= n; ++i) {
    if (n % i == 0) {
      out.push_back(i);
      if (i != n / i) out.push_back(n / i);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Candidate {
  double step = INFINITY;
  double memory = INFINITY;
  Plan plan;
};

// Fastest first; layouts within 0.5% of each other count as equally fast, and then the simpler one wins (less
// ZeRO sharding, less recomputation, less model parallelism), then the one with more free memory. The candidates
// are visited in a fixed order, so the result is deterministic (and the same with or without pruning).
bool better(const Candidate& a, const Candidate& b) {
  if (!std::isfinite(b.step)) return std::isfinite(a.step);
  double tolerance = 0.005 * std::min(a.step, b.step);
  if (std::fabs(a.step - b.step) > tolerance) return a.step < b.step;
  auto simplicity = [](const Plan& p) {
    return std::tuple(p.zero, static_cast<int>(p.recompute), p.tp * p.cp * p.pp, p.cp, p.pp, p.ep, p.vp);
  };
  if (simplicity(a.plan) != simplicity(b.plan)) return simplicity(a.plan) < simplicity(b.plan);
  if (a.memory != b.memory) return a.memory < b.memory;
  return a.step < b.step;
}

SearchResult search_inference(const EstimateInput& base, const SearchSpace& space) {
  SearchResult result;
  const int n = base.system.count;
  Candidate best, nearest;
  nearest.memory = INFINITY;
  for (int tp : divisors(n)) {
    if (space.tp && tp != *space.tp) continue;
    // An engine that splits models by layers offers no tensor parallelism unless the user asks for it.
    if (!space.tp && tp > 1 && base.workload.stack.layer_split) continue;
    if (base.model->is_transformer() && base.model->attention_heads % tp != 0) continue;
    if (!base.model->is_transformer() && tp > 1) continue;
    for (int pp : divisors(n / tp)) {
      if (space.pp && pp != *space.pp) continue;
      if (base.model->is_transformer() && pp > base.model->total_layers()) continue;
      if (!base.model->is_transformer() && pp > 1) continue;
      if (space.dp && n / (tp * pp) != *space.dp) continue;  // replicas the user fixed
      EstimateInput in = base;
      in.plan.tp = tp;
      in.plan.pp = pp;
      in.plan.dp = n / (tp * pp);
      in.plan.zero = 0;
      ++result.layouts_evaluated;
      ParameterCounts params = count_parameters(*in.model);
      double mem = estimate_memory(in, params).total();
      Candidate c;
      c.plan = in.plan;
      c.memory = mem;
      if (mem > in.system.usable_bytes(in.device->plan_memory_bytes())) {
        if (mem < nearest.memory) nearest = c;
        continue;
      }
      ++result.layouts_feasible;
      Estimate e = estimate(in);
      // Replicas serve independent streams: per-token latency is what a user feels; throughput scales by dp. A job of
      // --tokens is judged by its own rate (replicas included), which is what its time and cost are priced at.
      c.step = base.workload.tokens && e.infer.job.per_second > 0 ? 1.0 / e.infer.job.per_second
               : base.workload.generate > 0                    ? e.infer.time_per_output_token_seconds
                                                               : e.infer.prefill_seconds;
      if (better(c, best)) best = c;
    }
  }
  result.found = std::isfinite(best.step);
  EstimateInput in = base;
  in.plan = result.found ? best.plan : nearest.plan;
  if (!result.found && !std::isfinite(nearest.memory)) return result;
  result.best = in.plan;
  result.estimate = estimate(in);
  return result;
}

}  // namespace

SearchResult search_layouts(const EstimateInput& base, const SearchSpace& space) {
  auto start = std::chrono::steady_clock::now();
  SearchResult result;
  if (base.workload.task == Task::kInfer) {
    result = search_inference(base, space);
  } else {
    const Model& m = *base.model;
    const int n = base.system.count;
    const std::int64_t global = std::max<std::int64_t>(1, space.global_batch);
    ParameterCounts params = count_parameters(m);
    DeviceRates rates = device_rates(*base.device, base.workload.precision, base.profile);
    // Micro-batch costs depend only on (tp, micro-batch, ep, recompute for the TP collectives): cache them.
    CostCache local_cache;
    CostCache& cache = space.cost_cache ? *space.cost_cache : local_cache;
    Candidate best, nearest;
    const bool transformer = m.is_transformer();
    const int node = static_cast<int>(std::min<long long>(1 << 20, scale_up_span(*base.device, base.system)));
    // Micro-batches to try: the one the user fixed, else powers of two up to the global batch.
    std::vector<std::int64_t> micro_batches;
    if (space.micro_batch) micro_batches.push_back(*space.micro_batch);
    else
      for (std::int64_t mb = 1; mb <= global; mb *= 2) micro_batches.push_back(mb);
    // Context-parallel degrees worth trying: chunks shorter than kMinContextChunk tokens leave each ring step's
    // attention too short to hide the next chunk's transfer and the GEMMs too short to run well (Megatron's
    // guidance is context parallelism from 8K tokens); a degree the user gives is always tried.
    const Workload& w = base.workload;
    auto cp_candidate = [&](int cp) {
      if (space.cp) return cp == *space.cp;
      if (cp == 1) return true;
      return transformer && w.stack.context_parallel && w.attention == Attention::kFlash && w.seq % (2 * cp) == 0 &&
             w.seq / cp >= kMinContextChunk;
    };
    // One input whose plan each candidate overwrites field by field (every field the loops vary is set below), and
    // reused lists: the search allocates nothing per layout.
    EstimateInput in = base;
    std::vector<int> vps, recompute_layers;
    for (int tp : divisors(n)) {
      // A stack that cannot build tensor (or pipeline) parallel training layouts searches without them.
      const bool training = w.task != Task::kInfer;
      if (space.tp ? tp != *space.tp : (tp > node || (training && tp > 1 && !w.stack.tensor_parallel))) continue;
      if (transformer ? m.attention_heads % tp != 0 : tp > 1) continue;
      for (int cp : divisors(n / tp)) {
      if (!cp_candidate(cp)) continue;
      for (int pp : divisors(n / (tp * cp))) {
        if (space.pp ? pp != *space.pp : (training && pp > 1 && !w.stack.pipeline_parallel)) continue;
        if (transformer ? pp > m.total_layers() : pp > 1) continue;
        const int dp = n / (tp * cp * pp);
        if (space.dp && dp != *space.dp) continue;
        std::vector<int> eps{1};
        if (m.moe && !space.ep)
          for (int e : divisors(dp))
            if (e > 1 && m.moe->experts % e == 0) eps.push_back(e);
        // A degree the user gives is kept only where it divides this layout's data-parallel ranks (the experts it
        // divides: checked with the input).
        if (space.ep) {
          eps.clear();
          if (*space.ep == 1 || (m.moe && m.moe->experts % *space.ep == 0 && dp % *space.ep == 0)) eps.push_back(*space.ep);
        }
        for (int ep : eps) {
          for (int zero = 0; zero <= 3; ++zero) {
            if (space.zero ? zero != *space.zero : (dp * cp == 1 && zero > 0)) continue;
            if (space.shard_group && zero == 0) continue;
            // Shard sizes: the user's; else all of dp, and every smaller group of ranks inside a node that divides
            // them (HYBRID_SHARD / hpZ: a smaller group gathers over fewer, and on a PCIe or multi-node system faster,
            // links, for more memory per device).
            std::vector<int> shard_groups{0};
            // Data-parallel ranks are consecutive after the tensor-parallel ones (pipeline outermost: Plan).
            const int node_ranks = std::max(1, node / tp);
            const int replica_ranks = dp * cp;
            if (space.shard_group) shard_groups = {*space.shard_group};
            else if (zero >= 1)
              for (int g : divisors(replica_ranks))
                if (g > 1 && g < replica_ranks && g <= node_ranks) shard_groups.push_back(g);
            for (int shard_group : shard_groups) {
              if (shard_group > 0 && replica_ranks % shard_group != 0) continue;
              for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
                if (space.recompute && rc != *space.recompute) continue;
                if (!transformer && rc != Recompute::kNone) continue;
                // Memory grows with the micro-batch: once one does not fit, no larger one will (pruning). Except under
                // accumulation with deferred gradient sync (Stack::defer_grad_sync, ZeRO-2/3): at a fixed global batch
                // the micro-batch that needs no accumulation holds no unsharded gradients, and may fit where smaller
                // ones do not; after a miss only that one is still tried.
                const bool deferral = zero >= 2 && space.global_batch_fixed && !space.grad_accum && !space.micro_batch &&
                                      base.workload.stack.defer_grad_sync;
                bool only_unaccumulated = false;
                // That micro-batch, global / dp, need not be a power of two: it is tried whatever it is.
                std::vector<std::int64_t> mbs = micro_batches;
                if (deferral && global % dp == 0 && std::find(mbs.begin(), mbs.end(), global / dp) == mbs.end())
                  mbs.insert(std::upper_bound(mbs.begin(), mbs.end(), global / dp), global / dp);
                for (std::int64_t mb : mbs) {
                  std::int64_t accum = space.grad_accum.value_or(1);
                  if (space.global_batch_fixed) {
                    if (global % (mb * dp) != 0) continue;
                    if (space.grad_accum ? mb * accum * dp != global : false) continue;
                    accum = global / (mb * dp);
                  }
                  if (only_unaccumulated && accum != 1) continue;
                  // Pipeline interleaving depths: the user's; else, with a stack that interleaves, every vp
                  // dividing the stage's layers, when the micro-batches fill whole rounds of pp (Megatron's rule).
                  vps.assign(1, space.vp.value_or(base.plan.vp));
                  if (transformer && !interleaving_fits(m, pp, vps.front())) continue;  // a --vp this pipeline cannot hold
                  if (!space.vp && transformer && pp > 1 && base.workload.stack.interleaved_pipeline && accum % pp == 0) {
                    // A stage of ceil(layers / pp) layers (uneven stages shed a layer at the ends, as Llama 3's did),
                    // each chunk at least one layer (interleaving_fits, as validate_plan checks).
                    vps.clear();
                    for (int vp : divisors(static_cast<int>((m.total_layers() + pp - 1) / pp)))
                      if (interleaving_fits(m, pp, vp)) vps.push_back(vp);
                  }
                  in.plan.tp = tp;
                  in.plan.cp = cp;
                  in.plan.pp = pp;
                  in.plan.dp = dp;
                  in.plan.ep = ep;
                  in.plan.zero = zero;
                  in.plan.shard_group = shard_group;
                  in.plan.recompute = rc;
                  in.plan.micro_batch = mb;
                  in.plan.grad_accum = accum;
                  // Full recomputation of only some layers per stage, when recomputation is left to the search and
                  // the stack can (a given --recompute full means every layer): fewer recomputed layers are faster and
                  // hold more memory, so the first count that fits is the one to time (all layers, 0, comes last: the
                  // least memory, kept as the nearest miss when nothing fits).
                  recompute_layers.assign(1, space.recompute_layers.value_or(0));
                  if (rc == Recompute::kFull && !space.recompute && !space.recompute_layers &&
                      base.workload.stack.partial_recompute) {
                    recompute_layers.clear();
                    for (int r = 1; r < (m.total_layers() + pp - 1) / pp; ++r) recompute_layers.push_back(r);
                    recompute_layers.push_back(0);
                  }
                  // vp 1 holds the least activation memory (estimators/memory.cpp); deeper ones are all tried.
                  bool smallest_fits = true;
                  for (int vp : vps) {
                    in.plan.vp = vp;
                    bool some_fits = false;
                    for (int r : recompute_layers) {
                      in.plan.recompute_layers = r;
                      ++result.layouts_evaluated;
                      Candidate c;
                      c.plan = in.plan;
                      MemoryBreakdown mem = estimate_memory(in, params);
                      mem.page_out(base.system.usable_bytes(base.device->plan_memory_bytes()));
                      c.memory = mem.total();
                      bool fits = c.memory <= base.system.usable_bytes(base.device->plan_memory_bytes());
                      if (!fits) {
                        if (c.memory < nearest.memory) nearest = c;
                        continue;  // only layouts that fit are timed (the nearest miss is estimated at the end)
                      }
                      some_fits = true;
                      // The micro-batch cost (cached above) does not depend on vp or on how many layers recompute.
                      auto key = std::tuple(tp, cp, mb, ep);
                      auto it = cache.find(key);
                      if (it == cache.end()) it = cache.emplace(key, micro_batch_cost(in, rates)).first;
                      // Time per sequence: the same order as step time when the global batch is fixed, and a fair
                      // comparison when it follows from the layout (micro-batch and accumulation fixed, dp free).
                      c.step = training_time(in, params, it->second, mem.paged_out_bytes).step_seconds /
                               static_cast<double>(in.plan.global_batch());
                      ++result.layouts_feasible;
                      if (better(c, best)) best = c;
                      break;
                    }
                    if (!some_fits && vp == vps.front()) smallest_fits = false;
                  }
                  if (!smallest_fits && space.prune) {
                    if (!deferral || accum == 1) break;
                    only_unaccumulated = true;
                  }
                }
              }
            }
          }
        }
      }
      }
    }
    result.found = std::isfinite(best.step);
    if (result.found || std::isfinite(nearest.memory)) {
      in.plan = result.found ? best.plan : nearest.plan;
      result.best = in.plan;
      result.estimate = estimate(in);
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace hwplan
