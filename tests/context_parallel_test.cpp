// Context parallelism (estimators/operators.cpp, training.cpp, memory.cpp, search.cpp): each sequence split over
// cp ranks, attention's keys and values passed around a ring, gradients reduced over dp x cp.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "estimators/estimate.hpp"
#include "estimators/operators.hpp"
#include "estimators/search.hpp"
#include "estimators/stack.hpp"
#include "test_util.hpp"

using namespace hwplan;

namespace {

EstimateInput training_input(const Model& m, const Device& d, int count, std::int64_t seq, Stack stack) {
  EstimateInput in;
  in.model = &m;
  in.device = &d;
  in.workload.task = Task::kTrain;
  in.workload.precision = Precision::kBf16;
  in.workload.seq = seq;
  in.workload.attention = Attention::kFlash;
  in.workload.stack = std::move(stack);
  in.system.count = count;
  in.system.devices_per_node = 8;
  in.system.network_bytes_per_s = 400e9 / 8;
  in.plan.dp = count;
  in.plan.zero = 1;
  in.plan.micro_batch = 1;
  in.plan.grad_accum = 8;
  return in;
}

double op_flops(const std::vector<OpRecord>& ops, const char* name) {
  for (const OpRecord& op : ops)
    if (op.name == std::string(name)) return op.forward_flops;
  return 0;
}

}  // namespace

TEST_CASE("context parallelism: a rank computes 1/cp of the tokens and 1/cp of the causal attention") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-8b");
  const Device& d = reg.device("h100-sxm");
  Stack megatron = framework_preset(Framework::kMegatron);
  EstimateInput one = training_input(m, d, 8, 16384, megatron);
  EstimateInput two = one;
  two.plan.cp = 2;
  two.plan.dp = 4;
  DeviceRates rates = device_rates(d, Precision::kBf16);
  std::vector<OpRecord> ops1, ops2;
  layer_cost(training_shape(one), rates, &ops1);
  layer_cost(training_shape(two), rates, &ops2);
  CHECK(op_flops(ops2, "qkv-proj") == ::hwplan::test::approx(op_flops(ops1, "qkv-proj") / 2));
  CHECK(op_flops(ops2, "flash-attention") == ::hwplan::test::approx(op_flops(ops1, "flash-attention") / 2));
  // Activations per rank halve (the logits of the rank's tokens too); weights and optimizer state do not grow.
  Estimate e1 = estimate(one), e2 = estimate(two);
  CHECK(e2.memory.activations < 0.55 * e1.memory.activations);
  CHECK(e2.memory.weights == ::hwplan::test::approx(e1.memory.weights));
  CHECK(e2.memory.optimizer == ::hwplan::test::approx(e1.memory.optimizer));  // sharded over dp x cp = 8 either way
  // Over NVLink the ring's transfers hide behind attention at 8K-token chunks: throughput is within a few % (the
  // shorter GEMMs and the extra attention kernels cost a little).
  CHECK(e2.train.cp_comm_seconds == ::hwplan::test::approx(0.0));
  CHECK(e2.train.tokens_per_second < e1.train.tokens_per_second * 1.03);
  CHECK(e2.train.tokens_per_second > e1.train.tokens_per_second * 0.90);
  // Half the sequences per step (4 replicas instead of 8, the same accumulation): the global batch counts
  // sequences, which context parallelism does not multiply.
  CHECK(e2.train.tokens_per_step * 2 == ::hwplan::test::approx(e1.train.tokens_per_step));
}

TEST_CASE("context parallelism: gradients are reduced over the context-parallel ranks too") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-8b");
  const Device& d = reg.device("h100-sxm");
  EstimateInput in = training_input(m, d, 8, 16384, framework_preset(Framework::kMegatron));
  in.plan.cp = 8;
  in.plan.dp = 1;
  Estimate e = estimate(in);
  CHECK(e.train.dp_comm_seconds > 0);
  // ZeRO-1 shards the optimizer state over the 8 ranks that hold the same weights.
  EstimateInput replicated = in;
  replicated.plan.zero = 0;
  CHECK(e.memory.optimizer == ::hwplan::test::approx(estimate(replicated).memory.optimizer / 8));
}

TEST_CASE("context parallelism: ring transfers are exposed when a chunk's attention is shorter than its transfer") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-8b");
  const Device& d = reg.device("rtx-4090");  // no NVLink: the ring runs over PCIe
  EstimateInput in = training_input(m, d, 2, 2048, framework_preset(Framework::kTorchtitan));
  in.plan.cp = 2;
  in.plan.dp = 1;
  in.plan.recompute = Recompute::kFull;
  Estimate e = estimate(in);
  CHECK(e.train.cp_comm_seconds > 0);
  CHECK(e.train.communication_seconds() >= e.train.cp_comm_seconds);
}

TEST_CASE("context parallelism: plans the stacks and kernels cannot run are rejected with the reason") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-8b");
  const Device& d = reg.device("h100-sxm");
  EstimateInput in = training_input(m, d, 8, 8192, framework_preset(Framework::kFsdp));
  in.plan.cp = 2;
  in.plan.dp = 4;
  CHECK_THROWS_WITH_AS(validate_plan(in), doctest::Contains("no context parallelism"), InputError);
  in.workload.stack = framework_preset(Framework::kMegatron);
  validate_plan(in);
  in.workload.attention = Attention::kEager;
  CHECK_THROWS_WITH_AS(validate_plan(in), doctest::Contains("flash attention"), InputError);
  in.workload.attention = Attention::kFlash;
  in.workload.seq = 8190;
  CHECK_THROWS_WITH_AS(validate_plan(in), doctest::Contains("equal chunks"), InputError);
  in.workload.seq = 8192;
  in.plan.dp = 8;
  CHECK_THROWS_WITH_AS(validate_plan(in), doctest::Contains("tp x cp x pp x dp"), InputError);
}

TEST_CASE("the layout search uses context parallelism when a sequence does not fit otherwise, and not at short ones") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-8b");
  const Device& d = reg.device("h100-sxm");
  EstimateInput in = training_input(m, d, 8, 131072, framework_preset(Framework::kMegatron));
  SearchSpace space;
  space.global_batch = 8;
  SearchResult long_seq = search_layouts(in, space);
  REQUIRE(long_seq.found);
  CHECK(long_seq.best.cp > 1);
  CHECK(long_seq.best.count() == 8);
  // The same search without context parallelism finds nothing that fits (or something slower).
  space.cp = 1;
  SearchResult without = search_layouts(in, space);
  if (without.found) CHECK(without.estimate.train.step_seconds >= long_seq.estimate.train.step_seconds * 0.995);
  // At 2,048 tokens chunks would be 1,024 tokens or fewer: a stack without context parallelism never gets cp.
  EstimateInput short_seq = training_input(m, d, 8, 2048, framework_preset(Framework::kFsdp));
  SearchSpace free_space;
  free_space.global_batch = 64;
  SearchResult s = search_layouts(short_seq, free_space);
  REQUIRE(s.found);
  CHECK(s.best.cp == 1);
}

TEST_CASE("fit offers context parallelism for a long sequence on several devices, switching to a stack that has it") {
  auto r = test::run_hwplan("fit --model llama-3-8b --device h100-sxm --count 8 --seq 131072 --global-batch 8 --format json");
  REQUIRE(r.exit_code == 0);
  const nlohmann::json fit = nlohmann::json::parse(r.out);
  bool offered = false;
  for (const auto& c : fit["changes"]) {
    const std::string flags = c["flags"].get<std::string>();
    if (flags.find("--cp 8") == std::string::npos) continue;
    offered = true;
    CHECK(flags.find("--framework torchtitan") != std::string::npos);  // the default fsdp stack has none
    CHECK(c["fits"].get<bool>());
  }
  CHECK(offered);
  // A stack that has it is kept; one device has nothing to split over.
  auto megatron = test::run_hwplan("fit --model llama-3-8b --device h100-sxm --count 8 --seq 131072 --global-batch 8 "
                                   "--framework megatron --format json");
  REQUIRE(megatron.exit_code == 0);
  const nlohmann::json megatron_fit = nlohmann::json::parse(megatron.out);  // kept alive: the loop walks into it
  for (const auto& c : megatron_fit["changes"])
    CHECK(c["flags"].get<std::string>().find("--framework torchtitan") == std::string::npos);
  auto single = test::run_hwplan("fit --model llama-3-8b --device h100-sxm --seq 16384 --format json");
  REQUIRE(single.exit_code == 0);
  const nlohmann::json single_fit = nlohmann::json::parse(single.out);
  for (const auto& c : single_fit["changes"])
    CHECK(c["flags"].get<std::string>().find("--cp") == std::string::npos);
}
