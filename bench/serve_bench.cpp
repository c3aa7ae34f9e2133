// Speed of the serving simulation (Google Benchmark). Run: bash bench/run.sh
#include <benchmark/benchmark.h>

#include "io/registry.hpp"
#include "recommend/query.hpp"
#include "recommend/front_end.hpp"
#include "serve/plan.hpp"

using namespace hwplan;

namespace {

const io::Registry& registry() {
  static io::Registry r;
  return r;
}

Query query(int tp) {
  WorkloadSpec s;
  s.model = "llama-3-8b";
  s.device = "h100-sxm";
  s.task = "infer";
  s.engine = "vllm";
  s.count = tp;
  s.tp = tp;
  s.pp = 1;
  s.dp = 1;
  s.batch = 1;
  Query q = resolve_query(registry(), s);
  q.input.model = &q.model;
  return q;
}

// 100,000 requests (1,000-token prompts, 200-token answers, Poisson at 15 requests/s: about 70% of one H100's
// saturated throughput for Llama 3 8B) through one replica.
void BM_Simulate100k(benchmark::State& state) {
  Query q = query(1);
  serve::EngineConfig e = serve::engine_config(Engine::kVllm, q.device->memory_bytes);
  serve::Replica r{&q.input, e, serve::kv_capacity(q.input, e, 1200), -1};
  serve::Traffic t;
  t.prompt.fixed = 1000;
  t.output.fixed = 200;
  t.requests = 100'000;
  long long steps = 0;
  for (auto _ : state) {
    serve::SimResult s = serve::simulate_replica(r, t, {false, 15.0});
    steps = s.steps;
    benchmark::DoNotOptimize(s.e2e.p95);
  }
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_Simulate100k)->Unit(benchmark::kMillisecond);

// hwplan serve's question for one device: tp 1, 2, 4 and 8 searched for the highest rate within p95 TTFT 1 s and
// p95 TPOT 50 ms (2,000-token prompts, 300-token answers, 2,000 requests per simulation), one thread.
void BM_CapacitySearchOneDevice(benchmark::State& state) {
  std::vector<Query> qs;
  for (int tp : {1, 2, 4, 8}) qs.push_back(query(tp));
  std::vector<const EstimateInput*> layouts;
  for (auto& q : qs) {
    q.input.model = &q.model;
    layouts.push_back(&q.input);
  }
  serve::ServeQuestion sq;
  sq.traffic.prompt.fixed = 2000;
  sq.traffic.output.fixed = 300;
  sq.traffic.requests = 2000;
  sq.targets.ttft_p95 = 1.0;
  sq.targets.tpot_p95 = 0.05;
  sq.load = {false, 20.0};
  sq.engine = serve::engine_config(Engine::kVllm, qs[0].device->memory_bytes);
  int sims = 0;
  for (auto _ : state) {
    serve::ServeAnswer a = serve::plan_serving(layouts, sq, 1);
    sims = 0;
    for (const auto& l : a.layouts) sims += l.capacity.simulations;
    benchmark::DoNotOptimize(a.meets_targets);
  }
  state.counters["simulations"] = sims;
}
BENCHMARK(BM_CapacitySearchOneDevice)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
