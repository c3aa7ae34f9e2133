// Full recomputation of some layers only (estimators/memory.cpp, training.cpp, search.cpp): Megatron's block
// method and torchtitan's every-Nth-layer checkpointing, between no recomputation and recomputing every layer.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "estimators/estimate.hpp"
#include "estimators/search.hpp"
#include "estimators/stack.hpp"
#include "test_util.hpp"

using namespace hwplan;

namespace {

EstimateInput input(const Model& m, const Device& d, Stack stack) {
  EstimateInput in;
  in.model = &m;
  in.device = &d;
  in.workload.task = Task::kTrain;
  in.workload.precision = Precision::kBf16;
  in.workload.seq = 8192;
  in.workload.attention = Attention::kFlash;
  in.workload.stack = std::move(stack);
  in.system.count = 64;
  in.system.devices_per_node = 8;
  in.system.network_bytes_per_s = 400e9 / 8;
  in.plan.tp = 8;
  in.plan.pp = 8;
  in.plan.dp = 1;
  in.plan.zero = 1;
  in.plan.micro_batch = 1;
  in.plan.grad_accum = 16;
  return in;
}

}  // namespace

TEST_CASE("recomputing some layers sits between none and all, in memory and in time") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-70b");  // 80 layers: 10 per stage at pp 8
  const Device& d = reg.device("h100-sxm");
  EstimateInput in = input(m, d, framework_preset(Framework::kMegatron));
  in.plan.recompute = Recompute::kNone;
  Estimate none = estimate(in);
  in.plan.recompute = Recompute::kFull;
  Estimate all = estimate(in);
  double previous_memory = none.memory.activations, previous_step = none.train.step_seconds;
  for (int r = 1; r <= 10; ++r) {
    CAPTURE(r);
    in.plan.recompute_layers = r;
    Estimate e = estimate(in);
    CHECK(e.memory.activations < previous_memory);
    CHECK(e.train.step_seconds > previous_step);
    // The recomputed forward is r / 10 of the stage's.
    CHECK(e.train.recompute_seconds == ::hwplan::test::approx(all.train.recompute_seconds * r / 10.0).epsilon(0.001).scale(0));
    previous_memory = e.memory.activations;
    previous_step = e.train.step_seconds;
  }
  // All ten layers of the stage is full recomputation.
  CHECK(previous_memory == ::hwplan::test::approx(all.memory.activations));
  CHECK(previous_step == ::hwplan::test::approx(all.train.step_seconds).scale(0));
}

TEST_CASE("the layout search recomputes the fewest layers that fit, and a given --recompute full means every layer") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3.1-405b");
  const Device& d = reg.device("h100-sxm");
  EstimateInput in = input(m, d, framework_preset(Framework::kMegatron));
  in.system.count = 16384;
  SearchSpace space;
  space.tp = 8;
  space.cp = 1;
  space.pp = 16;
  space.zero = 2;
  space.global_batch = 2048;
  SearchResult free = search_layouts(in, space);
  REQUIRE(free.found);
  const int stage = (m.total_layers() + 15) / 16;
  CHECK(free.best.recompute == Recompute::kFull);
  CHECK(free.best.recompute_layers > 0);
  CHECK(free.best.recompute_layers < stage);
  space.recompute = Recompute::kFull;
  SearchResult every = search_layouts(in, space);
  REQUIRE(every.found);
  CHECK(every.best.recompute_layers == 0);
  CHECK(every.estimate.train.step_seconds > free.estimate.train.step_seconds);
}

TEST_CASE("some-layer recomputation is refused where the stack or the plan cannot run it") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-70b");
  const Device& d = reg.device("h100-sxm");
  EstimateInput in = input(m, d, framework_preset(Framework::kHfTrainer));
  in.plan.recompute = Recompute::kFull;
  in.plan.recompute_layers = 4;
  CHECK_THROWS_WITH_AS(validate_plan(in), doctest::Contains("every layer or none"), InputError);
  in.workload.stack = framework_preset(Framework::kTorchtitan);
  validate_plan(in);
  in.plan.recompute_layers = 11;
  CHECK_THROWS_WITH_AS(validate_plan(in), doctest::Contains("more than the 10"), InputError);
  in.plan.recompute_layers = 4;
  in.plan.recompute = Recompute::kSelective;
  CHECK_THROWS_WITH_AS(validate_plan(in), doctest::Contains("--recompute full"), InputError);
}
