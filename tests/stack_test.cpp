// The software-stack physics (estimators/stack.cpp and its uses in operators, memory, inference, efficiency):
// each part changes the term it models, in the direction and by the amount its derivation says.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <unistd.h>

#include "core/assumptions.hpp"
#include "estimators/efficiency.hpp"
#include "estimators/inference.hpp"
#include "estimators/estimate.hpp"
#include "estimators/params.hpp"
#include "estimators/stack.hpp"
#include "estimators/training.hpp"
#include "core/error.hpp"
#include "io/model_io.hpp"
#include "report/plots.hpp"
#include "test_util.hpp"

#include <nlohmann/json.hpp>

using namespace hwplan;

namespace {

// The JSON of a command that must succeed.
nlohmann::json json_of(const std::string& command) {
  auto r = test::run_hwplan(command);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

EstimateInput input(const Model& m, const Device& d, Task task, Stack stack) {
  EstimateInput in;
  in.model = &m;
  in.device = &d;
  in.workload.task = task;
  in.workload.seq = 2048;
  in.workload.prompt = 128;
  in.workload.generate = 128;
  in.workload.stack = std::move(stack);
  in.plan.micro_batch = task == Task::kInfer ? 1 : 2;
  return in;
}

// An image network's estimate input: no sequence, `batch` images per step, SGD when it trains.
EstimateInput cnn_input(const Model& m, const Device& d, Task task, Stack stack, Precision p, long long batch) {
  EstimateInput in = input(m, d, task, std::move(stack));
  in.workload.seq = 1;
  in.workload.precision = p;
  in.workload.optimizer = Optimizer::kSgd;
  in.plan.micro_batch = batch;
  return in;
}

}  // namespace

TEST_CASE("unfused eager kernels cost more memory traffic than fused ones, never less") {
  const auto& reg = test::registry();
  for (const char* model : {"llama-2-7b", "gpt2-large", "bert-large", "mistral-7b"}) {
    CAPTURE(model);
    Model m = reg.model(model);
    const Device& d = reg.device("a100-80gb-sxm");
    Estimate fused = estimate(input(m, d, Task::kTrain, framework_preset(Framework::kMegatron)));
    Estimate eager = estimate(input(m, d, Task::kTrain, framework_preset(Framework::kFsdp)));
    CHECK(eager.train.memory_bound_seconds >= fused.train.memory_bound_seconds);
    CHECK(eager.train.step_seconds >= fused.train.step_seconds);
  }
  // RMSNorm (seven fp32 ops eager) and SwiGLU make the eager Llama layer's memory-bound time several times larger.
  Model llama = reg.model("llama-2-7b");
  const Device& a100 = reg.device("a100-80gb-sxm");
  Estimate f = estimate(input(llama, a100, Task::kTrain, framework_preset(Framework::kMegatron)));
  Estimate e = estimate(input(llama, a100, Task::kTrain, framework_preset(Framework::kHfTrainer)));
  CHECK(e.train.memory_bound_seconds > 2 * f.train.memory_bound_seconds);
}

TEST_CASE("eager decode is bounded by the host issuing kernels, and CUDA graphs remove that bound") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-2-7b");
  const Device& d = reg.device("a100-80gb-sxm");
  Estimate hf = estimate(input(m, d, Task::kInfer, engine_preset(Engine::kHf)));
  Estimate vllm = estimate(input(m, d, Task::kInfer, engine_preset(Engine::kVllm)));
  CHECK(hf.infer.decode_host_bound);
  CHECK_FALSE(vllm.infer.decode_host_bound);
  // gpt-fast's eager Llama-2-7B decode on an A100: 25.5 tokens/s (the derivation of the host cost per kernel);
  // HF's modelling code issues more kernels per layer, so it is at most that fast (20% tolerance below).
  CHECK(hf.infer.decode_tokens_per_second <= 25.5 * 1.2);
  CHECK(hf.infer.decode_tokens_per_second >= 25.5 * 0.6);
  // A graph-replaying engine is bandwidth-bound: several times faster.
  CHECK(vllm.infer.decode_tokens_per_second > 2.5 * hf.infer.decode_tokens_per_second);
  // The host floor: a step lasts at least the host time of its kernels.
  CHECK(hf.infer.time_per_output_token_seconds >= hf.infer.host_seconds_per_token - 1e-12);
}

TEST_CASE("pure bf16 keeps no fp32 master copy and paged optimizer state is outside the allocated figure") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-2-7b");
  const Device& d = reg.device("a100-80gb-sxm");
  Stack mixed = framework_preset(Framework::kFsdp);
  Stack pure = framework_preset(Framework::kTorchtune);
  Estimate a = estimate(input(m, d, Task::kFinetune, mixed));
  Estimate b = estimate(input(m, d, Task::kFinetune, pure));
  // AdamW: 4 (master) + 8 (fp32 moments) bytes per parameter vs 2 + 2 (bf16 moments): a third.
  CHECK(b.memory.optimizer == ::hwplan::test::approx(a.memory.optimizer / 3).epsilon(1e-9));
  Stack paged = pure;
  paged.paged_optimizer = true;
  Estimate c = estimate(input(m, d, Task::kFinetune, paged));
  CHECK(c.memory.total() == ::hwplan::test::approx(b.memory.total()));
  CHECK(c.memory.reported(MemoryMetric::kAllocated) ==
        ::hwplan::test::approx(b.memory.reported(MemoryMetric::kAllocated) - b.memory.optimizer));
  // allocated <= reserved <= device, always.
  CHECK(c.memory.reported(MemoryMetric::kAllocated) <= c.memory.reported(MemoryMetric::kReserved));
  CHECK(c.memory.reported(MemoryMetric::kReserved) <= c.memory.reported(MemoryMetric::kDevice));
  // Applied in backward, about one layer's gradients exist at a time, however the buffers are kept otherwise.
  Stack persistent = pure;
  persistent.persistent_grads = true;
  Estimate kept = estimate(input(m, d, Task::kFinetune, persistent));
  Stack inbwd = persistent;
  inbwd.optimizer_in_backward = true;
  Estimate g = estimate(input(m, d, Task::kFinetune, inbwd));
  CHECK(g.memory.gradients < kept.memory.gradients / 10);
}

TEST_CASE("architecture SGEMM fractions and power-limited clocks come from catalog facts") {
  const auto& reg = test::registry();
  // Dual-issue FP32 parts reach about two thirds of their FP32 peak in SGEMM; GA100 and Volta about all of it.
  CHECK(sgemm_fraction(reg.device("rtx-4090")) == ::hwplan::test::approx(0.66));
  CHECK(sgemm_fraction(reg.device("a100-80gb-sxm")) > 0.9);
  CHECK(sgemm_fraction(reg.device("v100-32gb-pcie")) > 0.9);
  // The T4's published 4.3 TFLOP/s SGEMM against Turing's 0.90 implies ~59% of boost under the 70 W limit.
  CHECK(sustained_clock_fraction(reg.device("t4")) == ::hwplan::test::approx(4.3 / 8.1 / 0.90).epsilon(0.01));
  CHECK(sustained_clock_fraction(reg.device("a100-80gb-sxm")) == ::hwplan::test::approx(1.0));
  // A tensor-core device with no measured sibling gets the conservative default, below every measured device.
  DeviceRates unmeasured = device_rates(reg.device("v100-32gb-pcie"), Precision::kFp16);
  CHECK(unmeasured.gemm_efficiency_assumed);
  CHECK(unmeasured.gemm_efficiency == ::hwplan::test::approx(assumptions().unmeasured_tensor_gemm_efficiency));
}

TEST_CASE("a power-limited device runs memory-bound steps at its boost clock: kernels' fixed cost in cycles at that clock") {
  const auto& reg = test::registry();
  const Device& l4 = reg.device("l4");
  DeviceRates r = device_rates(l4, Precision::kBf16);
  REQUIRE(r.clock_fraction < 0.7);  // ~55% of boost under dense GEMMs (the measured SGEMM)
  // In a GEMM-bound step the floor runs at the held clock; in a memory-bound one at the boost clock.
  CHECK(r.kernel_overhead_seconds == ::hwplan::test::approx(assumptions().kernel_overhead_cycles / (*l4.boost_clock_mhz * 1e6 * r.clock_fraction)).scale(0));
  CHECK(r.memory_bound_kernel_overhead_seconds == ::hwplan::test::approx(assumptions().kernel_overhead_cycles / (*l4.boost_clock_mhz * 1e6)).scale(0));
  // The boundary: tokens per step where reading the weights takes as long as their GEMM FLOPs (2 per parameter and
  // token) at the large-GEMM rate: bf16 weights on an L4 ~ 121 TFLOP/s x 0.7 x 0.55 x 2 B / (2 x 300 GB/s x 0.85).
  const double ridge = memory_bound_tokens(r, 2);
  CHECK(ridge == ::hwplan::test::approx(r.matrix_flops * r.gemm_efficiency * 2 / (2 * r.bandwidth * r.bandwidth_efficiency)).scale(0));
  CHECK(ridge > 100);
  CHECK(ridge < 300);
  CHECK(rates_at_load(r, 1, 2).kernel_overhead_seconds == ::hwplan::test::approx(r.memory_bound_kernel_overhead_seconds).scale(0));
  CHECK(rates_at_load(r, 4096, 2).kernel_overhead_seconds == ::hwplan::test::approx(r.kernel_overhead_seconds).scale(0));
  // A device that holds its boost clock under GEMMs pays the same floor either way.
  DeviceRates h = device_rates(reg.device("h100-sxm"), Precision::kBf16);
  CHECK(h.memory_bound_kernel_overhead_seconds == ::hwplan::test::approx(h.kernel_overhead_seconds).scale(0));
  // Batch-1 decode on the L4 is faster than with the held clock's floor, and the serving step model agrees with it.
  Model m = reg.model("qwen2.5-0.5b");
  EstimateInput in = input(m, l4, Task::kInfer, engine_preset(Engine::kVllm));
  in.workload.prompt = 256;
  in.workload.generate = 128;
  Estimate e = estimate(in);
  StepRates s = step_rates(in);
  const double context = 256 + 128 / 2.0;
  // doctest's Approx has an absolute floor of epsilon x 1 unless scale(0): these are milliseconds and microseconds.
  const double step = engine_step_seconds(step_tokens_seconds(s, 1) + step_logits_seconds(s, 1, 1) +
                                              step_decode_attention_seconds(s, context, 1) + s.extra_kernels_at(1),
                                          s.host_seconds, s.step_overhead_seconds, s.overlap_scheduling);
  CHECK(e.infer.time_per_output_token_seconds == ::hwplan::test::approx(step).epsilon(0.001).scale(0));
  StepRates held = s;
  held.memory_bound_tokens = 0;  // every step at the held clock's floor
  const double slower = engine_step_seconds(step_tokens_seconds(held, 1) + step_logits_seconds(held, 1, 1) +
                                                step_decode_attention_seconds(held, context, 1) + held.extra_kernels_at(1),
                                            held.host_seconds, held.step_overhead_seconds, held.overlap_scheduling);
  CHECK(slower > step * 1.1);
}

TEST_CASE("a paged optimizer that does not fit spills its states to the host and pays the host link every step") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3.1-8b");
  const Device& small = reg.device("rtx-4090");
  Stack st = framework_preset(Framework::kTorchtune);
  st.optimizer_in_backward = true;
  EstimateInput in = input(m, small, Task::kFinetune, st);
  in.workload.optimizer = Optimizer::kAdam8bit;
  in.plan.recompute = Recompute::kFull;
  Estimate resident = estimate(in);
  in.workload.stack.paged_optimizer = true;
  Estimate paged = estimate(in);
  // Without paging, 15 GiB of weights and 15 GiB of 8-bit states cannot share 24 GiB; with it the overflow of the
  // managed states lives in host memory: the device holds the usable bytes, never more than the managed part moves.
  CHECK_FALSE(resident.fits);
  CHECK(paged.fits);
  CHECK(paged.memory.paged_out_bytes > 0);
  CHECK(paged.memory.paged_out_bytes <= paged.memory.managed_bytes);
  CHECK(paged.memory.total() == ::hwplan::test::approx(paged.usable_bytes).epsilon(1e-9));
  CHECK(paged.memory.demand() == ::hwplan::test::approx(resident.memory.total()).epsilon(1e-9));
  // The evicted bytes cross the host link (PCIe 4.0 x16 at 80%) once each way per step, both ways at once.
  CHECK(paged.train.paging_seconds ==
        ::hwplan::test::approx(paged.memory.paged_out_bytes / (small.host_link.bytes_per_s() * 0.8)).epsilon(1e-9));
  CHECK(paged.train.step_seconds == ::hwplan::test::approx(resident.train.step_seconds + paged.train.paging_seconds).epsilon(1e-9));
  // Where everything fits, a paged optimizer moves nothing.
  const Device& big = reg.device("a100-80gb-sxm");
  in.device = &big;
  Estimate roomy = estimate(in);
  CHECK(roomy.memory.paged_out_bytes == 0);
  CHECK(roomy.train.paging_seconds == 0);
}

TEST_CASE("llama.cpp decodes its unfused ggml graph: more kernels, each with a device floor set in GPU clock cycles") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-2-7b");
  Stack ggml = engine_preset(Engine::kLlamacpp);
  Stack fused = engine_preset(Engine::kExllama);  // the same native host cost, fused kernels
  for (const char* id : {"rtx-4090", "a100-80gb-pcie", "h100-pcie"}) {
    CAPTURE(id);
    const Device& d = reg.device(id);
    EstimateInput a = input(m, d, Task::kInfer, ggml), b = input(m, d, Task::kInfer, fused);
    a.workload.weights = b.workload.weights = WeightFormat::kQ4_0;
    Estimate ea = estimate(a), eb = estimate(b);
    const double kernel = device_rates(d, Precision::kFp16).kernel_overhead_seconds;
    // 32 ggml nodes + 7 q8_1 activation quantisations per layer against the fused 19: 20 more kernels per layer.
    const double extra = 32.0 * (32 + 7 - 19) * kernel;
    CHECK(ea.infer.time_per_output_token_seconds - eb.infer.time_per_output_token_seconds ==
          ::hwplan::test::approx(extra).epsilon(0.02));
  }
  // The same cycles take less time on a faster clock: 6,000 cycles = 2.4 us at the RTX 4090's 2.52 GHz boost.
  CHECK(device_rates(reg.device("rtx-4090"), Precision::kFp16).kernel_overhead_seconds == ::hwplan::test::approx(6000 / 2.52e9).scale(0));
  CHECK(device_rates(reg.device("a100-80gb-sxm"), Precision::kFp16).kernel_overhead_seconds >
        device_rates(reg.device("rtx-4090"), Precision::kFp16).kernel_overhead_seconds);
}

TEST_CASE("a fused engine's MoE and MLA layers issue more kernels than a dense layer: each one's device floor counts") {
  // vLLM's / SGLang's fused_moe path adds the router GEMM, top-k, the token-to-block alignment and the weighted sum
  // (4), and the shared experts' activation (1); MLA's attention runs five GEMMs where one is priced, plus two latent
  // norms (6). An engine that states its own per-layer graph (here 12 kernels, fewer than the 19 priced) adds none.
  const auto& reg = test::registry();
  const Device& d = reg.device("h200-sxm");
  const double kernel = device_rates(d, Precision::kBf16).kernel_overhead_seconds;
  struct Case {
    const char* model;
    int tp;
    double per_layer;  // extra kernels per layer, averaged over the layers
  };
  const Model dsv3 = reg.model("deepseek-v3");
  const double moe_share = 1 - static_cast<double>(dsv3.moe->dense_layers) / static_cast<double>(dsv3.total_layers());
  for (const Case& c : {Case{"mixtral-8x7b", 2, 4.0}, Case{"deepseek-v3", 8, moe_share * 5 + 6}, Case{"llama-3-8b", 1, 0.0}}) {
    CAPTURE(c.model);
    const Model m = reg.model(c.model);
    Stack derived = engine_preset(Engine::kVllm), stated = derived;
    stated.decode_kernels_per_layer = 12;
    EstimateInput a = input(m, d, Task::kInfer, derived), b = input(m, d, Task::kInfer, stated);
    a.system.count = b.system.count = c.tp;
    a.plan.tp = b.plan.tp = c.tp;
    const double extra = static_cast<double>(m.total_layers()) * c.per_layer * kernel;
    CHECK(estimate(a).infer.time_per_output_token_seconds - estimate(b).infer.time_per_output_token_seconds ==
          ::hwplan::test::approx(extra).epsilon(0.02).scale(1e-6));
  }
}

TEST_CASE("a CNN runs its convolutions and the memory-bound passes between them one after the other") {
  const auto& reg = test::registry();
  Model m = reg.model("resnet-50");
  const Device& a100 = reg.device("a100-80gb-sxm");
  auto cnn = [&](Task task, Precision p, long long batch, Stack stack) {
    return estimate(cnn_input(m, a100, task, std::move(stack), p, batch));
  };
  // Training, batch 256 in bf16, channels-last: the norm/activation passes are 3.5 + 6 passes over the saved
  // activations (82 MiB per image in fp32, half that in bf16) less the convolutions' own reads and writes (1 + 2),
  // which the per-layer convolutions price: 6.5 passes at the A100's achievable bandwidth, added to the convolutions.
  Stack nhwc = framework_preset(Framework::kFsdp);
  nhwc.channels_last = true;
  Estimate train = cnn(Task::kTrain, Precision::kBf16, 256, nhwc);
  const double saved = 82.0 * 1024 * 1024 * 256 / 2;
  const double bytes = 6.5 * saved;
  CHECK(train.train.memory_bound_seconds >= bytes / a100.memory_bandwidth_bytes_per_s);
  CHECK(train.train.memory_bound_seconds <= bytes / (0.7 * a100.memory_bandwidth_bytes_per_s) + 400 * 10e-6);
  CHECK(train.train.step_seconds > train.train.memory_bound_seconds + 0.5 * train.train.gemm_seconds);
  // PyTorch's default NCHW adds the transposes around every tensor-core convolution: more memory-bound time, the
  // same convolutions.
  Estimate nchw = cnn(Task::kTrain, Precision::kBf16, 256, framework_preset(Framework::kFsdp));
  CHECK(nchw.train.memory_bound_seconds > train.train.memory_bound_seconds + 0.3 * bytes / a100.memory_bandwidth_bytes_per_s);
  CHECK(nchw.train.gemm_seconds == ::hwplan::test::approx(train.train.gemm_seconds));
  // Eager inference pays BatchNorm and ReLU as their own passes; a TensorRT-style engine folds them away.
  Stack eager_nhwc = engine_preset(Engine::kHf);
  eager_nhwc.channels_last = true;
  Estimate eager = cnn(Task::kInfer, Precision::kFp16, 256, eager_nhwc);
  Estimate fused = cnn(Task::kInfer, Precision::kFp16, 256, engine_preset(Engine::kTrtllm));
  CHECK(eager.infer.total_seconds > 1.3 * fused.infer.total_seconds);
  // Batch 1 in eager PyTorch: the host issues 174 kernels at ~27 us each, longer than the GPU needs to run them
  // (the layout transposes run inside cuDNN's calls: no dispatch of their own).
  Estimate one = cnn(Task::kInfer, Precision::kFp16, 1, engine_preset(Engine::kHf));
  CHECK(one.infer.total_seconds >= 174 * assumptions().eager_host_seconds_per_kernel);
  CHECK(one.infer.total_seconds <= 1.2 * 174 * assumptions().eager_host_seconds_per_kernel);
  // Per image, a batch of 1 keeps most of the device idle in the late 7x7 stages: a TensorRT-style engine with no
  // host cost still takes several times a large batch's time per image.
  Estimate fused_one = cnn(Task::kInfer, Precision::kFp16, 1, engine_preset(Engine::kTrtllm));
  CHECK(fused_one.infer.total_seconds > 3 * fused.infer.total_seconds / 256);
}

TEST_CASE("a CNN's listed convolutions add up to its FLOPs and are checked against them") {
  const auto& reg = test::registry();
  const Model& m = reg.model("resnet-50");
  double flops = 0, count = 0;
  for (const auto& c : m.convolutions) {
    flops += c.forward_flops();
    count += c.count;
  }
  CHECK(count == 54);  // 53 convolutions and the fc layer
  CHECK(flops == ::hwplan::test::approx(m.forward_flops_per_sample).epsilon(0.001));
  const std::string head = "id: cnn\nname: n\nfamily: generic\nsource: s\nparameters: 1000\nforward_gflops_per_sample: 0.001\n"
                           "activation_mib_per_sample: 1\ninput: x\n";
  auto fails = [&](const std::string& convs) -> std::string {
    try {
      io::parse_model(head + convs, "cnn.yaml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(fails("convolutions:\n  - {in_channels: 6, out_channels: 8, kernel: 3, output_size: 4, groups: 4}\n")
            .find("cnn.yaml:10") != std::string::npos);
  CHECK(fails("convolutions:\n  - {in_channels: 6, out_channels: 8, kernel: 3, output_size: 4, groups: 4}\n")
            .find("convolutions[].groups") != std::string::npos);
  CHECK(fails("convolutions:\n  - {in_channels: 64, out_channels: 64, kernel: 3, output_size: 56}\n").find("more than") !=
        std::string::npos);
  CHECK(fails("convolutions:\n  - {in_channels: 4, out_channels: 4, kernel: 1, output_size: 4, colour: red}\n")
            .find("convolutions[].colour") != std::string::npos);
  CHECK(fails("convolutions:\n  - {in_channels: 4, out_channels: 4, kernel: 1, output_size: 4}\n").empty());
}

TEST_CASE("a CNN's inference holds the tensors alive at its widest point, not what training saves") {
  const auto& reg = test::registry();
  Model m = reg.model("resnet-50");
  const Device& a100 = reg.device("a100-80gb-sxm");
  auto infer = [&](const Model& model, Precision p) {
    return estimate(cnn_input(model, a100, Task::kInfer, engine_preset(Engine::kHf), p, 512));
  };
  // The zoo's 10.5 MiB per image (fp32) in the precision that runs: 512 images in fp16 hold 2.6 GiB.
  const double mib = 1024.0 * 1024.0;
  CHECK(infer(m, Precision::kFp16).memory.activations == ::hwplan::test::approx(10.5 * mib * 512 / 2));
  CHECK(infer(m, Precision::kFp32).memory.activations == ::hwplan::test::approx(10.5 * mib * 512));
  Estimate zoo = infer(m, Precision::kFp16);
  for (const auto& w : zoo.warnings) CHECK(w.find("inference_activation_mib_per_sample") == std::string::npos);
  // A model file without the figure: a quarter of the training activations, and the estimate says so.
  Model bare = m;
  bare.inference_activation_bytes_per_sample = 0;
  Estimate guessed = infer(bare, Precision::kFp16);
  CHECK(guessed.memory.activations == ::hwplan::test::approx(0.25 * 82 * mib * 512 / 2));
  bool warned = false;
  for (const auto& w : guessed.warnings) warned = warned || w.find("inference_activation_mib_per_sample") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("a fused engine running a CNN in int8 hands int8 tensors between layers: half the fp16 traffic") {
  const auto& reg = test::registry();
  // The aggregate model (no convolution list): its one memory-bound pass is all the traffic there is.
  Model m = reg.model("resnet-50");
  m.convolutions.clear();
  const Device& a100 = reg.device("a100-80gb-sxm");
  auto run = [&](bool int8) {
    EstimateInput in = cnn_input(m, a100, Task::kInfer, engine_preset(Engine::kTrtllm), Precision::kFp16, 256);
    if (int8) in.workload.weights = WeightFormat::kInt8;
    return estimate(in);
  };
  // The memory-bound part is what the pass adds: with it counted and without.
  const double int8 = run(true).infer.total_seconds, fp16 = run(false).infer.total_seconds;
  Assumptions none;
  none.cnn_fused_inference_passes = 0;
  set_assumptions(none);
  const double int8_compute = run(true).infer.total_seconds, fp16_compute = run(false).infer.total_seconds;
  set_assumptions(Assumptions{});
  REQUIRE(fp16 - fp16_compute > 1e-4);
  CHECK(int8 - int8_compute == ::hwplan::test::approx(0.5 * (fp16 - fp16_compute)).epsilon(1e-9));
  CHECK(int8_compute < fp16_compute);  // and the convolutions run at the int8 rate
  // The memory estimate holds the same 8-bit tensors.
  CHECK(run(true).memory.activations == ::hwplan::test::approx(0.5 * run(false).memory.activations));
}

TEST_CASE("listed convolutions: strided data gradients, depthwise groups, partial lists, the aggregate path") {
  const auto& reg = test::registry();
  const Device& a100 = reg.device("a100-80gb-sxm");
  auto seconds = [&](const Model& m, Task task, Stack st, long long batch = 256) {
    Estimate e = estimate(cnn_input(m, a100, task, std::move(st), Precision::kFp16, batch));
    return task == Task::kTrain ? e.train.step_seconds : e.infer.total_seconds;
  };
  Model one;
  one.id = "one";
  one.family = ModelFamily::kGeneric;
  one.generic_parameters = 1e6;
  one.activation_bytes_per_sample = 4.0 * 1024 * 1024;
  one.forward_kernels = 3;
  one.input = "x";
  auto with = [&](ConvLayer l) {
    Model m = one;
    m.convolutions = {ConvLayer{1, 3, 64, 3, 1, 56, 1}, l};  // an input layer first: it has no data gradient
    m.forward_flops_per_sample = m.convolutions[0].forward_flops() + l.forward_flops();
    return m;
  };
  // A stride-2 convolution does the multiply-adds of its output, forward and in its data gradient: training it costs
  // about what a stride-1 one of the same output costs, not four times as much.
  const double strided = seconds(with(ConvLayer{1, 256, 256, 3, 2, 28, 1}), Task::kTrain, framework_preset(Framework::kFsdp));
  const double plain = seconds(with(ConvLayer{1, 256, 256, 3, 1, 28, 1}), Task::kTrain, framework_preset(Framework::kFsdp));
  CHECK(strided < 1.5 * plain);
  // A depthwise 3x3 over 32 channels at 112x112 is bound by its traffic, not priced as an empty tensor-core GEMM.
  Model dw = with(ConvLayer{1, 32, 32, 3, 1, 112, 32});
  const double traffic = 256.0 * 112 * 112 * 32 * 2 * 2 / (a100.memory_bandwidth_bytes_per_s * 0.85);
  const double fused_first = seconds(with(ConvLayer{1, 64, 64, 1, 1, 1, 1}), Task::kInfer, engine_preset(Engine::kTrtllm));
  CHECK(seconds(dw, Task::kInfer, engine_preset(Engine::kTrtllm)) - fused_first < 3 * traffic);
  // A partial list: the rest of forward_gflops_per_sample is still priced (at the aggregate rate).
  Model resnet = reg.model("resnet-50");
  Model partial = resnet;
  partial.convolutions.resize(1);
  Model bare = resnet;
  bare.convolutions.clear();
  const double full_t = seconds(resnet, Task::kInfer, engine_preset(Engine::kTrtllm));
  const double partial_t = seconds(partial, Task::kInfer, engine_preset(Engine::kTrtllm));
  const double bare_t = seconds(bare, Task::kInfer, engine_preset(Engine::kTrtllm));
  CHECK(partial_t > 0.5 * std::min(full_t, bare_t));
  // Without a list the layout does not change the aggregate model (its conv_efficiency was fitted on both layouts).
  Stack nhwc = framework_preset(Framework::kFsdp);
  nhwc.channels_last = true;
  CHECK(seconds(bare, Task::kTrain, framework_preset(Framework::kFsdp)) == ::hwplan::test::approx(seconds(bare, Task::kTrain, nhwc)));
}

TEST_CASE("FP32 convolutions on the vector units use the Winograd-aware efficiency, tensor-core ones do not") {
  const auto& reg = test::registry();
  const Device& v100 = reg.device("v100-32gb-sxm");
  auto conv_seconds = [&](const Model& m, Precision p) {
    return estimate(cnn_input(m, v100, Task::kInfer, engine_preset(Engine::kTrtllm), p, 128)).infer.total_seconds;
  };
  // Listed convolutions: the 3x3 stride-1 ones run as Winograd transforms on the vector units (winograd_speedup).
  Model listed = reg.model("resnet-50");
  // Without the list: the whole network at simt_conv_efficiency.
  Model bare = listed;
  bare.convolutions.clear();
  const double fp32 = conv_seconds(listed, Precision::kFp32), fp16 = conv_seconds(listed, Precision::kFp16);
  const double bare32 = conv_seconds(bare, Precision::kFp32), bare16 = conv_seconds(bare, Precision::kFp16);
  Assumptions faster;
  faster.simt_conv_efficiency = 2 * faster.simt_conv_efficiency;
  faster.winograd_speedup = 2 * faster.winograd_speedup;
  set_assumptions(faster);
  const double fp32_fast = conv_seconds(listed, Precision::kFp32), fp16_same = conv_seconds(listed, Precision::kFp16);
  const double bare32_fast = conv_seconds(bare, Precision::kFp32), bare16_same = conv_seconds(bare, Precision::kFp16);
  set_assumptions(Assumptions{});
  CHECK(fp32_fast < 0.95 * fp32);  // the 3x3 convolutions' arithmetic is a fraction of the time
  CHECK(fp16_same == ::hwplan::test::approx(fp16));
  CHECK(bare32_fast < 0.75 * bare32);
  CHECK(bare16_same == ::hwplan::test::approx(bare16));
}

TEST_CASE("without the language-model head a fine-tuning step skips the vocabulary projection and its loss") {
  const auto& reg = test::registry();
  Model m = reg.model("bert-base");
  const Device& d = reg.device("a100-80gb-sxm");
  EstimateInput with = input(m, d, Task::kTrain, framework_preset(Framework::kFsdp));
  with.workload.seq = 384;
  EstimateInput without = with;
  without.workload.lm_head = false;
  Estimate a = estimate(with), b = estimate(without);
  // BERT-Base: the 768 x 30,522 projection is about a fifth of the layers' 85M parameters, so the step loses
  // several percent even at two sequences a step; the logits and the fp32 loss leave the activation memory.
  CHECK(b.train.step_seconds < 0.95 * a.train.step_seconds);
  CHECK(b.train.step_seconds > 0.6 * a.train.step_seconds);
  CHECK(b.memory.activations < a.memory.activations);
  // Model FLOPs drop by exactly the head's 6 x vocab x hidden per token.
  const double tokens = a.train.tokens_per_step;
  CHECK(a.train.model_flops_per_step - b.train.model_flops_per_step ==
        ::hwplan::test::approx(tokens * 6 * static_cast<double>(m.vocab_size * m.hidden_size)).epsilon(1e-9));
  // Generation needs the head: the CLI says so.
  auto r = test::run_hwplan("estimate --model gpt2 --device a100-80gb-sxm --task infer --lm-head off");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--lm-head") != std::string::npos);
  CHECK(test::run_hwplan("estimate --model gpt2 --device a100-80gb-sxm --task infer --generate 0 --lm-head off").exit_code == 0);
  // An encoder generates nothing: its inference is one forward pass, with or without the head.
  CHECK(test::run_hwplan("estimate --model bert-base --device a100-80gb-sxm --task infer --lm-head off").exit_code == 0);
}

TEST_CASE("an optimizer that loops over the parameter tensors pays each tensor's kernels on the host") {
  const auto& reg = test::registry();
  // The tensors a loop visits: BERT-Large 24 x 16 (q, k, v, o, up, down with biases, two LayerNorms) + word and
  // position embeddings + the embedding LayerNorm = 388; Llama 2 7B 32 x 9 + embedding + final norm + head = 291.
  CHECK(parameter_tensors(reg.model("bert-large")) == 388);
  CHECK(parameter_tensors(reg.model("llama-2-7b")) == 291);
  CHECK(lora_tensors(reg.model("llama-2-7b"), "qv") == 128);
  Model m = reg.model("bert-large");
  const Device& d = reg.device("a100-80gb-sxm");
  EstimateInput foreach_in = input(m, d, Task::kTrain, framework_preset(Framework::kFsdp));
  foreach_in.workload.seq = 384;
  EstimateInput loop_in = foreach_in;
  loop_in.workload.stack.foreach_optimizer = false;
  Estimate a = estimate(foreach_in), b = estimate(loop_in);
  // 388 tensors x 8 kernels (PyTorch's single-tensor AdamW) x the eager host's 27 us: about 84 ms, far above the
  // device's ~16 ms of memory traffic (the same eight passes, foreach, over fp32 tensors, and clipping).
  const double host = 388 * 8 * loop_in.workload.stack.host_seconds_per_kernel;
  CHECK(b.train.optimizer_seconds == ::hwplan::test::approx(host).epsilon(1e-9));
  CHECK(a.train.optimizer_seconds < 0.25 * host);
  CHECK(b.train.step_seconds - a.train.step_seconds == ::hwplan::test::approx(host - a.train.optimizer_seconds).epsilon(1e-6));
}

TEST_CASE("fp8 training with a 16-bit vocabulary projection (Megatron) pays the logits GEMMs at the 16-bit rate") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-8b");
  const Device& d = reg.device("h100-sxm");
  Stack megatron = framework_preset(Framework::kMegatron);
  CHECK_FALSE(megatron.fp8_head);
  CHECK(framework_preset(Framework::kTorchtitan).fp8_head);
  Stack fp8_head = megatron;
  fp8_head.fp8_head = true;
  EstimateInput sixteen = input(m, d, Task::kTrain, megatron), eight = input(m, d, Task::kTrain, fp8_head);
  sixteen.workload.precision = eight.workload.precision = Precision::kFp8;
  const DeviceRates fp8 = device_rates(d, Precision::kFp8), bf16 = device_rates(d, Precision::kBf16);
  const MicroBatchCost a = micro_batch_cost(sixteen, fp8), b = micro_batch_cost(eight, fp8);
  // The head's forward: embedding and final norm (the same in both) plus the logits GEMM, at the bf16 rate with no
  // casts, or at the fp8 rate with its casts.
  const double tokens = 2.0 * 2048, vocab = static_cast<double>(m.vocab_size), h = static_cast<double>(m.hidden_size);
  const double logits16 = gemm_seconds(bf16, tokens, vocab, h, 1, 2);
  CHECK(logits16 > gemm_seconds(fp8, tokens, vocab, h, 1, 1));
  const double others = a.head.forward_seconds - logits16;
  CHECK(others > 0);
  CHECK(b.head.forward_seconds - others > gemm_seconds(fp8, tokens, vocab, h, 1, 1));
  CHECK(a.head.forward_seconds > b.head.forward_seconds);
  // The layers are the same; the whole step is slower.
  CHECK(a.layer.forward_seconds == ::hwplan::test::approx(b.layer.forward_seconds).epsilon(1e-12));
  CHECK(estimate(sixteen).train.step_seconds > estimate(eight).train.step_seconds);
  // In 16-bit training the flag changes nothing.
  sixteen.workload.precision = eight.workload.precision = Precision::kBf16;
  CHECK(estimate(sixteen).train.step_seconds == ::hwplan::test::approx(estimate(eight).train.step_seconds).epsilon(1e-12));
}

TEST_CASE("eager decode with quantised weights pays each library's kernels per linear layer") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-2-7b");
  const Device& d = reg.device("a100-80gb-sxm");
  auto host_per_token = [&](WeightFormat f) {
    EstimateInput in = input(m, d, Task::kInfer, engine_preset(Engine::kHf));
    in.workload.weights = f;
    return estimate(in).infer.host_seconds_per_token;
  };
  const double bf16 = host_per_token(WeightFormat::kBf16), int4 = host_per_token(WeightFormat::kInt4),
               nf4 = host_per_token(WeightFormat::kNf4), int8 = host_per_token(WeightFormat::kInt8);
  // Per token, 7 linear layers in each of 32 layers, each kernel 27 us of host time: GPTQ/AWQ one more kernel per
  // linear, bitsandbytes 4-bit three more, LLM.int8() twelve more.
  const double per_linear = 7 * 32 * engine_preset(Engine::kHf).host_seconds_per_kernel;
  CHECK(int4 - bf16 == ::hwplan::test::approx(1 * per_linear).epsilon(1e-9));
  CHECK(nf4 - bf16 == ::hwplan::test::approx(3 * per_linear).epsilon(1e-9));
  CHECK(int8 - bf16 == ::hwplan::test::approx(12 * per_linear).epsilon(1e-9));
}

TEST_CASE("quantized checkpoints keep the output projection in 16 bits unless the stack quantizes it") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3.1-8b");
  const Device& d = reg.device("h100-sxm");
  auto run = [&](Engine e, std::optional<bool> quantized_head) {
    EstimateInput in = input(m, d, Task::kInfer, engine_preset(e));
    in.workload.weights = WeightFormat::kInt4;
    if (quantized_head) in.workload.stack.quantized_head = *quantized_head;
    return estimate(in);
  };
  const double head = 128256.0 * 4096;  // Llama 3.1 8B's untied output projection; the embedding is as large
  const double int4 = bytes_per_param(WeightFormat::kInt4);
  // vLLM with an AWQ / GPTQ checkpoint: the decode step reads the projection in 16 bits, memory holds both ends so.
  const Estimate awq = run(Engine::kVllm, std::nullopt), all = run(Engine::kVllm, true);
  CHECK(awq.infer.decode_weight_bytes - all.infer.decode_weight_bytes == ::hwplan::test::approx(head * (2 - int4)).epsilon(1e-6));
  const ParameterCounts c = count_parameters(m);  // the output's count holds the final norm beside the projection
  // Quantizing the head leaves the nn.Embedding table in 16 bits (torchao, gpt-fast): only the output's bytes change.
  CHECK(awq.memory.weights - all.memory.weights == ::hwplan::test::approx(c.output * (2 - int4)).epsilon(1e-9));
  CHECK(awq.infer.time_per_output_token_seconds > all.infer.time_per_output_token_seconds);
  // llama.cpp's GGUF quantizes output.weight: its preset says so; its token_embd stays in host memory.
  CHECK(engine_preset(Engine::kLlamacpp).quantized_head);
  CHECK(run(Engine::kLlamacpp, std::nullopt).memory.weights == ::hwplan::test::approx(all.memory.weights - c.embedding * 2));
  // On an edge device the runtime quantizes every linear layer (the command line's stack).
  auto edge = json_of("estimate --model 3b --device apple-m4-ane --task infer --weights int4 --format json");
  CHECK(edge["stack"]["quantized_head"] == true);
  auto server = json_of("estimate --model 3b --device h100-sxm --task infer --weights int4 --format json");
  CHECK(server["stack"]["quantized_head"] == false);
  auto flag = json_of("estimate --model 3b --device h100-sxm --task infer --weights int4 --quantized-head on --format json");
  CHECK(flag["stack"]["quantized_head"] == true);
  // An engine the user names keeps its own convention, on an edge device too.
  auto named = json_of("estimate --model 3b --device apple-m4-ane --task infer --weights int4 --engine vllm --format json");
  CHECK(named["stack"]["quantized_head"] == false);
  // llama.cpp's q4_0 quantizes the head whatever the engine; the summary says what was priced.
  auto q4 = test::run_hwplan("estimate --model 3b --device h100-sxm --task infer --weights q4_0 --engine vllm");
  CHECK(q4.out.find("unquantized") == std::string::npos);
  auto awq_text = test::run_hwplan("estimate --model 3b --device h100-sxm --task infer --weights int4");
  CHECK(awq_text.out.find("unquantized") != std::string::npos);  // "output projection unquantized", wrapped
  // The prefill's last-position logits read the same 16-bit projection as every decode step.
  EstimateInput prefill = input(m, d, Task::kInfer, engine_preset(Engine::kVllm));
  prefill.workload.weights = WeightFormat::kInt4;
  prefill.workload.generate = 1;
  const double ttft16 = estimate(prefill).infer.prefill_seconds;
  prefill.workload.stack.quantized_head = true;
  CHECK(ttft16 > estimate(prefill).infer.prefill_seconds);
}

TEST_CASE("the embedding table of quantized inference: quantized, 16-bit, or in host memory as the stack keeps it") {
  const auto& reg = test::registry();
  const Device& gpu = reg.device("rtx-4090");
  const Device& mac = reg.device("apple-m2-ultra-gpu");  // one memory shared with the CPU
  const double int4 = bytes_per_param(WeightFormat::kInt4);
  auto weights = [&](const Model& m, const Device& d, Stack st) {
    EstimateInput in = input(m, d, Task::kInfer, st);
    in.workload.weights = WeightFormat::kInt4;
    return estimate(in).memory.weights;
  };
  Stack vllm = engine_preset(Engine::kVllm);  // an AWQ / GPTQ checkpoint: both ends in 16 bits
  Stack torchao = vllm;
  torchao.quantized_head = true;  // every nn.Linear, lm_head included; nn.Embedding untouched
  Stack mlc = engine_preset(Engine::kMlc), gguf = engine_preset(Engine::kLlamacpp), exl = engine_preset(Engine::kExllama);
  CHECK(mlc.quantized_embedding);
  CHECK_FALSE(mlc.embedding_on_host);
  CHECK(gguf.embedding_on_host);
  CHECK(exl.embedding_on_host);

  const Model untied = reg.model("llama-3.1-8b");
  const ParameterCounts u = count_parameters(untied);
  const double awq = weights(untied, gpu, vllm);
  CHECK(awq - weights(untied, gpu, torchao) == ::hwplan::test::approx(u.output * (2 - int4)).epsilon(1e-9));
  CHECK(awq - weights(untied, gpu, mlc) == ::hwplan::test::approx((u.output + u.embedding) * (2 - int4)).epsilon(1e-9));
  // llama.cpp and ExLlamaV2 keep the table off the card; a Mac's GPU holds it in the memory it shares.
  CHECK(weights(untied, gpu, gguf) == ::hwplan::test::approx(weights(untied, gpu, mlc) - u.embedding * int4).epsilon(1e-9));
  CHECK(weights(untied, gpu, exl) == ::hwplan::test::approx(weights(untied, gpu, torchao) - u.embedding * 2).epsilon(1e-9));
  CHECK(weights(untied, mac, gguf) == ::hwplan::test::approx(weights(untied, mac, mlc)).epsilon(1e-9));
  // A flag moves it: --quantized-embedding (whatever the head does), --embedding-on-host (the host holds it then).
  Stack moved = vllm;
  moved.embedding_on_host = true;
  CHECK(awq - weights(untied, gpu, moved) == ::hwplan::test::approx(u.embedding * 2).epsilon(1e-9));
  Stack table_only = vllm;
  table_only.quantized_embedding = true;
  CHECK(awq - weights(untied, gpu, table_only) == ::hwplan::test::approx(u.embedding * (2 - int4)).epsilon(1e-9));
  {
    EstimateInput in = input(untied, gpu, Task::kInfer, gguf);
    in.workload.weights = WeightFormat::kInt4;
    CHECK(estimate(in).memory.host_bytes == ::hwplan::test::approx(u.embedding * int4).epsilon(1e-9));
    in.device = &mac;
    CHECK(estimate(in).memory.host_bytes == 0);
  }

  // A tied table is the output projection too: on the device in the head's format whatever the stack does with the
  // embedding, and twice when the head is quantized but the embedding is not.
  const Model tied = reg.model("llama-3.2-3b");
  REQUIRE(tied.tied_embeddings);
  const ParameterCounts t = count_parameters(tied);
  CHECK(weights(tied, gpu, gguf) == ::hwplan::test::approx(weights(tied, gpu, mlc)).epsilon(1e-9));
  CHECK(weights(tied, gpu, torchao) - weights(tied, gpu, mlc) == ::hwplan::test::approx(t.embedding * 2).epsilon(1e-9));
  CHECK(weights(tied, gpu, vllm) - weights(tied, gpu, torchao) ==
        ::hwplan::test::approx(t.output * (2 - int4) - t.embedding * int4).epsilon(1e-9));  // the output's count is its norm

  // The stack line says where the table is.
  auto text = test::run_hwplan("estimate --model llama-3.1-8b --device rtx-4090 --task infer --weights int4 --engine llamacpp");
  CHECK(text.out.find("embedding table in host memory") != std::string::npos);
  // On a Mac the table is in the memory the GPU shares, counted in its weights: the line does not say "host".
  auto mac_text = test::run_hwplan("estimate --model llama-3.1-8b --device apple-m2-max-gpu --task infer --weights int4 --engine llamacpp");
  CHECK(mac_text.out.find("embedding table in host memory") == std::string::npos);
  auto flagged = test::run_hwplan("estimate --model llama-3.1-8b --device h100-sxm --task infer --weights int4 --engine vllm "
                                  "--quantized-embedding on");
  CHECK(flagged.out.find("embedding") != std::string::npos);  // "embedding table quantized", perhaps wrapped
  auto js = json_of("estimate --model llama-3.1-8b --device rtx-4090 --task infer --weights int4 --engine hf "
                    "--quantized-head on --embedding-on-host on --format json");
  CHECK(js["stack"]["embedding_on_host"] == true);
  CHECK(js["stack"]["quantized_embedding"] == false);
}

TEST_CASE("LoRA adapters work on their projections' own shapes and add their output to the base one's") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3.2-3b");  // hidden 3072, MLP 8192: the MLP adapters are the wide ones
  const Device& d = reg.device("a100-80gb-sxm");
  EstimateInput in = input(m, d, Task::kLora, framework_preset(Framework::kTorchtune));
  in.workload.lora_rank = 64;
  const DeviceRates rates = device_rates(d, Precision::kBf16);
  std::vector<OpRecord> ops;
  LayerShape s = training_shape(in);
  layer_cost(s, rates, &ops);
  const double tokens = s.micro_batch * s.seq, h = 3072, f = 8192, e = 2;
  double up_b = 0, down_a = 0, adds = 0, add_fwd_bytes = 0;
  for (const OpRecord& op : ops) {
    if (op.name == std::string("lora-b") && op.forward_flops == ::hwplan::test::approx(2 * tokens * f * 64)) ++up_b;
    if (op.name == std::string("lora-a") && op.forward_flops == ::hwplan::test::approx(2 * tokens * 64 * f)) ++down_a;
    if (op.name == std::string("lora-add")) {
      ++adds;
      add_fwd_bytes += op.forward_bytes;
    }
  }
  CHECK(up_b == 2);    // gate and up: r -> 8192
  CHECK(down_a == 1);  // down: 8192 -> r
  CHECK(adds == 7);    // one add per adapted projection (all-linear)
  // Forward adds read the base output and the adapter's and write the sum: 3 passes over each output.
  const double q = 3072, kv = 8 * 128;
  CHECK(add_fwd_bytes == ::hwplan::test::approx(3 * tokens * e * (q + kv + kv + h + f + f + h)));
  // q and v only: two adapters, two adds.
  in.workload.lora_targets = "qv";
  ops.clear();
  layer_cost(training_shape(in), rates, &ops);
  int qv_adds = 0;
  for (const OpRecord& op : ops) qv_adds += op.name == std::string("lora-add");
  CHECK(qv_adds == 2);
}

TEST_CASE("engines that split a model by layers get pipelines, not tensor parallelism, unless --tp says so") {
  // llama.cpp (--split-mode layer, its default), ExLlama (gpu_split) and Transformers (accelerate's device_map)
  // put consecutive layers on each device; vLLM-class engines shard every layer.
  CHECK(engine_preset(Engine::kLlamacpp).layer_split);
  CHECK(engine_preset(Engine::kExllama).layer_split);
  CHECK(engine_preset(Engine::kHf).layer_split);
  CHECK_FALSE(engine_preset(Engine::kVllm).layer_split);
  CHECK_FALSE(engine_preset(Engine::kMlc).layer_split);
  const std::string base = "estimate --model llama-2-70b --device rtx-4090 --count 2 --task infer --weights int4 --batch 1 "
                           "--prompt 128 --generate 256 --format json";
  auto run = [&](const std::string& extra) { return json_of(base + " " + extra); };
  auto layers = run("--engine exllama");
  CHECK(layers["plan"]["tp"].get<int>() == 1);
  CHECK(layers["plan"]["pp"].get<int>() == 2);
  CHECK(layers["stack"]["layer_split"].get<bool>());
  auto sharded = run("--engine exllama --tp 2");  // the user's --tp wins
  CHECK(sharded["plan"]["tp"].get<int>() == 2);
  // The two devices take turns: each token reads all the weights one device after the other, where tensor
  // parallelism reads the two halves at once.
  const double turns = layers["inference"]["decode_tokens_per_second"].get<double>();
  const double together = sharded["inference"]["decode_tokens_per_second"].get<double>();
  CHECK(together > 1.4 * turns);
  CHECK(run("--engine vllm")["plan"]["tp"].get<int>() == 2);
  // hwplan serve lays llama.cpp out the same way.
  auto s = test::run_hwplan("serve --model llama-2-70b --device rtx-4090 --count 2 --engine llamacpp --weights int4 "
                            "--concurrency 1 --prompt 128 --generate 128 --requests 20 --format json");
  REQUIRE(s.exit_code == 0);
  auto j = nlohmann::json::parse(s.out);
  CHECK(j["serve"]["layout"]["tp"].get<int>() == 1);
  CHECK(j["serve"]["layout"]["pp"].get<int>() == 2);
}

TEST_CASE("Transformers' dynamic cache copies the whole KV cache on every token") {
  // DynamicCache.update concatenates (torch.cat) each layer's cache with the step's keys and values: the cache is
  // read and written again on every token, on top of attention's read. Visible when the device, not the host,
  // bounds the step: Llama 3.2 1B, 16 sequences at ~8k tokens of context on a T4.
  const auto& reg = test::registry();
  Model m = reg.model("llama-3.2-1b");
  const Device& d = reg.device("t4");
  CHECK(engine_preset(Engine::kHf).kv_cache_concat);
  CHECK_FALSE(engine_preset(Engine::kVllm).kv_cache_concat);
  EstimateInput in = input(m, d, Task::kInfer, engine_preset(Engine::kHf));
  in.workload.prompt = 8000;
  in.workload.generate = 128;
  in.plan.micro_batch = 16;
  Estimate cat = estimate(in);
  in.workload.stack.kv_cache_concat = false;
  Estimate in_place = estimate(in);
  REQUIRE_FALSE(cat.infer.decode_host_bound);
  // The copy moves twice the cache attention reads.
  const double copy = cat.infer.time_per_output_token_seconds - in_place.infer.time_per_output_token_seconds;
  const double read = in_place.infer.decode_kv_bytes / d.memory_bandwidth_bytes_per_s;
  CHECK(copy > 1.5 * read);
  CHECK(copy < 3.0 * read);
}

TEST_CASE("unpacked samples: each micro-batch is padded to its longest, and tokens/s counts the samples' tokens") {
  Workload w;
  w.seq = 1000;
  CHECK(computed_sequence(w, 4) == 1000);  // packed: every sequence is --seq tokens
  CHECK(sample_sequence(w) == 1000);
  // 256 evenly spaced quantiles of lengths uniform on [0, 1000]: the longest of b has mean b / (b + 1) x 1000.
  for (int i = 0; i < 256; ++i) w.sample_tokens.push_back(1000.0 * (i + 0.5) / 256);
  CHECK(sample_sequence(w) == ::hwplan::test::approx(500));
  CHECK(computed_sequence(w, 1) == ::hwplan::test::approx(500));
  CHECK(computed_sequence(w, 2) == ::hwplan::test::approx(2000.0 / 3).epsilon(0.01));
  CHECK(computed_sequence(w, 8) == ::hwplan::test::approx(8000.0 / 9).epsilon(0.01));

  const std::string base = "estimate --model llama-3.2-3b --device a100-80gb-sxm --task finetune --batch 4 --seq 2048 "
                           "--framework torchtune --format json";
  auto run = [&](const std::string& extra) { return json_of(base + " " + extra); };
  auto packed = run("");
  // Samples all as long as --seq are packed ones.
  auto full = run("--sample-tokens uniform:2048:2048");
  CHECK(full["time"]["tokens_per_second"].get<double>() == ::hwplan::test::approx(packed["time"]["tokens_per_second"].get<double>()));
  // Short samples: shorter steps, fewer tokens each, and the padding is computed but not counted.
  auto short_samples = run("--sample-tokens lognormal:300:0.8");
  CHECK(short_samples["time"]["step_seconds"].get<double>() < packed["time"]["step_seconds"].get<double>());
  CHECK(short_samples["time"]["tokens_per_step"].get<double>() == ::hwplan::test::approx(4 * 300).epsilon(0.05));
  CHECK(short_samples["time"]["hfu"].get<double>() > short_samples["time"]["mfu"].get<double>());
  // The peak memory is the longest batch's, --seq.
  CHECK(short_samples["memory"]["per_device_bytes"].get<double>() == ::hwplan::test::approx(packed["memory"]["per_device_bytes"].get<double>()));
  bool noted = false;
  for (const auto& n : short_samples["notes"]) noted = noted || n.get<std::string>().find("padding") != std::string::npos;
  CHECK(noted);
  auto infer = test::run_hwplan("estimate --model llama-3.2-3b --device a100-80gb-sxm --task infer --sample-tokens uniform:1:10");
  CHECK(infer.exit_code == 2);
  CHECK(infer.err.find("--sample-tokens") != std::string::npos);
  CHECK(test::run_hwplan(base + " --sample-tokens uniform:10").exit_code == 2);
}

TEST_CASE("unpacked samples on data-parallel ranks: every rank pads its own batch, and they meet at the longest's pace") {
  Workload w;
  w.seq = 1000;
  Plan plan;
  plan.micro_batch = 4;
  plan.dp = 8;
  CHECK(padded_rank_pace(w, plan) == 1);  // packed: every rank computes --seq tokens a sequence
  for (int i = 0; i < 256; ++i) w.sample_tokens.push_back(1000.0 * (i + 0.5) / 256);
  // Uniform lengths on [0, 1000]: a rank's batch of 4 is padded to 4/5 of 1000 on average, and with the ranks meeting
  // every micro-batch (no accumulation, or ZeRO-3) the slowest of 8 ranks holds the longest of 32 samples: 32/33.
  plan.grad_accum = 1;
  CHECK(padded_rank_pace(w, plan) == ::hwplan::test::approx((32.0 / 33) / (4.0 / 5)).epsilon(0.01));
  plan.grad_accum = 4;
  plan.zero = 3;
  CHECK(padded_rank_pace(w, plan) == ::hwplan::test::approx((32.0 / 33) / (4.0 / 5)).epsilon(0.01));
  // DDP meeting once a step: the sums of 4 micro-batches differ less than single micro-batches do.
  plan.zero = 0;
  const double per_step = padded_rank_pace(w, plan);
  CHECK(per_step > 1);
  CHECK(per_step < (32.0 / 33) / (4.0 / 5));
  plan.grad_accum = 16;
  CHECK(padded_rank_pace(w, plan) < per_step);
  // More ranks wait longer; one rank waits for nobody.
  plan.grad_accum = 1;
  const double eight = padded_rank_pace(w, plan);
  plan.dp = 64;
  CHECK(padded_rank_pace(w, plan) > eight);
  plan.dp = 1;
  CHECK(padded_rank_pace(w, plan) == 1);

  // In an estimate: the wait is its own part of the step, in the table, in JSON and in a note, and packing has none.
  const std::string base = "estimate --model llama-3.2-3b --device a100-80gb-sxm --count 8 --tp 1 --pp 1 --task finetune "
                           "--batch 4 --seq 2048 --zero 3 --framework fsdp --format json";
  auto packed = json_of(base);
  auto unpacked = json_of(base + " --sample-tokens lognormal:300:0.8");
  auto single = json_of("estimate --model llama-3.2-3b --device a100-80gb-sxm --task finetune --batch 4 --seq 2048 "
                        "--framework fsdp --format json --sample-tokens lognormal:300:0.8");
  CHECK(packed["time"]["padding_wait_seconds"].get<double>() == 0);
  CHECK(single["time"]["padding_wait_seconds"].get<double>() == 0);
  const double wait = unpacked["time"]["padding_wait_seconds"].get<double>();
  CHECK(wait > 0);
  const double work = unpacked["time"]["forward_seconds"].get<double>() + unpacked["time"]["backward_seconds"].get<double>();
  CHECK(wait / work > 0.1);  // the longest of 32 heavy-tailed samples against the longest of 4
  CHECK(wait / work < 2.0);
  bool noted = false;
  for (const auto& n : unpacked["notes"]) noted = noted || n.get<std::string>().find("data-parallel ranks pads") != std::string::npos;
  CHECK(noted);
  auto table = test::run_hwplan("estimate --model llama-3.2-3b --device a100-80gb-sxm --count 8 --tp 1 --pp 1 --task finetune "
                                "--batch 4 --seq 2048 --zero 3 --framework fsdp --sample-tokens lognormal:300:0.8");
  CHECK(table.out.find("padding wait") != std::string::npos);
}

TEST_CASE("a CNN with listed convolutions draws them on its roofline below both roofs") {
  const auto& reg = test::registry();
  Model m = reg.model("resnet-50");
  const Device& a100 = reg.device("a100-80gb-sxm");
  EstimateInput in = cnn_input(m, a100, Task::kTrain, framework_preset(Framework::kFsdp), Precision::kFp16, 256);
  report::RooflineChart chart = report::roofline_chart(in, "train");
  bool found = false;
  for (const auto& p : chart.points) {
    if (p.label != "convolutions") continue;
    found = true;
    // ResNet-50's convolutions do tens of FLOPs per byte they move in 16 bits, and run below the memory roof there
    // and below the fp16 peak.
    CHECK(p.intensity_flop_per_byte > 10);
    CHECK(p.intensity_flop_per_byte < 1000);
    CHECK(p.achieved_flops_per_s < a100.memory_bandwidth_bytes_per_s * p.intensity_flop_per_byte);
    CHECK(p.achieved_flops_per_s < a100.peak(Precision::kFp16));
  }
  CHECK(found);
}

TEST_CASE("fp8 training's roofline draws the attention core at the bf16 rate the estimate prices it at") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-8b");
  const Device& h100 = reg.device("h100-sxm");
  EstimateInput in = input(m, h100, Task::kTrain, framework_preset(Framework::kMegatron));
  in.workload.seq = 8192;
  auto rate = [&](Precision p, const char* op) {
    in.workload.precision = p;
    for (const auto& pt : report::roofline_chart(in, "train").points)
      if (pt.label == op) return pt.achieved_flops_per_s;
    return 0.0;
  };
  const double bf16_attention = rate(Precision::kBf16, "flash-attention");
  REQUIRE(bf16_attention > 0);
  CHECK(rate(Precision::kFp8, "flash-attention") == ::hwplan::test::approx(bf16_attention));
  // The projections do run at the fp8 rate.
  CHECK(rate(Precision::kFp8, "mlp-up") > 1.2 * rate(Precision::kBf16, "mlp-up"));
}

TEST_CASE("before Ampere fused attention is the memory-efficient kernel, slower than FlashAttention-2, and says so") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3.2-1b");
  for (const char* id : {"v100-32gb-sxm", "t4"}) {
    CAPTURE(id);
    const Device& d = reg.device(id);
    EstimateInput in = input(m, d, Task::kTrain, framework_preset(Framework::kHfTrainer));
    in.workload.precision = Precision::kFp16;
    in.workload.seq = 4096;
    in.plan.micro_batch = 1;
    const Estimate slow = estimate(in);
    Assumptions flash_rate;
    flash_rate.memory_efficient_attention_fraction = 1.0;
    set_assumptions(flash_rate);
    const Estimate fast = estimate(in);
    set_assumptions(Assumptions{});
    CHECK(slow.train.step_seconds > fast.train.step_seconds);
    bool said = false;
    for (const auto& n : slow.notes) said = said || n.find("FlashAttention needs an Ampere or newer GPU") != std::string::npos;
    CHECK(said);
  }
  // An Ampere card runs FlashAttention-2 itself: nothing changes and nothing is said.
  EstimateInput a = input(m, reg.device("a100-80gb-sxm"), Task::kTrain, framework_preset(Framework::kHfTrainer));
  for (const auto& n : estimate(a).notes) CHECK(n.find("FlashAttention needs") == std::string::npos);
}

TEST_CASE("engine tensorrt is TensorRT-LLM's preset under the name the user gave") {
  auto trt = test::run_hwplan("estimate --model resnet-50 --device a10 --task infer --precision fp16 --batch 32 --engine tensorrt --format json");
  auto trtllm = test::run_hwplan("estimate --model resnet-50 --device a10 --task infer --precision fp16 --batch 32 --engine trtllm --format json");
  REQUIRE(trt.exit_code == 0);
  REQUIRE(trtllm.exit_code == 0);
  auto a = nlohmann::json::parse(trt.out), b = nlohmann::json::parse(trtllm.out);
  CHECK(a["stack"]["preset"] == "tensorrt");
  CHECK(b["stack"]["preset"] == "trtllm");
  CHECK(a["inference"]["samples_per_second"].get<double>() ==
        ::hwplan::test::approx(b["inference"]["samples_per_second"].get<double>()));
}

TEST_CASE("a CNN's speed-up hints name the CNN's own levers, not attention") {
  const auto& reg = test::registry();
  Model m = reg.model("resnet-50");
  const Device& a100 = reg.device("a100-80gb-sxm");
  auto notes = [&](Task task, Stack st) {
    std::string all;
    for (const auto& n : estimate(cnn_input(m, a100, task, std::move(st), Precision::kFp16, 256)).notes) all += n + "\n";
    return all;
  };
  const std::string train = notes(Task::kTrain, framework_preset(Framework::kFsdp));
  CHECK(train.find("--memory-format nhwc") != std::string::npos);
  CHECK(train.find("flash attention") == std::string::npos);
  const std::string infer = notes(Task::kInfer, engine_preset(Engine::kHf));
  CHECK(infer.find("--engine tensorrt") != std::string::npos);
  CHECK(notes(Task::kInfer, engine_preset(Engine::kTrtllm)).find("--engine tensorrt") == std::string::npos);
}

TEST_CASE("the litgpt preset is LitGPT's finetune scripts as their code sets them") {
  const Stack s = framework_preset(Framework::kLitgpt);
  CHECK(s.preset == "litgpt");
  CHECK(s.master_weights_fp32);  // precision bf16-mixed, the code's default for training: fp32 weights under autocast
  CHECK(s.autocast);
  CHECK(s.chunked_loss);               // lm_head_chunk_size=128 + chunked_cross_entropy
  CHECK_FALSE(s.fused_kernels);
  CHECK_FALSE(s.fused_optimizer);      // torch.optim.AdamW, foreach
  CHECK(s.foreach_optimizer);
  CHECK_FALSE(s.clip_grad_norm);       // TrainArgs.max_norm None
  CHECK(s.memory_metric == MemoryMetric::kAllocated);
  auto js = json_of("estimate --model llama-2-7b --device a100-80gb-sxm --task lora --framework litgpt --batch 4 --seq 512 "
                    "--format json");
  CHECK(js["stack"]["preset"] == "litgpt");
  // Its config_hub recipes' bf16-true: AdamW's two states in bf16 (4 bytes a parameter) against the Trainer's fp32
  // master copy and fp32 states (12).
  auto lit = json_of("estimate --model llama-2-7b --device a100-80gb-sxm --task finetune --framework litgpt --batch 1 "
                     "--seq 512 --master-weights none --autocast off --format json");
  auto hf = json_of("estimate --model llama-2-7b --device a100-80gb-sxm --task finetune --framework hf-trainer --batch 1 "
                    "--seq 512 --format json");
  CHECK(lit["memory"]["breakdown"]["optimizer"].get<double>() ==
        ::hwplan::test::approx(hf["memory"]["breakdown"]["optimizer"].get<double>() / 3).epsilon(1e-6));
  CHECK(test::run_hwplan("estimate --model 7b --device h100-sxm --framework litgpts").exit_code == 2);
}

TEST_CASE("the roofline draws quantized inference at the precision the estimate runs it in") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-8b");
  const Device& h100 = reg.device("h100-sxm");
  EstimateInput in = input(m, h100, Task::kInfer, engine_preset(Engine::kVllm));
  in.workload.prompt = 2048;
  auto qkv = [&](std::optional<WeightFormat> weights, std::string* title) {
    in.workload.weights = weights;
    report::RooflineChart chart = report::roofline_chart(in, "infer");
    *title = chart.title;
    for (const auto& pt : chart.points)
      if (pt.label == "qkv-proj") return pt.achieved_flops_per_s;
    return 0.0;
  };
  std::string t16, t8;
  const double bf16 = qkv(std::nullopt, &t16), fp8 = qkv(WeightFormat::kFp8, &t8);
  CHECK(t16.find("(bf16)") != std::string::npos);
  CHECK(t8.find("(fp8)") != std::string::npos);
  CHECK(fp8 > 1.3 * bf16);  // fp8 weights run fp8 GEMMs, as the estimate's prefill does
}

TEST_CASE("the roofline's title names the precision that runs, a fallback included") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-8b");
  EstimateInput in = input(m, reg.device("a100-80gb-sxm"), Task::kInfer, engine_preset(Engine::kVllm));
  in.workload.weights = WeightFormat::kFp8;  // no fp8 units on an A100: the estimate runs bf16 GEMMs
  CHECK(report::roofline_chart(in, "infer").title.find("(bf16)") != std::string::npos);
}

TEST_CASE("engines run where their software does: the default picks one that runs, and a mismatch is said") {
  const auto& reg = test::registry();
  const Model& llama = reg.model("llama-3.2-1b");
  CHECK(engine_runs_on(Engine::kVllm, reg.device("h100-sxm")));
  CHECK(engine_runs_on(Engine::kVllm, reg.device("mi300x")));
  CHECK(engine_runs_on(Engine::kVllm, reg.device("tpu-v5e")));   // vLLM's TPU backend
  CHECK(engine_runs_on(Engine::kVllm, reg.device("gaudi2")));    // vllm-gaudi
  CHECK_FALSE(engine_runs_on(Engine::kVllm, reg.device("apple-m2-max-gpu")));
  CHECK(engine_runs_on(Engine::kLlamacpp, reg.device("apple-m2-max-gpu")));  // Metal
  CHECK_FALSE(engine_runs_on(Engine::kLlamacpp, reg.device("apple-m4-ane")));  // Core ML schedules the ANE
  CHECK_FALSE(engine_runs_on(Engine::kTrtllm, reg.device("mi300x")));
  CHECK_FALSE(engine_runs_on(Engine::kHf, reg.device("coral-edge-tpu")));
  CHECK(default_engine(llama, reg.device("h100-sxm")) == Engine::kVllm);
  CHECK(default_engine(llama, reg.device("apple-m2-max-gpu")) == Engine::kLlamacpp);
  auto mac = test::run_hwplan("estimate --model llama-3.2-1b --device apple-m2-max-gpu --task infer");
  CHECK(mac.out.find("llamacpp (assumed; set --engine)") != std::string::npos);
  CHECK(mac.out.find("no engine preset runs") == std::string::npos);
  auto named = test::run_hwplan("estimate --model llama-3.2-1b --device apple-a17-pro-ane --task infer --engine vllm");
  CHECK(named.exit_code == 0);
  CHECK(named.out.find("vllm does not run on apple-a17-pro-ane (its software: coreml)") != std::string::npos);
  // An NPU runs its own runtime: the default there, named by the product, without a warning; another's is said.
  CHECK(engine_runs_on(Engine::kNpuRuntime, reg.device("coral-edge-tpu")));
  CHECK_FALSE(engine_runs_on(Engine::kNpuRuntime, reg.device("h100-sxm")));
  CHECK(default_engine(llama, reg.device("coral-edge-tpu")) == Engine::kNpuRuntime);
  CHECK(npu_runtime_of(reg.device("snapdragon-8-gen3-npu")) == "qnn");
  CHECK(npu_runtime_of(reg.device("apple-m4-ane")) == "coreml");
  const auto coral = test::run_hwplan("estimate --model llama-3.2-1b --device coral-edge-tpu --task infer");
  CHECK(coral.out.find("tflite (assumed; set --engine)") != std::string::npos);
  CHECK(coral.out.find("no engine preset runs") == std::string::npos);
  const auto foreign = test::run_hwplan("estimate --model resnet-50 --device coral-edge-tpu --task infer --engine coreml");
  CHECK(foreign.exit_code == 0);
  CHECK(foreign.out.find("coreml does not run on coral-edge-tpu (its software: tflite)") != std::string::npos);
  CHECK(test::run_hwplan("estimate --model resnet-50 --device coral-edge-tpu --task infer --engine tflite").out.find(
            "does not run") == std::string::npos);
  CHECK(test::run_hwplan("estimate --model resnet-50 --device h100-sxm --task infer --engine qnn").out.find(
            "qnn does not run on h100-sxm") != std::string::npos);
}

TEST_CASE("an NPU runtime: one invoke per forward pass, no per-op host cost, activations on chip, weights overlapped") {
  auto json = [](const std::string& args) { return nlohmann::json::parse(test::run_hwplan(args + " --format json").out); };
  const std::string base = "estimate --model resnet-50 --device snapdragon-8-gen3-npu --task infer --batch 1 --weights int8";
  const auto npu = json(base);
  CHECK(npu["stack"]["preset"] == "qnn");
  CHECK(npu["stack"]["invoke_seconds"].get<double>() == doctest::Approx(assumptions().npu_invoke_seconds));
  CHECK(npu["stack"]["on_chip_activations"].get<bool>());
  const double t = npu["inference"]["prefill_seconds"].get<double>();
  // Its floor: the invoke and the int8 weights read once from LPDDR5X; the same network issued op by op as eager
  // PyTorch (hf's behaviour, as before NPU runtimes were modelled) takes longer.
  const Device& d = test::registry().device("snapdragon-8-gen3-npu");
  const double weights = 25557032.0 / (d.memory_bandwidth_bytes_per_s * assumptions().bandwidth_efficiency);
  CHECK(t > assumptions().npu_invoke_seconds + weights);
  CHECK(t < json(base + " --engine hf")["inference"]["prefill_seconds"].get<double>());
  // The invoke is the runtime's and overridable: a millisecond more adds a millisecond, once.
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / ("hwplan_npu_invoke_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "npu_invoke_seconds: " << assumptions().npu_invoke_seconds + 1e-3 << "\n";
  const auto slower = json("--assumptions " + file.string() + " " + base);
  fs::remove(file);
  CHECK(slower["inference"]["prefill_seconds"].get<double>() == doctest::Approx(t + 1e-3));
}

TEST_CASE("a device without memory of its own caches what parameters fit on chip and streams the rest every pass") {
  auto json = [](const std::string& model) {
    return nlohmann::json::parse(
        test::run_hwplan("estimate --model " + model + " --device coral-edge-tpu --task infer --batch 1 --format json").out);
  };
  const Device& coral = test::registry().device("coral-edge-tpu");
  REQUIRE(coral.streams_parameters());
  CHECK_FALSE(test::registry().device("h100-sxm").streams_parameters());
  // MobileNet v2's 3.5 MB of int8 parameters fit in the 8 MiB: nothing streams.
  const auto small = json("mobilenet-v2");
  CHECK(small["memory"]["fits"].get<bool>());
  CHECK(small["memory"]["streamed_bytes"].get<double>() == 0);
  // VGG16's 138 MB do not: the SRAM holds the activations and what it can of the parameters, the rest streams over
  // USB 3 (0.4 GB/s realistic) while the layers compute, and the pass lasts at least that long.
  const auto big = json("vgg16");
  CHECK(big["memory"]["fits"].get<bool>());
  const double streamed = big["memory"]["streamed_bytes"].get<double>();
  // (int8 weights carry their scales: a little over a byte a parameter)
  const double cached = big["memory"]["breakdown"]["weights"].get<double>();
  CHECK(cached + streamed == doctest::Approx(138357544.0).epsilon(0.02));
  CHECK(cached > 0);
  CHECK(cached + big["memory"]["breakdown"]["activations"].get<double>() <= coral.plan_memory_bytes());
  CHECK(big["memory"]["host_bytes"].get<double>() >= streamed);
  const double link = coral.host_link.bytes_per_s() * assumptions().host_link_efficiency;
  CHECK(big["inference"]["prefill_seconds"].get<double>() > streamed / link);
  CHECK(big["inference"]["prefill_seconds"].get<double>() < streamed / link + 0.05);
  // Whatever else must stay on chip comes first: a language model's KV cache too, so a tiny one with a short context
  // fits (its parameters stream) and a batch of images too large for the SRAM is told to shrink the batch.
  auto gpt2 = nlohmann::json::parse(test::run_hwplan("estimate --model gpt2 --device coral-edge-tpu --task infer --prompt 2 "
                                                     "--generate 2 --format json").out);
  CHECK(gpt2["memory"]["fits"].get<bool>());
  CHECK(gpt2["memory"]["streamed_bytes"].get<double>() > 0);
  const auto batch = test::run_hwplan("estimate --model resnet-50 --device coral-edge-tpu --task infer --batch 8");
  CHECK(batch.out.find("a smaller batch or context (the parameters already stream from the host)") != std::string::npos);
  CHECK(batch.out.find("tensor parallelism") == std::string::npos);
  // serve has no KV cache to place there: it says so instead of sizing one.
  const auto served = test::run_hwplan("serve --model gpt2 --device coral-edge-tpu --concurrency 1 --prompt 8 --generate 8");
  CHECK(served.exit_code == 2);
  CHECK(served.err.find("has no memory of its own") != std::string::npos);
  // plot serve names the flag that gave the refused device: --devices here, not a --device never passed.
  const auto plotted = test::run_hwplan("plot serve --model gpt2 --devices rtx-4090,coral-edge-tpu --concurrency 1 "
                                        "--prompt 8 --generate 8 -o /dev/null");
  CHECK(plotted.exit_code == 2);
  CHECK(plotted.err.find("key '--devices'") != std::string::npos);
  CHECK(plotted.err.find("Coral") != std::string::npos);
  // Its decode is bound by the link the parameters cross, and says so.
  const auto decode = test::run_hwplan("estimate --model gpt2 --device coral-edge-tpu --task infer --prompt 2 --generate 2");
  CHECK(decode.out.find("decode is host-link-bound") != std::string::npos);
  // The Edge TPU runs only full-integer 8-bit models: another weight format or fp32 is priced as that int8 model.
  auto vgg = [](const std::string& extra) {
    return nlohmann::json::parse(test::run_hwplan("estimate --model vgg16 --device coral-edge-tpu --task infer --format json " +
                                                  extra).out)["inference"]["prefill_seconds"].get<double>();
  };
  const double int8 = vgg("");
  CHECK(vgg("--weights int4") == doctest::Approx(int8));
  CHECK(vgg("--weights fp16") == doctest::Approx(int8));
  CHECK(vgg("--precision fp32") == doctest::Approx(int8));
  CHECK(test::run_hwplan("estimate --model vgg16 --device coral-edge-tpu --task infer --weights int4").out.find(
            "--weights int4 priced as int8") != std::string::npos);
}

TEST_CASE("an NPU runtime keeps no CUDA context, and serve on an NPU names what it assumes") {
  auto npu = nlohmann::json::parse(test::run_hwplan("estimate --model mobilenet-v2 --device apple-m4-ane --task infer "
                                                    "--batch 1 --format json").out);
  CHECK(npu["stack"]["preset"] == "coreml");
  CHECK(npu["memory"]["breakdown"]["runtime"].get<double>() == 0);
  CHECK(test::run_hwplan("estimate --model mobilenet-v2 --device apple-m4-ane --task infer --engine npu-runtime").exit_code == 0);
  // Apple's GPUs list Core ML too, but Core ML schedules them through Metal: no NPU graph there by default.
  CHECK(npu_runtime_of(test::registry().device("apple-m2-max-gpu")).empty());
  const auto served = test::run_hwplan("serve --model llama-3.2-1b --device snapdragon-8-gen3-npu --rate 0.1 --prompt 200 "
                                       "--generate 50 --requests 50 --format json");
  REQUIRE(served.exit_code == 0);
  const auto j = nlohmann::json::parse(served.out);
  CHECK(j["engine"]["preset"].get<std::string>().find("qnn") != std::string::npos);
  // Named, the same.
  CHECK(test::run_hwplan("serve --model llama-3.2-1b --device snapdragon-8-gen3-npu --rate 0.1 --prompt 200 --generate 50 "
                         "--requests 50 --engine qnn").exit_code == 0);
  // A GPU stack's switches do not apply to an NPU's compiled graph: said, and nothing moves.
  const std::string base = "estimate --model mobilenet-v2 --device coral-edge-tpu --task infer --format json";
  const double t = nlohmann::json::parse(test::run_hwplan(base).out)["inference"]["prefill_seconds"].get<double>();
  const auto set = test::run_hwplan(base + " --host-kernel-us 50 --fused-kernels off --cuda-graphs on --memory-format nchw");
  const auto sj = nlohmann::json::parse(set.out);
  CHECK(sj["inference"]["prefill_seconds"].get<double>() == doctest::Approx(t));
  CHECK(sj["stack"]["overridden"].empty());
  bool said = false;
  for (const auto& w : sj["warnings"]) said = said || w.get<std::string>().find("ignored by tflite: --fused-kernels") == 0;
  CHECK(said);
  // A CNN's rate is samples, in recommend's reasons and estimate's note alike.
  const auto ranked = test::run_hwplan("recommend --model mobilenet-v2 --task infer --class edge");
  CHECK(ranked.out.find("samples/s per watt of its rated power") != std::string::npos);
  CHECK(ranked.out.find("tokens/s per watt") == std::string::npos);
  CHECK(test::run_hwplan("estimate --model resnet-50 --device coral-edge-tpu --task infer").out.find(
            "(18.6 samples/s)") != std::string::npos);
  // Core ML named on an Apple GPU, which lists it: said as what it is.
  CHECK(test::run_hwplan("estimate --model mobilenet-v2 --device apple-m4-max-gpu --task infer --engine coreml").out.find(
            "coreml is not an NPU runtime on apple-m4-max-gpu") != std::string::npos);
}

TEST_CASE("FSDP2's gather copy-out: a read and a write of each gathered layer, twice a micro-batch, on the compute stream") {
  auto step = [](const std::string& extra) {
    auto j = nlohmann::json::parse(test::run_hwplan("estimate --model llama-3.1-70b --device a100-80gb-sxm --task lora --batch 2 "
                                                    "--seq 2048 --zero 3 --recompute full --lora-targets qv --framework torchtune "
                                                    "--format json " + extra).out);
    return std::make_pair(j["time"]["step_seconds"].get<double>(), j["stack"]["gather_copy_out"].get<bool>());
  };
  const auto on = step("--count 8"), off = step("--count 8 --gather-copy-out off");
  CHECK(on.second);
  CHECK_FALSE(off.second);
  // Every rank gathers the whole model in turn, 141 GB of bf16, read and written twice a micro-batch at ~1.7 TB/s:
  // about 0.33 s.
  CHECK(on.first - off.first == ::hwplan::test::approx(0.33).epsilon(0.15));
  // One device shards nothing: nothing gathered, nothing copied.
  CHECK(step("--count 1 --offload params").first == ::hwplan::test::approx(step("--count 1 --offload params --gather-copy-out off").first));
}

TEST_CASE("the roofline's measured memory roof is what the largest copies sustain, not a size that stays in cache") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-2-7b");
  EstimateInput in = input(m, reg.device("h200-sxm"), Task::kTrain, framework_preset(Framework::kMegatron));
  Profile p;
  p.catalog_id = "h200-sxm";
  const double mib = 1024.0 * 1024.0;
  p.bandwidth = {{8 * mib, 2.5e12}, {32 * mib, 6.3e12}, {256 * mib, 4.0e12}, {1024 * mib, 4.02e12}, {4096 * mib, 4.15e12}};
  in.profile = &p;
  const double roof = report::roofline_chart(in, "train").measured_bandwidth_bytes_per_s;
  CHECK(roof == test::approx(4.15e12));
  CHECK(roof < reg.device("h200-sxm").memory_bandwidth_bytes_per_s);
}

TEST_CASE("an inference roofline draws the decode step beside the prefill's operators, under the memory roof") {
  const auto& reg = test::registry();
  Model m = reg.model("llama-3-8b");
  const Device& h100 = reg.device("h100-sxm");
  EstimateInput in = input(m, h100, Task::kInfer, engine_preset(Engine::kVllm));
  in.plan.micro_batch = 8;
  const auto chart = report::roofline_chart(in, "infer");
  const report::RooflinePoint* decode = nullptr;
  for (const auto& p : chart.points)
    if (p.label == "decode step (batch 8)") decode = &p;
  REQUIRE(decode != nullptr);
  // Eight tokens per weight read: about 8 FLOP/byte, memory-bound, below the bandwidth roof at that intensity.
  CHECK(decode->intensity_flop_per_byte > 4);
  CHECK(decode->intensity_flop_per_byte < 16);
  CHECK(decode->achieved_flops_per_s < decode->intensity_flop_per_byte * h100.memory_bandwidth_bytes_per_s);
  CHECK(decode->achieved_flops_per_s > 0.3 * decode->intensity_flop_per_byte * h100.memory_bandwidth_bytes_per_s);
  // Two pipeline stages: each device runs half the layers in its half of the step, the same rate per device.
  EstimateInput staged = in;
  staged.system.count = 2;
  staged.plan.pp = 2;
  for (const auto& p : report::roofline_chart(staged, "infer").points)
    if (p.label == "decode step (batch 8)")
      CHECK(p.achieved_flops_per_s == doctest::Approx(decode->achieved_flops_per_s).epsilon(0.15));
  // Generating nothing draws no decode step.
  in.workload.generate = 0;
  for (const auto& p : report::roofline_chart(in, "infer").points) CHECK(p.label.find("decode") == std::string::npos);
}

TEST_CASE("the roofline draws an NPU graph's convolutions as the estimate times them") {
  const auto& reg = test::registry();
  Model m = reg.model("mobilenet-v2");
  const Device& npu = reg.device("snapdragon-8-gen3-npu");
  Stack st = engine_preset(Engine::kNpuRuntime);
  EstimateInput in = input(m, npu, Task::kInfer, st);
  in.workload.weights = WeightFormat::kInt8;
  double flops = 0, rate = 0;
  for (const auto& pt : report::roofline_chart(in, "infer").points)
    if (pt.label == "convolutions") {
      rate = pt.achieved_flops_per_s;
      flops = m.forward_flops_per_sample;
    }
  REQUIRE(rate > 0);
  // The point's time is the estimate's forward pass without its invoke (no launch floors, 8-bit tensors).
  const Estimate e = estimate(in);
  CHECK(flops / rate == ::hwplan::test::approx(e.infer.prefill_seconds - st.invoke_seconds).epsilon(0.02));
}

TEST_CASE("a stack switch given where it changes nothing is said to have no effect") {
  auto warned = [](const std::string& args, const std::string& flag) {
    const auto j = nlohmann::json::parse(hwplan::test::run_hwplan("estimate --format json " + args).out);
    for (const auto& w : j["warnings"])
      if (w.get<std::string>().find("no effect here: " + flag) != std::string::npos) return true;
    return false;
  };
  const std::string infer = "--model llama-3-8b --device h100-sxm --task infer --engine vllm ";
  CHECK(warned(infer + "--quantized-head on", "--quantized-head"));
  CHECK_FALSE(warned(infer + "--quantized-head on --weights int4", "--quantized-head"));
  // --host-kernel-us scales the engine's per-step host work too, which CUDA graphs do not remove: it has an effect.
  CHECK_FALSE(warned(infer + "--host-kernel-us 5", "--host-kernel-us"));
  const std::string train = "--model llama-3-8b --device h100-sxm --count 8 --batch 1 --seq 2048 ";
  CHECK(warned(train + "--zero 2 --gather-copy-out on", "--gather-copy-out"));
  CHECK(warned(train + "--zero 1 --zero3-live-params 1e8", "--zero3-live-params"));
  CHECK_FALSE(warned(train + "--zero 3 --gather-copy-out on", "--gather-copy-out"));
  // Where the search chose the stage, the switch may have steered it off ZeRO-3: not said to be without effect.
  CHECK_FALSE(warned("--model llama-2-13b --device h100-sxm --count 8 --task finetune --seq 2048 --global-batch 64 "
                     "--framework fsdp --gather-copy-out on", "--gather-copy-out"));
}
