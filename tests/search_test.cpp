// The pruned layout search finds the same best layout as an exhaustive search over the same space.
#include <doctest/doctest.h>

#include "estimators/search.hpp"
#include "test_util.hpp"

using namespace hwplan;

namespace {
SearchResult run(const std::string& model_id, const std::string& device_id, int count, std::int64_t global, bool prune,
                 Task task = Task::kTrain) {
  static Model m;
  m = test::registry().model(model_id);
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device(device_id);
  in.system.count = count;
  in.workload.task = task;
  in.workload.seq = 2048;
  SearchSpace space;
  space.global_batch = global;
  space.prune = prune;
  return search_layouts(in, space);
}
}  // namespace

TEST_CASE("pruned search == exhaustive search") {
  struct Case {
    const char* model;
    const char* device;
    int count;
    std::int64_t global;
  };
  for (const Case& c : {Case{"llama-2-7b", "a100-80gb-sxm", 8, 64}, Case{"llama-2-13b", "rtx-4090", 4, 16},
                        Case{"gpt2-xl", "v100-32gb-sxm", 16, 128}, Case{"mixtral-8x7b", "h100-sxm", 16, 64}}) {
    CAPTURE(c.model);
    CAPTURE(c.device);
    SearchResult pruned = run(c.model, c.device, c.count, c.global, true);
    SearchResult full = run(c.model, c.device, c.count, c.global, false);
    CHECK(pruned.found == full.found);
    CHECK(pruned.layouts_evaluated <= full.layouts_evaluated);
    CHECK(pruned.layouts_feasible == full.layouts_feasible);
    if (pruned.found) {
      CHECK(pruned.best.tp == full.best.tp);
      CHECK(pruned.best.pp == full.best.pp);
      CHECK(pruned.best.dp == full.best.dp);
      CHECK(pruned.best.zero == full.best.zero);
      CHECK(pruned.best.recompute == full.best.recompute);
      CHECK(pruned.best.micro_batch == full.best.micro_batch);
      CHECK(pruned.estimate.train.step_seconds == full.estimate.train.step_seconds);
      CHECK(pruned.estimate.fits);
    }
  }
}

TEST_CASE("the best layout is no slower than any fixed layout that fits") {
  SearchResult r = run("llama-2-7b", "a100-80gb-sxm", 8, 64, true);
  REQUIRE(r.found);
  Model m = test::registry().model("llama-2-7b");
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device("a100-80gb-sxm");
  in.system.count = 8;
  in.workload.seq = 2048;
  in.plan.dp = 8;
  in.plan.zero = 1;
  in.plan.micro_batch = 1;
  in.plan.grad_accum = 8;
  Estimate e = estimate(in);
  if (e.fits) CHECK(r.estimate.train.step_seconds <= e.train.step_seconds);
}

TEST_CASE("a model too large for the cluster reports the nearest miss") {
  SearchResult r = run("llama-3.1-405b", "rtx-4060", 2, 2, true);
  CHECK_FALSE(r.found);
  CHECK(r.layouts_evaluated > 0);
  CHECK_FALSE(r.estimate.fits);
  CHECK(r.estimate.memory.total() > r.estimate.capacity_bytes);
}
