// The pruned layout search finds the same best layout as an exhaustive search over the same space.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/assumptions.hpp"
#include "estimators/estimate.hpp"
#include "estimators/params.hpp"
#include "estimators/search.hpp"
#include "estimators/training.hpp"
#include "core/error.hpp"
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

namespace {
Estimate zero3(int count, int shard_group, double network_gbps, std::int64_t micro_batch = 2) {
  static Model m;
  m = test::registry().model("llama-2-13b");
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device("a100-80gb-sxm");
  in.system.count = count;
  in.system.network_bytes_per_s = network_gbps * 1e9 / 8;
  in.workload.seq = 4096;
  in.plan.dp = count;
  in.plan.zero = 3;
  in.plan.shard_group = shard_group;
  in.plan.micro_batch = micro_batch;
  in.plan.grad_accum = 2;
  return estimate(in);
}
}  // namespace

TEST_CASE("ZeRO-3 traffic shares one link: what the compute window cannot hide is exposed") {
  // On a slow network the gathers and reduce-scatters of every micro-batch take longer than its compute: the
  // step can be no shorter than the link's busy time.
  Estimate slow = zero3(64, 0, 25);
  CHECK(slow.train.dp_comm_seconds > slow.train.forward_seconds + slow.train.backward_seconds);
  CHECK(slow.train.step_seconds >= slow.train.dp_comm_seconds);
  // A faster network hides more; overlapped collectives still slow the compute they share the SMs with.
  Estimate fast = zero3(64, 0, 400);
  CHECK(fast.train.step_seconds < slow.train.step_seconds);
  CHECK(fast.train.dp_comm_exposed_seconds < fast.train.dp_comm_seconds);
  CHECK(fast.train.dp_interference_seconds > 0);
  CHECK(fast.train.dp_interference_seconds < 0.25 * fast.train.dp_comm_seconds);
}

TEST_CASE("hybrid sharding keeps ZeRO traffic inside the node and holds a larger shard") {
  Estimate full = zero3(64, 0, 25);
  Estimate hybrid = zero3(64, 8, 25);
  CHECK(hybrid.plan.zero_ranks() == 8);
  CHECK(full.plan.zero_ranks() == 64);
  // Shards of 8 instead of 64: more weight, gradient and optimizer memory per device...
  CHECK(hybrid.memory.optimizer == ::hwplan::test::approx(full.memory.optimizer * 8).epsilon(1e-9));
  CHECK(hybrid.memory.total() > full.memory.total());
  // ...and only the gradient shard's all-reduce crosses the slow network.
  CHECK(hybrid.train.dp_comm_seconds < full.train.dp_comm_seconds);
  CHECK(hybrid.train.step_seconds < full.train.step_seconds);
  // A shard size that does not divide dp, or sharding without ZeRO, is an input error.
  Model m = test::registry().model("llama-2-13b");
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device("a100-80gb-sxm");
  in.system.count = 64;
  in.plan.dp = 64;
  in.plan.zero = 3;
  in.plan.shard_group = 6;
  CHECK_THROWS_AS(validate_plan(in), InputError);
  in.plan.shard_group = 8;
  in.plan.zero = 0;
  CHECK_THROWS_AS(validate_plan(in), InputError);
}

TEST_CASE("the search tries node-sized shards when data parallelism spans nodes") {
  Model m = test::registry().model("llama-2-13b");
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device("a100-80gb-sxm");
  in.system.count = 64;
  in.system.network_bytes_per_s = 25e9 / 8;
  in.workload.seq = 4096;
  SearchSpace space;
  space.global_batch = 64;
  space.zero = 3;
  space.tp = 1;
  space.pp = 1;
  SearchResult r = search_layouts(in, space);
  REQUIRE(r.found);
  CHECK(r.best.zero_ranks() == 8);
  space.shard_group = 64;
  SearchResult full = search_layouts(in, space);
  REQUIRE(full.found);
  CHECK(full.best.zero_ranks() == 64);
  CHECK(r.estimate.train.step_seconds <= full.estimate.train.step_seconds);
}

TEST_CASE("training goodput: interruptions and checkpoints grow with the device count") {
  // One device barely notices; Llama 3's 16,384 GPUs lose about a tenth (the paper: over 90% effective after its
  // own automation), so the defaults land near 0.9 there.
  Goodput one = training_goodput(1, 30 * 86400.0);
  Goodput thousand = training_goodput(1024, 30 * 86400.0);
  Goodput llama3 = training_goodput(16384, 54 * 86400.0);
  CHECK(one.fraction > 0.999);
  CHECK(thousand.fraction < one.fraction);
  CHECK(llama3.fraction < thousand.fraction);
  CHECK(llama3.fraction > 0.85);
  CHECK(llama3.fraction < 0.95);
  // 419 unexpected interruptions in 54 days on 16,384 GPUs is what the rate comes from.
  CHECK(llama3.expected_interruptions == ::hwplan::test::approx(419).epsilon(0.15));
  CHECK(llama3.checkpoint_interval_seconds < thousand.checkpoint_interval_seconds);
}

TEST_CASE("estimate --tokens and recommend give the same wall-clock time, interruptions included") {
  auto e = nlohmann::json::parse(test::run_hwplan("estimate --model llama-2-7b --device h100-sxm --count 64 --tokens 100B "
                                                  "--global-batch 512 --format json").out);
  auto r = nlohmann::json::parse(test::run_hwplan("recommend --model llama-2-7b --task train --devices h100-sxm --count 64 "
                                                  "--tokens 100B --global-batch 512 --format json").out);
  const double total = e["time"]["total_seconds"].get<double>();
  CHECK(total > e["time"]["training_seconds"].get<double>());
  CHECK(e["time"]["goodput"]["fraction"].get<double>() < 1.0);
  REQUIRE(r["candidates"].size() >= 1);
  CHECK(r["candidates"][0]["total_seconds"].get<double>() == ::hwplan::test::approx(total).epsilon(1e-6));
}

TEST_CASE("the network a plan spans nodes over comes from the device's reference system unless given") {
  auto run = [](const std::string& device, const std::string& extra) {
    auto r = test::run_hwplan("estimate --model llama-2-7b --device " + device +
                              " --count 16 --tp 1 --pp 1 --zero 3 --batch 2 --seq 2048 --grad-accum 1 --format json" + extra);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  };
  auto has_network_warning = [](const nlohmann::json& j) {
    for (const auto& w : j["warnings"])
      if (w.get<std::string>().find("network assumed") != std::string::npos) return true;
    return false;
  };
  // DGX A100: 8 x 200 Gb/s HDR for 8 GPUs; DGX H100: 8 x 400 Gb/s NDR.
  nlohmann::json a100 = run("a100-80gb-sxm", ""), h100 = run("h100-sxm", "");
  CHECK(a100["system"]["network_gbps_per_device"].get<double>() == ::hwplan::test::approx(200));
  CHECK(h100["system"]["network_gbps_per_device"].get<double>() == ::hwplan::test::approx(400));
  CHECK(a100["system"]["network_assumed"].get<std::string>().find("DGX A100") != std::string::npos);
  CHECK(has_network_warning(a100));
  // Consumer cards get a desktop's Ethernet, far below a DGX's InfiniBand: ZeRO-3 across two boxes slows down.
  nlohmann::json rtx = run("rtx-4090", "");
  CHECK(rtx["system"]["network_gbps_per_device"].get<double>() < 50);
  // Given explicitly: used as given, no assumption named; a faster network is never slower.
  nlohmann::json given = run("a100-80gb-sxm", " --network-gbps 400");
  CHECK(given["system"]["network_assumed"].is_null());
  CHECK_FALSE(has_network_warning(given));
  CHECK(given["time"]["step_seconds"].get<double>() <= a100["time"]["step_seconds"].get<double>());
  // One node: nothing crosses the network, nothing to warn about.
  auto one = test::run_hwplan("estimate --model llama-2-7b --device a100-80gb-sxm --count 8 --tp 1 --pp 1 --zero 3 --batch 2 "
                              "--seq 2048 --grad-accum 1 --format json");
  REQUIRE(one.exit_code == 0);
  CHECK_FALSE(has_network_warning(nlohmann::json::parse(one.out)));
}

TEST_CASE("pipeline interleaving is searched for stacks that interleave, and holds more activations") {
  auto plan_of = [](const std::string& flags) {
    auto r = test::run_hwplan("estimate --model gpt3-175b --device a100-80gb-sxm --count 1024 --global-batch 1536 "
                              "--tp 8 --pp 8 --recompute full --format json " + flags);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  };
  auto megatron = plan_of("--framework megatron");
  auto fixed = plan_of("--framework megatron --vp 1");
  auto fsdp = plan_of("--framework fsdp");
  CHECK(megatron["plan"]["vp"].get<int>() > 1);
  CHECK(fixed["plan"]["vp"] == 1);
  CHECK(fsdp["plan"]["vp"] == 1);
  // A shorter bubble: the searched interleaving is faster than none.
  CHECK(megatron["time"]["step_seconds"].get<double>() < fixed["time"]["step_seconds"].get<double>());

  // Pruning stays exact with interleaving in the space.
  static Model m;
  m = test::registry().model("llama-2-13b");
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device("h100-sxm");
  in.system.count = 16;
  in.workload.seq = 4096;
  in.workload.stack.interleaved_pipeline = true;
  SearchSpace space;
  space.global_batch = 64;
  space.pp = 4;
  SearchResult pruned = search_layouts(in, space);
  space.prune = false;
  SearchResult full = search_layouts(in, space);
  REQUIRE(pruned.found);
  CHECK(pruned.best.vp == full.best.vp);
  CHECK(pruned.estimate.train.step_seconds == full.estimate.train.step_seconds);

  // Interleaved 1F1B: the first stage holds pp (1 + (pp - 1) / (pp vp)) micro-batches of activations (the model
  // without its vocabulary, so that the logits on the last stage do not enter the ratio).
  static Model layers_only;
  layers_only = m;
  layers_only.vocab_size = 0;
  in.model = &layers_only;
  in.plan.tp = 1;
  in.plan.pp = 4;
  in.plan.dp = 4;
  in.plan.micro_batch = 1;
  in.plan.grad_accum = 16;
  ParameterCounts params = count_parameters(layers_only);
  const double plain = estimate_memory(in, params).activations;
  in.plan.vp = 2;
  const double interleaved = estimate_memory(in, params).activations;
  CHECK(interleaved == ::hwplan::test::approx(plain * (1 + 3.0 / 8)));
}

TEST_CASE("a searched interleaving is a plan estimate accepts when it is given back") {
  // Llama 3.1 405B: 126 layers on 16 stages; a chunk per device of at least one layer (16 x vp <= 126).
  auto r = test::run_hwplan("estimate --model llama-3.1-405b --device h100-sxm --count 8192 --global-batch 2048 --seq 8192 "
                            "--tp 8 --pp 16 --zero 2 --framework megatron --format json");
  REQUIRE(r.exit_code == 0);
  auto p = nlohmann::json::parse(r.out)["plan"];
  CHECK(16 * p["vp"].get<int>() <= 126);
  auto again = test::run_hwplan(fmt::format(
      "estimate --model llama-3.1-405b --device h100-sxm --count 8192 --global-batch 2048 --seq 8192 --tp 8 --pp 16 "
      "--dp {} --zero 2 --framework megatron --vp {} --batch {} --recompute {} --format json",
      p["dp"].get<int>(), p["vp"].get<int>(), p["micro_batch"].get<long long>(), p["recompute"].get<std::string>()));
  CHECK(again.exit_code == 0);
}

TEST_CASE("a fixed pipeline layout without interleaving says that the stack could interleave") {
  const std::string base = "estimate --model gpt3-175b --device a100-80gb-sxm --count 1024 --global-batch 1536 --tp 8 --pp 8 "
                           "--dp 16 --recompute full ";
  auto megatron = test::run_hwplan(base + "--framework megatron");
  REQUIRE(megatron.exit_code == 0);
  CHECK(megatron.out.find("runs without interleaving (vp 1) though megatron can interleave") != std::string::npos);
  auto interleaved = test::run_hwplan(base + "--framework megatron --vp 4");
  REQUIRE(interleaved.exit_code == 0);
  CHECK(interleaved.out.find("without interleaving") == std::string::npos);
  auto fsdp = test::run_hwplan(base + "--framework fsdp");
  REQUIRE(fsdp.exit_code == 0);
  CHECK(fsdp.out.find("without interleaving") == std::string::npos);
}

TEST_CASE("a synchronous job steps at the pace of its slowest device") {
  // One device waits for nobody; more devices bring a slower slowest one, never beyond half the speed spread.
  CHECK(slowest_device_slowdown(1) == 0);
  const double spread = assumptions().device_speed_spread;
  CHECK(slowest_device_slowdown(8) == ::hwplan::test::approx(0.5 * spread * 7 / 9).scale(0));
  double previous = 0;
  for (long long n : {2LL, 8LL, 64LL, 1024LL, 16384LL}) {
    const double s = slowest_device_slowdown(n);
    CHECK(s > previous);
    CHECK(s < 0.5 * spread);
    previous = s;
  }
  // In an estimate: the devices' own work (forward, backward, optimizer) times that slowdown, inside the step.
  Estimate e = zero3(64, 8, 400);
  const TrainingTime& t = e.train;
  CHECK(t.slowest_device_seconds ==
        ::hwplan::test::approx(slowest_device_slowdown(64) * (t.forward_seconds + t.backward_seconds + t.optimizer_seconds)).epsilon(1e-9));
  const double rest = t.forward_seconds + t.backward_seconds + t.optimizer_seconds + t.dp_comm_exposed_seconds +
                      t.dp_interference_seconds + t.bubble_seconds + t.tp_comm_seconds + t.cp_comm_seconds + t.pp_comm_seconds;
  CHECK(t.step_seconds == ::hwplan::test::approx(rest + t.slowest_device_seconds).epsilon(1e-9));
  CHECK(zero3(1, 0, 400).train.slowest_device_seconds == 0);
}

TEST_CASE("the layout search is never slower than a shard group the user could name") {
  const std::string a = "estimate --model qwen2.5-7b --device rtx-4090 --count 8 --task qlora --seq 2048 --global-batch 64 "
                        "--format json";
  auto step = [&](const std::string& extra) {
    return nlohmann::json::parse(::hwplan::test::run_hwplan(a + extra).out)["time"]["step_seconds"].get<double>();
  };
  const double searched = step("");
  for (const char* group : {" --zero 3 --shard-group 2", " --zero 3 --shard-group 4", " --zero 3"})
    CHECK(searched <= step(group) * (1 + 1e-9));
}

TEST_CASE("--grad-accum with --global-batch is kept, the micro-batch following, on a fixed layout as in a search") {
  auto plan = [](const std::string& extra) {
    return nlohmann::json::parse(::hwplan::test::run_hwplan("estimate --model llama-3.2-1b --device h100-sxm --task train "
                                                            "--seq 1024 --format json " + extra).out)["plan"];
  };
  const auto one = plan("--global-batch 16 --grad-accum 4");
  CHECK(one["micro_batch"] == 4);
  CHECK(one["grad_accum"] == 4);
  const auto fixed = plan("--count 2 --tp 1 --pp 1 --dp 2 --global-batch 64 --grad-accum 2");
  const auto searched = plan("--count 2 --global-batch 64 --grad-accum 2");
  CHECK(fixed["micro_batch"] == searched["micro_batch"]);
  CHECK(fixed["grad_accum"] == 2);
  CHECK(::hwplan::test::run_hwplan("estimate --model llama-3.2-1b --device h100-sxm --task train --global-batch 15 --grad-accum 4").exit_code == 2);
}
