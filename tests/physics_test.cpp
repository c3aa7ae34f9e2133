// Unit tests of the physics parts that the end-to-end tolerances cover only in aggregate: collective times and the
// links they run on, the FLOPs of one transformer layer, the GEMM shape-efficiency model, the decode floor.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "core/assumptions.hpp"
#include "estimators/comm.hpp"
#include "estimators/efficiency.hpp"
#include "estimators/estimate.hpp"
#include "estimators/operators.hpp"
#include "estimators/stack.hpp"
#include "test_util.hpp"

using namespace hwplan;

TEST_CASE("collectives: ring all-reduce, all-gather, point-to-point and their latency terms") {
  GroupLink link;
  link.bytes_per_s = 100e9;
  link.latency_s = 5e-6;
  const double bytes = 1e9;
  // Ring all-reduce: each rank sends and receives 2 (n-1)/n of the buffer; 2 log2(n) latency steps.
  CHECK(allreduce_seconds(bytes, 8, link) == ::hwplan::test::approx(2.0 * 7 / 8 * bytes / 100e9 + 2 * 3 * 5e-6).scale(0));
  // All-gather / reduce-scatter move half of that.
  CHECK(allgather_seconds(bytes, 8, link) == ::hwplan::test::approx(7.0 / 8 * bytes / 100e9 + 3 * 5e-6).scale(0));
  CHECK(reduce_scatter_seconds(bytes, 8, link) == ::hwplan::test::approx(allgather_seconds(bytes, 8, link)).scale(0));
  CHECK(p2p_seconds(bytes, link) == ::hwplan::test::approx(bytes / 100e9 + 5e-6).scale(0));
  // Nothing to do alone or with nothing to send.
  CHECK(allreduce_seconds(bytes, 1, link) == 0);
  CHECK(allreduce_seconds(0, 8, link) == 0);
  CHECK(alltoall_seconds(bytes, 1, link) == 0);
  // More ranks never make a ring all-reduce of the same buffer faster.
  CHECK(allreduce_seconds(bytes, 64, link) > allreduce_seconds(bytes, 8, link));
}

TEST_CASE("a scale-up fabric beyond one board spans hosts: TPU ICI and NeuronLink groups do not take the network") {
  for (const auto& [device, span] : {std::pair{"tpu-v5p", 64}, std::pair{"trainium2", 16}}) {
    CAPTURE(device);
    const std::string work = std::string("estimate --model llama-3-70b --device ") + device +
                             " --count 16 --seq 4096 --global-batch 64 --format json";
    const auto plain = nlohmann::json::parse(test::run_hwplan(work).out);
    const auto given = nlohmann::json::parse(test::run_hwplan(work + " --devices-per-node " + std::to_string(span)).out);
    CHECK(plain["time"]["step_seconds"] == given["time"]["step_seconds"]);
    for (const auto& w : plain["warnings"]) CHECK(w.get<std::string>().find("network assumed") == std::string::npos);
  }
  // An 8-device board's fabric stays in its host: nodes of 4 H100s put a group of 8 on the network.
  System four;
  four.count = 8;
  four.devices_per_node = 4;
  CHECK(group_link(test::registry().device("h100-sxm"), four, 8, 1).crosses_nodes);
  CHECK_FALSE(group_link(test::registry().device("tpu-v5p"), four, 8, 1).crosses_nodes);
}

TEST_CASE("a pipeline's sends run at its slowest stage-to-stage hop") {
  // tp 4, pp 4 on nodes of 8: stages 0-1 share a node, but stage 1 (ranks 4-7) sends to stage 2 (ranks 8-11) over
  // the network. The pair view (ranks 0 and 4) missed it; the chain of stages as one group does not.
  const Device& h100 = test::registry().device("h100-sxm");
  System sys;
  sys.count = 16;
  sys.devices_per_node = 8;
  CHECK_FALSE(group_link(h100, sys, 2, 4).crosses_nodes);
  CHECK(group_link(h100, sys, 4, 4).crosses_nodes);
  auto step = [](const std::string& extra) {
    return nlohmann::json::parse(test::run_hwplan("estimate --model llama-2-13b --device h100-sxm --count 16 --tp 4 --pp 4 --dp 1 "
                                                  "--framework megatron --global-batch 64 --format json" + extra).out);
  };
  // Nodes of 16 keep every hop on NVLink-class links: the sends cost less than across two nodes of 8.
  CHECK(step("")["time"]["step_seconds"].get<double>() > step(" --devices-per-node 16")["time"]["step_seconds"].get<double>());
}

TEST_CASE("devices that share a package: a group inside one package uses its link, a group over packages the slowest hop") {
  // MI250X GCDs (catalog: 400 GB/s bidirectional between the two GCDs of an OAM, 100 GB/s per link between OAMs,
  // ROCm 'AMD Instinct MI250 microarchitecture' and the Frontier User Guide).
  const Device& gcd = test::registry().device("mi250x");
  System node;
  node.count = 8;
  node.devices_per_node = 8;
  const double eff = assumptions().fabric_efficiency;
  CHECK(group_link(gcd, node, 2, 1).bytes_per_s == ::hwplan::test::approx(200e9 * eff));  // siblings
  CHECK(group_link(gcd, node, 4, 1).bytes_per_s == ::hwplan::test::approx(50e9 * eff));   // two OAMs
  CHECK(group_link(gcd, node, 8, 1).bytes_per_s == ::hwplan::test::approx(50e9 * eff));
  CHECK(group_link(gcd, node, 2, 2).bytes_per_s == ::hwplan::test::approx(50e9 * eff));   // ranks 0 and 2: two OAMs
  // Tensor parallelism over OAMs costs more than on siblings: the step grows with it.
  auto step = [](int tp) {
    return test::run_hwplan("estimate --model llama-2-13b --device mi250x --count 8 --tp " + std::to_string(tp) +
                            " --task train --seq 4096 --global-batch 64 --format json");
  };
  const auto tp2 = nlohmann::json::parse(step(2).out), tp8 = nlohmann::json::parse(step(8).out);
  CHECK(tp8["time"]["communication_seconds"].get<double>() > 4 * tp2["time"]["communication_seconds"].get<double>());
}

TEST_CASE("a point-to-point fabric gives a group of fewer devices than its board only the links among them") {
  const double eff = assumptions().fabric_efficiency;
  // MI300X: seven Infinity Fabric links of 128 GB/s, one to each other GPU of the 8-GPU platform (catalog topology
  // mesh): a pair has one link, four GPUs three of each one's seven, all eight every link.
  const Device& mi300x = test::registry().device("mi300x");
  REQUIRE(mi300x.interconnect.mesh);
  System eight;
  eight.count = 8;
  eight.devices_per_node = 8;
  CHECK(group_link(mi300x, eight, 2, 1).bytes_per_s == ::hwplan::test::approx(896e9 / 7 / 2 * eff));
  CHECK(group_link(mi300x, eight, 4, 1).bytes_per_s == ::hwplan::test::approx(896e9 * 3 / 7 / 2 * eff));
  CHECK(group_link(mi300x, eight, 8, 1).bytes_per_s == ::hwplan::test::approx(896e9 / 2 * eff));
  // The links do not change with how the hosts are described: a pair shares one link on nodes of 2 or 4 too.
  for (int per_node : {2, 4}) {
    System small = eight;
    small.devices_per_node = per_node;
    CHECK(group_link(mi300x, small, 2, 1).bytes_per_s == ::hwplan::test::approx(896e9 / 7 / 2 * eff));
  }
  // A pipeline's send runs over the two neighbours' own link, however long the chain.
  CHECK(send_link(mi300x, eight, 8, 1).bytes_per_s == ::hwplan::test::approx(896e9 / 7 / 2 * eff));
  CHECK(send_link(mi300x, eight, 2, 1).bytes_per_s == ::hwplan::test::approx(896e9 / 7 / 2 * eff));
  // NVLink with NVSwitch on an 8-GPU board: every group gets each GPU's whole bandwidth.
  const Device& h200 = test::registry().device("h200-sxm");
  REQUIRE_FALSE(h200.interconnect.mesh);
  CHECK(group_link(h200, eight, 2, 1).bytes_per_s == ::hwplan::test::approx(900e9 / 2 * eff));
  // A 4-GPU node of NVSwitch-class parts is NVIDIA's switchless 4-GPU HGX board: each GPU links to the other three
  // directly with a third of its NVLinks, so a pair gets a third and four GPUs the whole.
  System four;
  four.count = 4;
  four.devices_per_node = 4;
  CHECK(group_link(h200, four, 2, 1).bytes_per_s == ::hwplan::test::approx(900e9 / 3 / 2 * eff));
  CHECK(group_link(h200, four, 4, 1).bytes_per_s == ::hwplan::test::approx(900e9 / 2 * eff));
  // A node of 2 is a slice of a switched board: the whole figure.
  System pair = four;
  pair.devices_per_node = 2;
  CHECK(group_link(h200, pair, 2, 1).bytes_per_s == ::hwplan::test::approx(900e9 / 2 * eff));
  // Pairs bridged by NVLink (H100 NVL, a 2-device fabric) are unchanged by the rule.
  const Device& nvl = test::registry().device("h100-nvl");
  System two;
  two.count = 2;
  two.devices_per_node = 8;
  CHECK(group_link(nvl, two, 2, 1).bytes_per_s == ::hwplan::test::approx(nvl.interconnect.bidirectional_bytes_per_s / 2 * eff));
}

TEST_CASE("collectives run on the link the group's placement implies") {
  const auto& reg = test::registry();
  const Device& h100 = reg.device("h100-sxm");
  System sys;
  sys.count = 64;
  sys.devices_per_node = 8;
  sys.network_bytes_per_s = 400e9 / 8;
  // Eight tensor-parallel ranks inside one HGX board: NVLink at 450 GB/s per direction, times the fabric efficiency.
  GroupLink tp8 = group_link(h100, sys, 8, 1);
  CHECK_FALSE(tp8.crosses_nodes);
  CHECK(tp8.bytes_per_s == ::hwplan::test::approx(450e9 * assumptions().fabric_efficiency));
  // Sixteen span two nodes, and a pipeline pair 8 ranks apart sits on two nodes: the NIC, times its efficiency.
  GroupLink tp16 = group_link(h100, sys, 16, 1);
  CHECK(tp16.crosses_nodes);
  CHECK(tp16.bytes_per_s == ::hwplan::test::approx(50e9 * assumptions().network_efficiency));
  CHECK(group_link(h100, sys, 2, 8).crosses_nodes);
  // Seven ranks fit in a node, but the second group (ranks 7-13) straddles two: the slowest group sets the pace.
  CHECK(group_link(h100, sys, 7, 1).crosses_nodes);
  // Cards without a scale-up fabric talk over PCIe.
  const Device& rtx = reg.device("rtx-4090");
  System desk;
  desk.count = 2;
  desk.devices_per_node = 2;
  GroupLink pcie = group_link(rtx, desk, 2, 1);
  CHECK(std::string(pcie.medium) == "pcie");
  CHECK(pcie.bytes_per_s == ::hwplan::test::approx(rtx.host_link.bytes_per_s() * assumptions().pcie_efficiency));
}

TEST_CASE("a group crosses nodes exactly when some complete group of its ranks sits on two nodes") {
  // Brute force over every group (ranks base + i x stride, groups tiling the ranks in Megatron's order) against
  // group_link's placement check, which takes shortcuts for the common layouts.
  const auto& reg = test::registry();
  const Device& h100 = reg.device("h100-sxm");
  for (int node : {4, 8}) {
    for (int count : {8, 16, 24, 64, 96}) {
      System sys;
      sys.count = count;
      sys.devices_per_node = node;
      for (int size = 1; size <= count; ++size) {
        for (int stride = 1; static_cast<long long>(size) * stride <= count; ++stride) {
          CAPTURE(node);
          CAPTURE(count);
          CAPTURE(size);
          CAPTURE(stride);
          bool straddles = false;
          const int span = size * stride;
          for (int start = 0; start < count && !straddles; start += span)
            for (int o = 0; o < stride; ++o) {
              const int first = start + o, last = first + (size - 1) * stride;
              if (last >= count) continue;
              if (first / node != last / node) straddles = true;
            }
          CHECK(group_link(h100, sys, size, stride).crosses_nodes == straddles);
        }
      }
    }
  }
}

TEST_CASE("one transformer layer's FLOPs: linear layers plus causal attention, forward and backward") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-2-7b");
  DeviceRates rates = device_rates(reg.device("a100-80gb-sxm"), Precision::kBf16);
  LayerShape s;
  s.model = &m;
  s.micro_batch = 2;
  s.seq = 4096;
  s.attention = Attention::kFlash;
  Stack fused = framework_preset(Framework::kMegatron);
  s.stack = &fused;
  Cost c = layer_cost(s, rates);
  const double h = 4096, f = 11008, tokens = 2 * 4096.0;
  // Q, K, V, O (multi-head: four h x h) and the SwiGLU MLP's three h x f matrices, 2 FLOPs per multiply-add.
  const double linear = 2 * tokens * (4 * h * h + 3 * h * f);
  // Causal attention: QK^T and PV, 2 x 2 b s^2 h, half of the scores computed.
  const double attention = 2.0 * 2 * 2 * 4096.0 * 4096.0 * h * 0.5;
  CHECK(c.forward_flops == ::hwplan::test::approx(linear + attention).epsilon(0.001));
  // Backward: both gradients of every linear layer (2x), FlashAttention-2's backward recomputes the scores (2.5x).
  CHECK(c.backward_flops == ::hwplan::test::approx(2 * linear + 2.5 * attention).epsilon(0.001));
  // LoRA freezes the base weights: only the input gradients of the linear layers remain.
  s.frozen_weights = true;
  Cost frozen = layer_cost(s, rates);
  CHECK(frozen.backward_flops == ::hwplan::test::approx(linear + 2.5 * attention).epsilon(0.001));
}

TEST_CASE("the GEMM shape-efficiency model: large square GEMMs near the device's large-GEMM rate, skinny ones far below") {
  const auto& reg = test::registry();
  DeviceRates r = device_rates(reg.device("a100-80gb-sxm"), Precision::kBf16);
  const double big = gemm_efficiency(r, 8192, 8192, 8192, 1);
  CHECK(big <= 1.0);
  CHECK(big >= 0.9 * r.gemm_efficiency);
  // Smaller problems fill fewer tiles and waves: efficiency never rises as the GEMM shrinks.
  double previous = big;
  for (double n : {4096.0, 1024.0, 256.0, 64.0}) {
    const double e = gemm_efficiency(r, n, n, n, 1);
    CAPTURE(n);
    CHECK(e <= previous + 1e-12);
    previous = e;
  }
  // A decode-shaped product (one row) uses a small share of a tensor-core tile.
  CHECK(gemm_efficiency(r, 1, 4096, 4096, 1) < 0.2 * big);
  // Time follows: a GEMM twice as large in every dimension takes 8x the FLOPs and at least ~4x the time.
  CHECK(gemm_seconds(r, 8192, 8192, 8192, 1, 2) > 4 * gemm_seconds(r, 4096, 4096, 4096, 1, 2));
}

TEST_CASE("batch-1 decode: never faster than reading the weights once per token at the achievable bandwidth") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-2-7b");
  for (const char* id : {"a100-80gb-sxm", "rtx-4090", "h100-sxm"}) {
    CAPTURE(id);
    const Device& d = reg.device(id);
    EstimateInput in;
    in.model = &m;
    in.device = &d;
    in.workload.task = Task::kInfer;
    in.workload.precision = Precision::kBf16;
    in.workload.prompt = 128;
    in.workload.generate = 128;
    in.workload.stack = engine_preset(Engine::kVllm);
    Estimate e = estimate(in);
    const double weights = count_parameters(m).total * 2;
    const double floor = weights / d.memory_bandwidth_bytes_per_s;
    CHECK(e.infer.time_per_output_token_seconds >= floor);
    // A CUDA-graph engine at batch 1 stays within 2x of that floor on these GPUs: bandwidth efficiency, KV reads,
    // kernel floors, and vLLM's ~1 ms per-step overhead, which weighs most on the fastest (H100: ~1.9x).
    CHECK(e.infer.time_per_output_token_seconds <= 2.0 * floor);
  }
}


TEST_CASE("MoE decode: a fused engine reads the touched experts in one grouped GEMM, eager code loops over them") {
  const auto& reg = test::registry();
  Model m = reg.model("qwen3-235b-a22b");
  const Device& d = reg.device("h100-sxm");
  EstimateInput in;
  in.model = &m;
  in.device = &d;
  in.system.count = 8;
  in.plan.tp = 8;
  in.plan.micro_batch = 64;
  in.workload.task = Task::kInfer;
  in.workload.precision = Precision::kBf16;
  in.workload.prompt = 1000;
  in.workload.generate = 100;
  in.workload.stack = engine_preset(Engine::kVllm);
  Estimate fused = estimate(in);
  // At batch 64 almost all 128 experts of each layer are touched: the step reads nearly every weight. Memory-bound,
  // it stays within 2x of that read at the device's bandwidth (plus KV, all-reduces and the kernel floors of ~20
  // kernels per layer) instead of paying a kernel floor for each of the 128 experts' GEMMs in each of 94 layers.
  const double read = fused.infer.decode_weight_bytes / d.memory_bandwidth_bytes_per_s;
  CHECK(fused.infer.decode_weight_bytes > 0.9 * count_parameters(m).total * 2 / 8);
  CHECK(fused.infer.time_per_output_token_seconds >= read);
  CHECK(fused.infer.time_per_output_token_seconds <= 2.0 * read);
  // Eager modelling code runs each touched expert as its own GEMMs: one kernel floor per expert projection.
  in.workload.stack = engine_preset(Engine::kHf);
  Estimate eager = estimate(in);
  const double floors = 94 * 2 * 120 * device_rates(d, Precision::kBf16).kernel_overhead_seconds;
  CHECK(eager.infer.time_per_output_token_seconds > fused.infer.time_per_output_token_seconds + 0.5 * floors);

  // Transformers' eager MoE block at batch 1: the router's ~10 kernels and ~10 per touched expert in place of the
  // MLP's 5, and a host sync in every layer (nonzero, torch.where), so host issue and GPU work add up. Mixtral 8x7B
  // (2 of 8 experts, 32 layers) against Mistral 7B (the same attention, a dense MLP): 32 x (42 + 5 + 2 x 10) kernels
  // against 32 x 42, at 27 us each.
  Model mixtral = reg.model("mixtral-8x7b"), mistral = reg.model("mistral-7b");
  auto eager_tpot = [&](const Model& model) {
    EstimateInput e;
    e.model = &model;
    e.device = &d;
    e.plan.micro_batch = 1;
    e.workload.task = Task::kInfer;
    e.workload.precision = Precision::kBf16;
    e.workload.prompt = 128;
    e.workload.generate = 128;
    e.workload.stack = engine_preset(Engine::kHf);
    return estimate(e).infer;
  };
  InferenceTime moe = eager_tpot(mixtral), dense = eager_tpot(mistral);
  const double host = (32.0 * (42 + 5 + 20) + 8) * assumptions().eager_host_seconds_per_kernel;
  CHECK(moe.host_seconds_per_token == ::hwplan::test::approx(host + engine_preset(Engine::kHf).decode_step_overhead_seconds).epsilon(1e-9));
  CHECK(moe.time_per_output_token_seconds > moe.host_seconds_per_token);
  CHECK(moe.time_per_output_token_seconds > 1.5 * dense.time_per_output_token_seconds);
}
TEST_CASE("attention kernels: FlashAttention-2-class kernels are slower than native ones only where the architecture needs async MMA") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-2-7b");
  LayerShape s;
  s.model = &m;
  s.micro_batch = 1;
  s.seq = 8192;
  s.attention = Attention::kFlash;
  s.training = true;
  Stack native = framework_preset(Framework::kMegatron);
  Stack portable = framework_preset(Framework::kTorchtitan);
  CHECK(native.native_attention);
  CHECK_FALSE(portable.native_attention);
  CHECK(engine_preset(Engine::kTrtllm).native_attention);
  CHECK_FALSE(engine_preset(Engine::kHf).native_attention);
  auto attention_seconds = [&](const Device& d, const Stack& st) {
    DeviceRates rates = device_rates(d, Precision::kBf16);
    LayerShape shape = s;
    shape.stack = &st;
    std::vector<OpRecord> ops;
    layer_cost(shape, rates, &ops);
    for (const OpRecord& op : ops)
      if (op.name == std::string("flash-attention")) return op.forward_seconds + op.backward_seconds;
    return 0.0;
  };
  // Hopper: FlashAttention-2 at 0.61-0.63 of cuDNN's rate (FlashAttention-3 paper, H100, head dim 128, 4k-8k tokens).
  const Device& h100 = reg.device("h100-sxm");
  const double ratio = attention_seconds(h100, portable) / attention_seconds(h100, native);
  CHECK(ratio > 1.0 / 0.65);
  CHECK(ratio < 1.0 / 0.58);
  // Ampere and Ada: mma.sync is the native instruction; the same kernels reach the same rate.
  for (const char* id : {"a100-80gb-sxm", "rtx-4090"}) {
    CAPTURE(id);
    const Device& d = reg.device(id);
    CHECK(attention_seconds(d, portable) == ::hwplan::test::approx(attention_seconds(d, native)).scale(0));
  }
}

TEST_CASE("pipeline activations: stage k holds min(pp - k, micro-batches) micro-batches, the first stage takes the layers' shortfall") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3.1-405b");  // 126 layers
  REQUIRE(m.total_layers() == 126);
  const Device& d = reg.device("h100-sxm");
  ParameterCounts params = count_parameters(m);
  Workload w;
  w.task = Task::kTrain;
  w.seq = 8192;
  w.stack = framework_preset(Framework::kMegatron);
  Plan p;
  p.tp = 8;
  p.pp = 16;
  p.dp = 64;
  p.zero = 1;
  p.micro_batch = 1;
  p.grad_accum = 32;
  const double per_layer = layer_activation_bytes(m, w, p, 1);
  // Stages of ceil(126 / 16) = 8 layers; the first holds 16 micro-batches of 126 - 15 x 8 = 6 layers (96), the
  // second 15 micro-batches of 8 (120): the second stage binds, not 16 x 8 = 128.
  MemoryBreakdown mem = training_memory(m, params, d, w, p);
  CHECK(mem.activations == ::hwplan::test::approx(120 * per_layer));
  // Fewer micro-batches than stages: each stage holds all of them.
  p.grad_accum = 4;
  CHECK(training_memory(m, params, d, w, p).activations == ::hwplan::test::approx(4 * 8 * per_layer));
  // Without a pipeline the logits and loss sit on the only stage, next to the layers.
  p.pp = 1;
  p.dp = 1024;
  const double one_stage = training_memory(m, params, d, w, p).activations;
  CHECK(one_stage > 126 * layer_activation_bytes(m, w, p, 1));
}

TEST_CASE("a 16-bit format with no matrix units behind it is not priced as padded tensor-core tiles") {
  // Apple GPUs' fp16 peak is their fp32 peak (simdgroup matrices on the ALUs): one more sequence in a decode batch
  // costs about one more sequence, not a second padded 16-row tile. (Before: 54.9 ms at 16, 99.2 ms at 17.)
  auto tpot = [](int batch) {
    return nlohmann::json::parse(::hwplan::test::run_hwplan("estimate --model llama-3-8b --device apple-m4-max-gpu --task infer "
                                                            "--format json --batch " + std::to_string(batch)).out)
        ["inference"]["time_per_output_token_seconds"].get<double>();
  };
  double previous = 0, previous_rate = 0;
  for (int b = 8; b <= 40; ++b) {
    const double t = tpot(b);
    CHECK(t >= previous);            // a larger batch never takes less time a step
    CHECK(t < previous * 1.15 + (previous == 0 ? 1 : 0));  // nor jumps
    CHECK(b / t >= previous_rate * 0.9);  // and its tokens/s does not fall by more than a tile edge's
    previous = t;
    previous_rate = b / t;
  }
}

TEST_CASE("int4 decode through a fused dequantizing kernel stays bound by its weights up to batches of 16-32") {
  // Marlin's README (IST-DASLab/marlin): "close to ideal (4x) speedups up to batchsizes of 16-32 tokens". A step of
  // 17 or 32 sequences reads the same weights as one of 16: it costs little more, not a second padded tile's worth
  // of skinny-tile arithmetic (before: 32.2 ms at 16, 52.2 ms at 17 for Llama 2 70B on an A100).
  for (const char* device : {"a10", "a100-80gb-sxm", "h100-sxm"}) {
    auto tpot = [&](int batch) {
      return nlohmann::json::parse(::hwplan::test::run_hwplan(std::string("estimate --model llama-2-13b --task infer --weights int4 "
                                                                          "--engine vllm --prompt 16 --generate 16 --format json "
                                                                          "--device ") + device + " --batch " + std::to_string(batch))
                                       .out)["inference"]["time_per_output_token_seconds"].get<double>();
    };
    CAPTURE(device);
    CHECK(tpot(17) < 1.05 * tpot(16));
    CHECK(tpot(32) < 1.15 * tpot(16));
    CHECK(tpot(65) < 1.3 * tpot(64));
  }
  // A long prefill keeps the 16-bit GEMM's rate (no faster than bf16).
  auto ttft = [](const std::string& extra) {
    return nlohmann::json::parse(::hwplan::test::run_hwplan("estimate --model llama-3-8b --device a100-80gb-sxm --task infer "
                                                            "--prompt 2000 --format json " + extra).out)
        ["inference"]["time_to_first_token_seconds"].get<double>();
  };
  CHECK(ttft("--engine vllm --weights int4") >= ttft("--engine vllm --weights bf16") * 0.999);
}

TEST_CASE("a decode step of 16 sequences is no slower per sequence than one of 15: skinny GEMMs split their reduction") {
  // At 16 rows the vector-unit GEMV path no longer applies; the tensor-core kernel spreads K over the compute units a
  // few output tiles would leave idle (stream-K), as the libraries do, instead of running 32 tiles on 304 CUs.
  // A reduction shorter than one slice (k < 256) is not split (a convolution splits its own: implicit_gemm).
  for (const char* device : {"mi300x", "v100-32gb-sxm", "rtx-5090"}) {
    auto rate = [&](int batch) {
      auto r = ::hwplan::test::run_hwplan(std::string("estimate --model llama-3-8b --task infer --prompt 128 --generate 128 --format json --device ") +
                                          device + " --batch " + std::to_string(batch));
      return nlohmann::json::parse(r.out)["inference"]["decode_tokens_per_second"].get<double>();
    };
    CAPTURE(device);
    CHECK(rate(16) >= rate(15));
  }
}

TEST_CASE("a tensor format without a measurement keeps a measured sibling's ratio to 16 bits: the H200's fp8 from the H100's") {
  const Device& h200 = test::registry().device("h200-sxm");
  const Device& h100 = test::registry().device("h100-sxm");
  const auto f = h200.format_matmul_fraction.find(Precision::kFp8);
  REQUIRE(f != h200.format_matmul_fraction.end());
  const double own16 = h200.measured_matmul_flops.at(Precision::kBf16) / h200.peak(Precision::kBf16);
  const double ratio = (h100.measured_matmul_flops.at(Precision::kFp8) / h100.peak(Precision::kFp8)) /
                       (h100.measured_matmul_flops.at(Precision::kBf16) / h100.peak(Precision::kBf16));
  CHECK(f->second == test::approx(own16 * ratio));
  // The same die with more memory is never slower: an fp8 prefill on the H200 takes no longer than on the H100.
  auto prefill = [](const char* device) {
    return nlohmann::json::parse(test::run_hwplan(std::string("estimate --model llama-3.1-70b --task infer --engine trtllm --weights fp8 "
                                                              "--batch 8 --prompt 2048 --generate 1 --format json --device ") + device).out)
        ["inference"]["prefill_seconds"].get<double>();
  };
  CHECK(prefill("h200-sxm") <= prefill("h100-sxm"));
}
