// Formula-level references for the memory estimator.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "core/units.hpp"
#include "estimators/estimate.hpp"
#include "estimators/memory.hpp"
#include "estimators/stack.hpp"
#include "test_util.hpp"

using namespace hwplan;

namespace {

Model gpt_like(std::int64_t layers, std::int64_t h, std::int64_t heads) {
  Model m;
  m.id = "gpt-like";
  m.family = ModelFamily::kDecoder;
  m.layers = layers;
  m.hidden_size = h;
  m.attention_heads = m.kv_heads = heads;
  m.head_dim = h / heads;
  m.ffn_hidden_size = 4 * h;
  m.ffn_activation = Activation::kGelu;
  m.vocab_size = 51200;
  m.max_sequence_length = 2048;
  m.tied_embeddings = true;
  m.position_embedding = PositionEmbedding::kLearned;
  m.norm = NormKind::kLayerNorm;
  m.linear_bias = LinearBias::kAll;
  m.dropout = true;
  return m;
}

// Model-state bytes (weights, gradients, optimizer) per parameter of a 7.5B model on 64 data-parallel A100s under
// ZeRO stage `zero`; the layers ZeRO-3 holds gathered are not model state and are left out.
double model_state_bytes(const Workload& w, int zero) {
  static const Model m = test::registry().model("7.5b");
  const ParameterCounts c = count_parameters(m);
  Plan p;
  p.dp = 64;
  p.zero = zero;
  const MemoryBreakdown mem = training_memory(m, c, test::registry().device("a100-80gb-sxm"), w, p);
  const double gathered = zero >= 3 ? 2 * c.layer_total() * 2 : 0;
  return (mem.weights - gathered + mem.gradients + mem.optimizer) / c.total;
}

}  // namespace

TEST_CASE("per-layer activations reproduce Korthikanti et al. 2022, eq. 1-4") {
  // 16-bit activations with dropout: s b h (34 + 5 a s / h) bytes per layer without parallelism (eq. 1);
  // s b h (10 + 24/t + 5 a s / (h t)) with tensor parallelism (eq. 2); s b h (34/t + 5 a s/(h t)) with
  // sequence parallelism (eq. 3); selective recomputation drops the 5 a s / h term (eq. 4). Exact.
  Model m = gpt_like(96, 12288, 96);
  Workload w;
  w.precision = Precision::kBf16;
  w.seq = 2048;
  w.attention = Attention::kEager;
  const double s = 2048, b = 1, h = 12288, a = 96;
  Plan p;
  p.sequence_parallel = false;
  CHECK(layer_activation_bytes(m, w, p, b) == ::hwplan::test::approx(s * b * h * (34 + 5 * a * s / h)));
  p.tp = 8;
  CHECK(layer_activation_bytes(m, w, p, b) == ::hwplan::test::approx(s * b * h * (10 + 24.0 / 8 + 5 * a * s / (h * 8))));
  p.sequence_parallel = true;
  CHECK(layer_activation_bytes(m, w, p, b) == ::hwplan::test::approx(s * b * h * (34.0 / 8 + 5 * a * s / (h * 8))));
  p.recompute = Recompute::kSelective;
  CHECK(layer_activation_bytes(m, w, p, b) == ::hwplan::test::approx(s * b * h * 34.0 / 8));
  p.recompute = Recompute::kFull;
  CHECK(layer_activation_bytes(m, w, p, b) == ::hwplan::test::approx(s * b * h * 2 / 8));
  // Flash attention never stores the s x s scores.
  w.attention = Attention::kFlash;
  p.recompute = Recompute::kNone;
  CHECK(layer_activation_bytes(m, w, p, b) == ::hwplan::test::approx(s * b * h * 34.0 / 8));
}

TEST_CASE("ZeRO model-state bytes per parameter (Rajbhandari et al. 2020, Figure 1)") {
  // Mixed-precision Adam keeps 2 + 2 + 12 = 16 bytes per parameter; across N = 64 devices ZeRO-1 leaves
  // 4 + 12/N, ZeRO-2 2 + 14/N, ZeRO-3 16/N. For 7.5B parameters the paper gives 120 GB, 31.4 GB, 16.6 GB
  // and 1.9 GB (tolerance 1%; ZeRO-3 also holds the gathered layers, subtracted here).
  Workload w;
  w.precision = Precision::kBf16;
  w.seq = 2048;
  auto states = [&](int zero) { return model_state_bytes(w, zero); };
  CHECK(states(0) == ::hwplan::test::approx(16).epsilon(0.01));
  CHECK(states(1) == ::hwplan::test::approx(4 + 12.0 / 64).epsilon(0.01));
  CHECK(states(2) == ::hwplan::test::approx(2 + 14.0 / 64).epsilon(0.01));
  CHECK(states(3) == ::hwplan::test::approx(16.0 / 64).epsilon(0.01));
}

TEST_CASE("Megatron keeps bf16 training's gradients in fp32: its README's bytes per parameter") {
  // Megatron-LM's README (distributed optimizer): "bf16 param, fp32 grads: 18 bytes per parameter; with the
  // distributed optimizer 6 + 12/d"; "fp16 param, fp16 grads" keeps 2-byte gradients.
  Workload w;
  w.precision = Precision::kBf16;
  w.seq = 2048;
  w.stack = framework_preset(Framework::kMegatron);
  REQUIRE(w.stack.fp32_grads);
  auto states = [&](int zero) { return model_state_bytes(w, zero); };
  CHECK(states(0) == ::hwplan::test::approx(18).epsilon(0.01));
  CHECK(states(1) == ::hwplan::test::approx(6 + 12.0 / 64).epsilon(0.01));
  w.precision = Precision::kFp16;
  CHECK(states(1) == ::hwplan::test::approx(4 + 12.0 / 64).epsilon(0.01));
  w.precision = Precision::kBf16;
  w.stack.fp32_grads = false;  // NeMo's performance recipes: grad_reduce_in_fp32 False
  CHECK(states(1) == ::hwplan::test::approx(4 + 12.0 / 64).epsilon(0.01));
  // And the data-parallel reduce-scatter carries 4 bytes a gradient instead of 2: a longer reduction.
  const Model m = test::registry().model("7.5b");
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device("a100-80gb-sxm");
  in.system.count = 64;
  in.workload = w;
  in.plan.dp = 64;
  in.plan.zero = 1;
  in.plan.micro_batch = 1;
  const double sixteen = estimate(in).train.dp_comm_seconds;
  in.workload.stack.fp32_grads = true;
  const double thirty_two = estimate(in).train.dp_comm_seconds;
  CHECK(thirty_two > 1.3 * sixteen);
  CHECK(thirty_two < 1.6 * sixteen);  // reduce-scatter doubles; the parameter all-gather stays 16-bit
}

TEST_CASE("torchtitan reduce-scatters FSDP gradients in fp32, as its shipped config says") {
  // torchtitan's training config: mixed_precision_param "bfloat16", mixed_precision_reduce "float32" (FSDP2's
  // MixedPrecisionPolicy). Each micro-batch's gradient reduce-scatter carries 4 bytes a parameter; the parameter
  // all-gathers stay 16-bit. The fsdp preset (FSDP1 recipes with MixedPrecision(bf16, bf16)) reduces in bf16.
  REQUIRE(framework_preset(Framework::kTorchtitan).fp32_grads);
  REQUIRE_FALSE(framework_preset(Framework::kFsdp).fp32_grads);
  const Model m = test::registry().model("llama-3-8b");
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device("h100-sxm");
  in.system.count = 128;
  in.workload.precision = Precision::kBf16;
  in.workload.seq = 8192;
  in.workload.stack = framework_preset(Framework::kTorchtitan);
  in.plan.dp = 128;
  in.plan.zero = 3;
  in.plan.micro_batch = 1;
  const auto fp32 = estimate(in).train;
  in.workload.stack.fp32_grads = false;
  const auto bf16 = estimate(in).train;
  // Two 16-bit gathers and one reduce-scatter: 2 + 2 + 2 bytes a parameter become 2 + 2 + 4.
  CHECK(fp32.dp_comm_seconds / bf16.dp_comm_seconds == ::hwplan::test::approx(8.0 / 6).epsilon(0.03));
  CHECK(fp32.step_seconds > bf16.step_seconds);
}

TEST_CASE("accumulation under no_sync holds each rank's whole gradients in the reduce dtype, and reduces once a step") {
  // FSDP2 with set_requires_gradient_sync(False) before the last micro-batch (KempnerForge's maybe_no_sync, accelerate's
  // accumulate() under FSDP, Lightning Fabric's no_backward_sync): the unsharded gradients accumulate, upcast to the
  // policy's reduce dtype, until one reduce-scatter in the last micro-batch's backward.
  REQUIRE(framework_preset(Framework::kHfTrainer).defer_grad_sync);
  REQUIRE(framework_preset(Framework::kLitgpt).defer_grad_sync);
  REQUIRE_FALSE(framework_preset(Framework::kFsdp).defer_grad_sync);
  REQUIRE_FALSE(framework_preset(Framework::kDeepspeed).defer_grad_sync);
  REQUIRE_FALSE(framework_preset(Framework::kTorchtitan).defer_grad_sync);
  const Model m = test::registry().model("llama-3-70b");
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device("h200-sxm");
  in.system.count = 64;
  in.system.devices_per_node = 4;
  in.workload.precision = Precision::kBf16;
  in.workload.seq = 4096;
  in.workload.stack = framework_preset(Framework::kTorchtitan);
  in.workload.stack.master_weights_fp32 = false;
  in.workload.stack.fp32_grads = false;
  in.workload.stack.fp32_reduce = true;
  in.plan.tp = 4;
  in.plan.dp = 16;
  in.plan.zero = 3;
  in.plan.micro_batch = 2;
  in.plan.grad_accum = 4;
  in.plan.recompute = Recompute::kFull;
  const auto every = estimate(in);
  in.workload.stack.defer_grad_sync = true;
  const auto deferred = estimate(in);
  // The rank's stage: 70.6B / tp 4 parameters, 4 bytes each, where sharded they were 2 bytes over 16 ranks.
  const double stage = every.params.total / 4;
  CHECK(deferred.memory.gradients == ::hwplan::test::approx(stage * 4).epsilon(0.01));
  CHECK(every.memory.gradients == ::hwplan::test::approx(stage * 2 / 16).epsilon(0.01));
  // One reduce-scatter a step instead of four; the gathers stay per micro-batch.
  CHECK(deferred.train.dp_comm_seconds < every.train.dp_comm_seconds);
  // Without accumulation, or with gradients not sharded, nothing changes.
  in.plan.grad_accum = 1;
  in.workload.stack.defer_grad_sync = false;
  const double one = estimate(in).memory.gradients;
  in.workload.stack.defer_grad_sync = true;
  CHECK(estimate(in).memory.gradients == ::hwplan::test::approx(one));
  // fp32_reduce: 4 bytes a gradient on the link, the sharded gradients stay 2.
  in.workload.stack.defer_grad_sync = false;
  const auto fp32_link = estimate(in);
  in.workload.stack.fp32_reduce = false;
  const auto bf16_link = estimate(in);
  CHECK(fp32_link.memory.gradients == ::hwplan::test::approx(bf16_link.memory.gradients));
  CHECK(fp32_link.train.dp_comm_seconds > bf16_link.train.dp_comm_seconds);
}

TEST_CASE("under deferred gradient sync the layout search and fit still find the micro-batch that needs no accumulation") {
  // Memory no longer grows with the micro-batch at a fixed global batch: accumulation-1 holds no unsharded gradients.
  // Llama 3 8B fine-tuning on 8 L40S with the Trainer's no_sync accumulation: 2 sequences a device fit, 1 x 2 do not.
  auto j = nlohmann::json::parse(
      test::run_hwplan("estimate --model llama-3-8b --task finetune --device l40s --count 8 --global-batch 16 --format json").out);
  CHECK(j["memory"]["fits"] == true);
  CHECK(j["plan"]["grad_accum"] == 1);
  // Also where that micro-batch is not a power of two: 24 sequences over 8 devices, 3 each.
  auto odd = nlohmann::json::parse(
      test::run_hwplan("estimate --model llama-3-8b --task finetune --device l40s --count 8 --global-batch 24 --format json").out);
  CHECK(odd["memory"]["fits"] == true);
  CHECK(odd["plan"]["micro_batch"] == 3);
  // A micro-batch the user gives is never replaced by it.
  auto given = test::run_hwplan("estimate --model llama-3-8b --task finetune --device l40s --count 8 --global-batch 24 --batch 2");
  CHECK(given.exit_code != 0);
  CHECK(given.err.find("micro-batches of 2") != std::string::npos);
  auto fit = test::run_hwplan("fit --model llama-3-8b --device h100-sxm --count 8 --framework hf-trainer --task finetune "
                              "--seq 2048 --recompute full --zero 3 --tp 1 --batch 1 --grad-accum 8 --headroom 0.38");
  CHECK(fit.out.find("--batch 8") != std::string::npos);
  // fit names the stack's way out: reduce in every micro-batch.
  auto seventy = test::run_hwplan("fit --model llama-3-70b --device h100-sxm --framework hf-trainer --task finetune --count 8");
  CHECK(seventy.out.find("--defer-grad-sync off") != std::string::npos);
  // And estimate says so where the held gradients are the largest part.
  auto said = test::run_hwplan("estimate --model llama-3-70b --device h100-sxm --framework hf-trainer --task finetune --count 8 "
                               "--zero 3 --batch 1 --grad-accum 8");
  CHECK(said.out.find("held unsharded until the last of the 8 micro-batches") != std::string::npos);
}

TEST_CASE("with expert parallelism the dense parameters' gradients are still reduced over the data-parallel ranks") {
  // DeepSeek-V3's first three layers have a dense MLP: the experts are the other 58 layers' MLPs. Counting every
  // layer's MLP as experts left the dense part negative and the data-parallel reduction at zero.
  const Model m = test::registry().model("deepseek-v3");
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device("h100-sxm");
  in.system.count = 256;
  in.workload.precision = Precision::kBf16;
  in.workload.seq = 4096;
  in.workload.stack = framework_preset(Framework::kTorchtitan);
  in.plan.pp = 4;
  in.plan.dp = 64;
  in.plan.ep = 64;
  in.plan.zero = 3;
  in.plan.micro_batch = 1;
  in.plan.grad_accum = 8;
  in.plan.recompute = Recompute::kFull;
  const auto e = estimate(in);
  CHECK(e.train.dp_comm_seconds > 1.0);
  // FSDP2's copy-out splits what the rank gathered: the dense part (ep 64 over 64 data-parallel ranks leaves each
  // rank's experts whole and ungathered), not all 671B parameters' worth of a stage.
  in.workload.stack.gather_copy_out = false;
  const auto without = estimate(in);
  const double dense = (e.params.total - e.params.mlp_per_layer * (m.total_layers() - e.params.dense_layers)) / 4 * 2;
  const double copy_out = (e.train.forward_seconds - without.train.forward_seconds) / 8;  // per micro-batch
  CHECK(copy_out < 3 * dense / test::registry().device("h100-sxm").memory_bandwidth_bytes_per_s);
}

TEST_CASE("a loss that is not vocabulary-parallel holds the whole logits on every tensor-parallel rank") {
  // PyTorch's ColwiseParallel(output_layouts=Replicate()) on the output projection and a plain cross-entropy: each of
  // the tp ranks holds the gathered logits and their fp32 loss tensors, and gathers them once per forward.
  REQUIRE(framework_preset(Framework::kMegatron).loss_parallel);
  REQUIRE(framework_preset(Framework::kTorchtitan).loss_parallel);
  REQUIRE_FALSE(framework_preset(Framework::kFsdp).loss_parallel);
  REQUIRE_FALSE(framework_preset(Framework::kTorchtune).loss_parallel);
  const Model m = test::registry().model("llama-3-8b");
  EstimateInput in;
  in.model = &m;
  in.device = &test::registry().device("h200-sxm");
  in.system.count = 4;
  in.workload.precision = Precision::kBf16;
  in.workload.seq = 4096;
  in.workload.stack = framework_preset(Framework::kTorchtitan);
  in.plan.tp = 4;
  in.plan.micro_batch = 4;
  in.plan.recompute = Recompute::kFull;
  const auto sharded = estimate(in);
  in.workload.stack.loss_parallel = false;
  const auto gathered = estimate(in);
  // 16,384 tokens x 128,256 entries x 12 bytes (the eager loss's fp32 tensors; fused kernels off in the preset) on
  // each rank instead of a quarter of it: about 19 GiB more.
  const double logits = 4.0 * 4096 * 128256 * 12;
  CHECK(gathered.memory.activations - sharded.memory.activations == ::hwplan::test::approx(logits * 3 / 4).epsilon(0.05));
  CHECK(gathered.train.tp_comm_seconds > sharded.train.tp_comm_seconds);
  CHECK(gathered.train.step_seconds > sharded.train.step_seconds);
  // Without tensor parallelism the two are the same.
  in.plan.tp = 1;
  in.system.count = 1;
  const double one = estimate(in).memory.activations;
  in.workload.stack.loss_parallel = true;
  CHECK(estimate(in).memory.activations == ::hwplan::test::approx(one));
  // Without a vocabulary projection there is nothing to gather: the switch changes nothing.
  in.plan.tp = 4;
  in.system.count = 4;
  in.workload.lm_head = false;
  const double head_off = estimate(in).train.step_seconds;
  in.workload.stack.loss_parallel = false;
  CHECK(estimate(in).train.step_seconds == ::hwplan::test::approx(head_off));
}

TEST_CASE("KV cache sizes") {
  // 2 (K and V) x layers x kv_heads x head_dim x tokens x bytes: Llama-2-7B at 4096 tokens in fp16 is exactly
  // 2 GiB per sequence; Llama-3-8B's 8 KV heads (GQA) make it 512 MiB.
  Device d = test::registry().device("h100-sxm");
  auto kv = [&](const std::string& id) {
    Model m = test::registry().model(id);
    Workload w;
    w.task = Task::kInfer;
    w.precision = Precision::kFp16;
    w.kv_cache = Precision::kFp16;
    w.prompt = 4000;
    w.generate = 96;
    Plan p;
    return inference_memory(m, count_parameters(m), d, w, p).kv_cache;
  };
  CHECK(kv("llama-2-7b") == 2.0 * kGiB);
  CHECK(kv("llama-3-8b") == 0.5 * kGiB);
}

TEST_CASE("QLoRA: 65B fine-tuning fits one 48 GB GPU, and 16-bit full fine-tuning needs more than 780 GB") {
  // Dettmers et al. 2023 (QLoRA), abstract and Sec. 1. Setting as in the paper: rank 64 on all linear layers,
  // gradient checkpointing, micro-batch 1, sequence 512, paged AdamW.
  Model m = test::registry().model("llama-65b");
  Device d = test::registry().device("a100-80gb-sxm");
  EstimateInput in;
  in.model = &m;
  in.device = &d;
  in.workload.task = Task::kQlora;
  in.workload.lora_rank = 64;
  in.workload.seq = 512;
  in.plan.recompute = Recompute::kFull;
  Estimate e = estimate(in);
  // The "48 GB" cards of the paper (RTX A6000, A40) expose 48 GiB (nvidia-smi: 49140 MiB).
  CHECK(e.memory.total() < 48 * kGiB);
  CHECK(e.memory.total() > 30e9);  // the 4-bit weights alone are ~34 GB

  in.workload.task = Task::kFinetune;
  Estimate full = estimate(in);
  CHECK(full.memory.total() > 780e9);
}

TEST_CASE("QLoRA keeps the embedding and the output projection in 16 bits") {
  // bitsandbytes converts the nn.Linear modules and leaves lm_head out; torchtune's NF4 wraps the LoRA-adapted
  // projections. Llama 3.1 8B: 2 x 128,256 x 4,096 parameters in bf16 beside its layers' NF4 weights.
  const Model m = test::registry().model("llama-3.1-8b");
  const ParameterCounts c = count_parameters(m);
  Workload w;
  w.task = Task::kQlora;
  w.lora_rank = 8;
  const MemoryBreakdown mem = training_memory(m, c, test::registry().device("rtx-4090"), w, Plan{});
  const double ends = c.embedding + c.output;
  CHECK(c.embedding == ::hwplan::test::approx(128256.0 * 4096).epsilon(0.001));
  const double adapters = lora_parameters(m, w.lora_rank, w.lora_targets) * 2;
  CHECK(mem.weights - adapters == ::hwplan::test::approx((c.total - ends) * bytes_per_param(WeightFormat::kNf4) + ends * 2));
}

TEST_CASE("with full recomputation the loss's peak and the recomputed layer's are not held at once") {
  // The output projection's backward consumes and frees the logits before the first layer is recomputed: the
  // device holds the kept activations plus the larger of the two.
  const Model m = test::registry().model("llama-3.2-3b");
  const ParameterCounts c = count_parameters(m);
  const Device& d = test::registry().device("a100-80gb-sxm");
  Workload w;
  w.seq = 4096;
  w.stack.fused_kernels = true;
  Plan p;
  p.micro_batch = 2;
  p.recompute = Recompute::kFull;
  const double kept = m.total_layers() * layer_activation_bytes(m, w, p, 2);
  Plan none = p;
  none.recompute = Recompute::kNone;
  const double rebuilt = layer_activation_bytes(m, w, none, 2);
  const double logits = 2.0 * 4096 * m.vocab_size * (2 + 8);  // fused loss: bf16 logits and two fp32 copies
  CHECK(logits > rebuilt);
  CHECK(training_memory(m, c, d, w, p).activations == ::hwplan::test::approx(kept + logits).epsilon(1e-9));
  // Without the vocabulary projection (a span or classification head): the recomputed layer sets the peak.
  w.lm_head = false;
  CHECK(training_memory(m, c, d, w, p).activations == ::hwplan::test::approx(kept + rebuilt).epsilon(1e-9));
}

TEST_CASE("gradient accumulation keeps the gradients between micro-batches, and nothing else") {
  Model m = test::registry().model("llama-2-7b");
  Device d = test::registry().device("a100-80gb-sxm");
  EstimateInput in;
  in.model = &m;
  in.device = &d;
  in.plan.micro_batch = 2;
  // Persistent gradient buffers (Megatron, DeepSpeed): accumulating changes nothing.
  in.workload.stack.persistent_grads = true;
  const Estimate persistent = estimate(in);
  in.plan.grad_accum = 16;
  CHECK(estimate(in).memory.total() == persistent.memory.total());
  // Gradients freed between steps (one eager process): without accumulation backward makes them as it frees the
  // activations, so the peak holds only the first ones beside all the activations; accumulating keeps them all.
  in.workload.stack.persistent_grads = false;
  const Estimate accumulating = estimate(in);
  CHECK(accumulating.memory.total() == persistent.memory.total());
  in.plan.grad_accum = 1;
  const Estimate transient = estimate(in);
  CHECK(transient.memory.activations == accumulating.memory.activations);
  CHECK(transient.memory.gradients < accumulating.memory.gradients / 10);
  // Llama 2 7B's untied output projection (32,000 x 4,096) in bf16.
  CHECK(transient.memory.gradients == ::hwplan::test::approx(32000.0 * 4096 * 2).epsilon(0.01));
}

TEST_CASE("DeepSpeed ZeRO-3 keeps up to stage3_max_live_parameters gathered, FSDP the current and next layer") {
  // deepspeed/runtime/zero/config.py: max_live_parameters and max_reuse_distance default to 1e9 parameters.
  REQUIRE(framework_preset(Framework::kDeepspeed).zero3_live_parameters == 1e9);
  REQUIRE(framework_preset(Framework::kFsdp).zero3_live_parameters == 0);
  const Model m = test::registry().model("llama-2-7b");
  const ParameterCounts c = count_parameters(m);
  const Device& d = test::registry().device("a100-80gb-sxm");
  Workload w;
  w.precision = Precision::kBf16;
  w.seq = 2048;
  w.task = Task::kFinetune;
  Plan p;
  p.dp = 8;
  p.zero = 3;
  w.stack = framework_preset(Framework::kFsdp);
  const double fsdp = training_memory(m, c, d, w, p).weights;
  w.stack = framework_preset(Framework::kDeepspeed);
  const double deepspeed = training_memory(m, c, d, w, p).weights;
  // Llama 2 7B's layers hold 202M parameters: FSDP gathers two (0.4B), DeepSpeed keeps 1e9, in 16 bits.
  CHECK(deepspeed - fsdp == ::hwplan::test::approx((1e9 - 2 * c.layer_total()) * 2).epsilon(1e-9));
  // A cap above the model keeps all of it; with parameters offloaded the device holds only what is gathered.
  w.stack.zero3_live_parameters = 1e12;
  CHECK(training_memory(m, c, d, w, p).weights == ::hwplan::test::approx(c.total * 2 / 8 + c.total * 2).epsilon(1e-9));
  w.stack.zero3_live_parameters = 1e9;
  p.offload = Offload::kParams;
  CHECK(training_memory(m, c, d, w, p).weights == ::hwplan::test::approx(1e9 * 2).epsilon(1e-9));
}

TEST_CASE("inference replicas that never talk to each other carry no communication buffers") {
  auto memory = [](const std::string& layout) {
    return nlohmann::json::parse(::hwplan::test::run_hwplan("estimate --model llama-3-8b --device h100-sxm --task infer "
                                                            "--batch 8 --format json " + layout).out)["memory"];
  };
  // Eight data-parallel replicas: each device holds what one device alone holds.
  CHECK(memory("--count 8 --tp 1")["per_device_bytes"].get<double>() ==
        doctest::Approx(memory("--count 1")["per_device_bytes"].get<double>()));
  // A replica over two devices (tensor parallel) has its collectives' buffers: a larger workspace.
  CHECK(memory("--count 2 --tp 2")["runtime_detail"]["workspace"].get<double>() >
        memory("--count 8 --tp 1")["runtime_detail"]["workspace"].get<double>());
}

TEST_CASE("a network without layers to wrap is one FSDP unit: ZeRO-3 gathers it once, offloading keeps it once") {
  auto memory = [](const std::string& plan) {
    return nlohmann::json::parse(::hwplan::test::run_hwplan("estimate --model vgg16 --device h100-sxm --count 8 --dp 8 --batch 1 "
                                                            "--format json " + plan).out)["memory"];
  };
  const double zero2 = memory("--zero 2")["breakdown"]["weights"].get<double>();
  // The shard plus the whole model gathered (not the model twice): 1 + 1/8 of it.
  CHECK(memory("--zero 3")["breakdown"]["weights"].get<double>() == doctest::Approx(zero2 * (1 + 1.0 / 8)));
  // Offloading the parameters keeps the gathered model on the device: never more than not offloading.
  CHECK(memory("--zero 1 --offload params")["per_device_bytes"].get<double>() <=
        memory("--zero 1")["per_device_bytes"].get<double>());
}

TEST_CASE("experts split over ep ranks shard their ZeRO state over the ranks that hold the same experts: one copy in all") {
  auto state = [](const std::string& extra) {
    const auto j = nlohmann::json::parse(::hwplan::test::run_hwplan(
        "estimate --model mixtral-8x7b --task train --device h100-sxm --count 8 --tp 1 --pp 1 --dp 8 --batch 1 "
        "--recompute full --framework fsdp --format json " + extra).out);
    const auto& b = j["memory"]["breakdown"];
    return std::array<double, 3>{b["weights"].get<double>(), b["gradients"].get<double>(), b["optimizer"].get<double>()};
  };
  // ZeRO-3 over 8 ranks holds each piece of state once, whether the experts are split over the ranks or sharded.
  const auto sharded = state("--zero 3 --ep 1"), split = state("--zero 3 --ep 8");
  for (int i = 1; i < 3; ++i) CHECK(split[static_cast<std::size_t>(i)] == ::hwplan::test::approx(sharded[static_cast<std::size_t>(i)]));
  // The weights too, but for the two layers ZeRO-3 gathers: at ep = dp a rank's experts are whole already, so only
  // the dense parts are gathered. Still at least one copy of the model over the 8 devices.
  CHECK(split[0] < sharded[0]);
  const ParameterCounts p = count_parameters(::hwplan::test::registry().model("mixtral-8x7b"));
  CHECK(split[0] * 8 > p.total * 2);
  CHECK(state("--zero 3 --ep 8")[0] + state("--zero 3 --ep 8")[1] <= state("--zero 2 --ep 8")[0] + state("--zero 2 --ep 8")[1]);
  // ZeRO-1: the experts' optimizer state shards over dp / ep = 1 rank: the 8 devices hold all of it once.
  const auto one = state("--zero 1 --ep 8");
  CHECK(one[2] * 8 > p.total * 12 * 0.85);  // fp32 master weights and two moments (12 bytes), experts most of them
}
