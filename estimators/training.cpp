#include "estimators/training.hpp"
#include "core/assumptions.hpp"
#include "core/normal.hpp"

#include <algorithm>
#include <cmath>

#include "estimators/comm.hpp"
#include "estimators/memory.hpp"

namespace hwplan {
namespace {

// Streaming multiprocessors a data-parallel collective occupies while it runs (NCCL: one CTA per channel):
// assumptions().collective_sms.

// Host <-> device copies (offload, paged optimizer states): the link's rate at its achieved efficiency.
// One memory for CPU and GPU (Apple silicon, Jetson): nothing crosses a link; a copy reads and writes that memory.
double host_link_rate(const Device& d) {
  if (d.host_link.type == "soc") return d.memory_bandwidth_bytes_per_s * assumptions().bandwidth_efficiency / 2;
  return std::max(1e9, d.host_link.bytes_per_s() * assumptions().host_link_efficiency);
}

int lora_target_count(const Workload& w, const Model& m) {
  if (w.task != Task::kLora && w.task != Task::kQlora) return 0;
  return lora_projections_per_layer(m, w.lora_targets);
}

// Kernels a for-loop (single-tensor) optimizer step issues per parameter tensor. PyTorch's _single_tensor_adamw:
// the decoupled weight decay (mul_), the first moment (lerp_), the second (mul_, addcmul_), the denominator (sqrt,
// div, add_) and the update (addcdiv_): 8. SGD with momentum: the buffer (mul_, add_) and the update (add_): 3.
// bitsandbytes' 8-bit Adam runs one fused kernel per tensor from its Python loop. Adafactor (Hugging Face's, a loop
// only): the factored row and column statistics, their update and the RMS clipping, about 14.
double loop_optimizer_kernels(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd: return 3;
    case Optimizer::kAdam8bit: return 1;
    case Optimizer::kAdafactor: return 14;
    default: return 8;
  }
}

// Bytes one optimizer step moves per parameter it updates. P: the copy it updates (the fp32 master, or the 16-bit
// parameter itself in pure 16-bit training), G: the gradient it reads, S: one moment (the parameter's type in pure
// 16-bit training, fp32 otherwise).
// - One fused pass (torch fused=True, apex / Transformer Engine / DeepSpeed FusedAdam): AdamW reads the parameter,
//   the gradient and both moments and writes the parameter and both moments: 2P + G + 4S; SGD with momentum
//   2P + G + 2S; bitsandbytes' 8-bit AdamW, one kernel per tensor over 1-byte moments: 2P + G + 4.
// - torch.optim's foreach and for-loop AdamW (_multi_tensor_adamw / _single_tensor_adamw): eight elementwise passes
//   over whole tensors: the decoupled decay (p.mul_: 2P), the first moment (m.lerp_(g): 2S + G), the second
//   (v.mul_: 2S; v.addcmul_(g, g): 2S + G), the denominator (d = sqrt(v): 2S; d.div_: 2S; d.add_(eps): 2S) and the
//   update (p.addcdiv_(m, d): 2P + 2S): 4P + 2G + 14S, three times the fused pass's bytes in fp32. SGD with
//   momentum (buf.mul_, buf.add_(g), p.add_(buf)): 2P + G + 5S.
// - Hugging Face's Adafactor (factored second moment, no first): the squared gradient plus eps (two new tensors),
//   its row and column means, the approximate second moment as their outer product, its product with the
//   gradient, the RMS clip (a read and a division), the learning-rate scaling and the update: ~2P + 2G + 14 x 4.
// Clipping by global norm (clip_step_bytes, separate kernels) reads the gradients once for the norm and, where the
// scale always runs, reads and writes them again: G or 3G. Not counted: torch skips the decay pass when weight_decay
// is 0, and DeepSpeed and Megatron rewrite their 16-bit model copy from the fp32 master after the step (4 bytes
// read, 2 written).
// Whether the update is the one fused pass: a for-loop optimizer (foreach off) issues the separate passes for each
// tensor whatever the fused flag says.
bool fused_update(const Workload& w) { return w.stack.fused_optimizer && w.stack.foreach_optimizer; }

double optimizer_step_bytes(const Workload& w) {
  // The parameter and its moments are 16-bit only in pure 16-bit training.
  const double p = activation_bytes(w.precision) < 4 && !w.stack.master_weights_fp32 ? 2 : 4, st = p;
  const double g = gradient_bytes(w);
  const bool fused = fused_update(w);
  double bytes = 0;
  switch (w.optimizer) {
    case Optimizer::kAdamW: bytes = fused ? 2 * p + g + 4 * st : 4 * p + 2 * g + 14 * st; break;
    case Optimizer::kSgd: bytes = fused ? 2 * p + g + 2 * st : 2 * p + g + 5 * st; break;
    case Optimizer::kAdam8bit: bytes = 2 * p + g + 4; break;
    case Optimizer::kAdafactor: bytes = 2 * p + 2 * g + 14 * 4; break;
  }
  return bytes;
}

// Clipping's own passes (torch's clip_grad_norm_: foreach norm and scale kernels, streaming at full rate).
double clip_step_bytes(const Workload& w) {
  if (!w.stack.clip_grad_norm) return 0;
  const double g = gradient_bytes(w);
  return w.stack.clip_scale_always ? 3 * g : g;
}

}  // namespace

namespace {

struct Moments {
  double mean = 0, variance = 0;
};

// The longest of `draws` samples from the sorted quantiles q: P(max <= q_i) = ((i + 1) / n)^draws.
Moments longest_of(const std::vector<double>& q, double draws) {
  const double n = static_cast<double>(q.size());
  double mean = 0, square = 0, below = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    const double cdf = std::pow(static_cast<double>(i + 1) / n, draws);
    mean += q[i] * (cdf - below);
    square += q[i] * q[i] * (cdf - below);
    below = cdf;
  }
  return {mean, std::max(0.0, square - mean * mean)};
}

}  // namespace

double computed_sequence(const Workload& w, std::int64_t micro_batch) {
  if (w.sample_tokens.empty()) return static_cast<double>(w.seq);
  return longest_of(w.sample_tokens, static_cast<double>(std::max<std::int64_t>(1, micro_batch))).mean;
}

double padded_rank_pace(const Workload& w, const Plan& plan) {
  if (w.sample_tokens.empty() || plan.dp <= 1) return 1.0;
  const double b = static_cast<double>(std::max<std::int64_t>(1, plan.micro_batch)), ranks = plan.dp;
  const Moments one = longest_of(w.sample_tokens, b);
  if (!(one.mean > 0)) return 1.0;
  // Ranks that meet every micro-batch (ZeRO-2/3 and FSDP gather and reduce-scatter inside each micro-batch; a DDP
  // step without accumulation is one micro-batch) run each at the pace of the longest of their batches: the longest
  // of b x ranks samples.
  if (plan.zero >= 2 || plan.grad_accum <= 1) return longest_of(w.sample_tokens, b * ranks).mean / one.mean;
  // DDP and ZeRO-1 with accumulation meet once a step: the slowest rank is the one whose k micro-batches are longest
  // in sum. A sum of k padded lengths is about normal, and the largest of n normal draws lies about
  // Phi^-1((n - 0.375) / (n + 0.25)) standard deviations above their mean (Blom's approximation).
  const double k = static_cast<double>(plan.grad_accum);
  const double z = normal_quantile((ranks - 0.375) / (ranks + 0.25));
  return 1 + z * std::sqrt(one.variance / k) / one.mean;
}

double sample_sequence(const Workload& w) {
  if (w.sample_tokens.empty()) return static_cast<double>(w.seq);
  double sum = 0;
  for (double t : w.sample_tokens) sum += t;
  return sum / static_cast<double>(w.sample_tokens.size());
}

LayerShape training_shape(const EstimateInput& in) {
  const Workload& w = in.workload;
  LayerShape s;
  s.model = in.model;
  s.micro_batch = static_cast<double>(in.plan.micro_batch);
  s.seq = computed_sequence(w, in.plan.micro_batch) / std::max(1, in.plan.cp);
  s.tp = in.plan.tp;
  s.cp = std::max(1, in.plan.cp);
  s.ep = in.plan.ep;
  s.sequence_parallel = in.plan.sequence_parallel;
  s.attention = w.attention;
  s.training = true;
  s.lm_head = w.lm_head;
  s.frozen_weights = w.task == Task::kLora || w.task == Task::kQlora;
  s.dequantize = w.task == Task::kQlora;
  s.lora_targets = lora_target_count(w, *in.model);
  s.lora_rank = w.lora_rank;
  s.activation_bytes = activation_bytes(w.precision);
  s.weight_bytes = s.dequantize ? 2 : weight_bytes_per_param(w);
  // fp8 casts and scaling only where fp8 runs: a device without fp8 units runs the GEMMs in 16 bits (the fallback the
  // estimate warns of), with no casts to pay.
  s.fp8 = w.precision == Precision::kFp8 && effective_precision(*in.device, w.precision).effective == Precision::kFp8;
  s.stack = &in.workload.stack;
  return s;
}

std::optional<DeviceRates> sixteen_bit_rates(const EstimateInput& in) {
  if (in.workload.precision != Precision::kFp8) return std::nullopt;
  return device_rates(*in.device, Precision::kBf16, in.profile);
}

MicroBatchCost micro_batch_cost(const EstimateInput& in, const DeviceRates& rates) {
  MicroBatchCost c;
  c.memory_rates = device_rates(*in.device, Precision::kFp32, in.profile);
  const Workload& w = in.workload;
  if (w.task == Task::kLora || w.task == Task::kQlora) c.lora_parameters = lora_parameters(*in.model, w.lora_rank, w.lora_targets);
  LayerShape s = training_shape(in);
  if (!in.model->is_transformer()) {
    c.head = generic_cost(s, rates);
    return c;
  }
  const std::optional<DeviceRates> bf16_rates = sixteen_bit_rates(in);
  if (bf16_rates) s.attention_rates = &*bf16_rates;
  c.layer = layer_cost(s, rates);
  c.head = head_cost(s, rates);
  if (in.plan.tp > 1) {
    // Two all-reduces (or reduce-scatter + all-gather with sequence parallelism, same volume) of the
    // activations per layer forward, two backward, two more when the forward is recomputed.
    c.tp_allreduce_bytes_layer = s.micro_batch * s.seq * static_cast<double>(in.model->hidden_size) * s.activation_bytes;
    c.tp_allreduces_per_layer = 4;
    c.tp_allreduce_bytes_head = in.workload.stack.loss_parallel || !w.lm_head ? s.micro_batch * s.seq * 4 : 0.0;
    // Logits gathered whole for a loss that is not vocabulary-parallel: one all-gather of them per forward (their
    // gradient is sliced back to the rank's shard in place).
    if (!in.workload.stack.loss_parallel && w.lm_head)
      c.tp_gather_bytes_logits = s.micro_batch * s.seq * static_cast<double>(in.model->vocab_size) * s.activation_bytes;
  }
  if (in.plan.cp > 1) {
    // The rank's chunk of keys and values (its kv heads; replicated when tensor parallelism has more ranks).
    const double kv_heads = std::max(1.0, static_cast<double>(in.model->kv_heads) / in.plan.tp);
    c.cp_chunk_bytes_layer =
        2 * s.micro_batch * s.seq * kv_heads * static_cast<double>(in.model->head_dim) * s.activation_bytes;
  }
  if (in.plan.ep > 1 && in.model->moe) {
    // Each token's hidden state goes to experts_per_token experts (GShard / Megatron-core token dispatcher);
    // with sequence parallelism a tensor-parallel rank dispatches its own share of the tokens.
    const double tokens = s.micro_batch * s.seq / (in.plan.sequence_parallel && in.plan.tp > 1 ? in.plan.tp : 1);
    c.ep_alltoall_bytes_layer = tokens * in.model->moe->experts_per_token * static_cast<double>(in.model->hidden_size) *
                                s.activation_bytes;
    c.ep_alltoalls_per_layer = 4;
  }
  return c;
}

TrainingTime training_time(const EstimateInput& in, const ParameterCounts& params, const MicroBatchCost& c,
                           double paged_out_bytes) {
  TrainingTime t;
  const Model& m = *in.model;
  const Workload& w = in.workload;
  const Plan& plan = in.plan;
  const double micro_batches = static_cast<double>(plan.grad_accum);
  const double stage_layers = std::ceil(static_cast<double>(m.total_layers()) / plan.pp);
  // Tokens each sequence computes (padded, for unpacked samples) and holds of its own.
  const double seq = computed_sequence(w, plan.micro_batch), own_seq = sample_sequence(w);

  // Full recomputation repeats a layer's forward (and its forward collectives) in backward, for every layer or
  // for plan.recompute_layers of the stage's.
  const double rc_share = recompute_share(plan, stage_layers);
  double recompute = 0;
  if (plan.recompute == Recompute::kFull) recompute = rc_share * c.layer.forward_seconds;
  // Selective recomputation repeats the attention core; flash attention already recomputes it in its backward,
  // so there is nothing more to repeat (and nothing more to save).
  else if (plan.recompute == Recompute::kSelective && w.attention == Attention::kEager)
    recompute = c.layer.attention_core_forward_seconds;
  // The slowest stage holds the model head (logits + loss) in addition to its layers.
  double fwd_mb = stage_layers * c.layer.forward_seconds + c.head.forward_seconds;
  double bwd_mb = stage_layers * (c.layer.backward_seconds + recompute) + c.head.backward_seconds;
  // Autocast over fp32 weights (torch.amp, the Hugging Face Trainer): each forward casts every fp32 weight to 16
  // bits at its first use (read 4, write 2 bytes per parameter) and backward casts every weight gradient back to
  // fp32 (read 2, write 4); each projection also casts the fp32 norm output it reads (read 4, write 2 bytes per
  // element; 3 for Q, K, V and 1-2 for the MLP) and its input gradient back. One kernel per cast. LoRA's frozen
  // model is already 16-bit and casts nothing but its (small) adapters. Llama 3.2 1B under autocast on an H200:
  // +14.4% with no cast counted, +8.5% with them.
  if (autocast_model(w) && m.is_transformer()) {
    const double stage_weights = params.total / (plan.tp * plan.pp);
    const double tokens = static_cast<double>(plan.micro_batch) * seq / plan.cp;
    const double readers = 3 + (m.gated() ? 2 : 1);
    const double inputs = stage_layers * tokens * static_cast<double>(m.hidden_size) * readers * 6;
    const double kernels = stage_layers * (7 + readers);
    const double casts = memory_seconds(c.memory_rates, stage_weights * 6 + inputs) +
                         kernels * c.memory_rates.kernel_overhead_seconds;
    fwd_mb += casts;
    bwd_mb += casts;
  }
  // The experts: the MoE layers' MLPs (the first dense layers, first_k_dense_replace, have a dense MLP of their own).
  const double all_experts =
      m.moe ? params.mlp_per_layer * (static_cast<double>(m.total_layers()) - static_cast<double>(params.dense_layers)) : 0.0;
  // FSDP2 gathers each layer's parameters into one flat buffer and splits it into the unsharded parameters with a
  // copy kernel on the compute stream (torch.distributed.fsdp's foreach_all_gather_copy_out, split_with_sizes_copy):
  // a read and a write of the layer's gathered weights per gather, before its forward and again before its backward.
  if (w.stack.gather_copy_out && plan.zero >= 3 && plan.zero_ranks() > 1) {
    // What a rank gathers: the dense part, and of the experts its own 1/ep, only where other ranks of its shard hold
    // the same experts (the shard's ranks beyond ep, as memory.cpp shards them); with ep = 1 every expert. Frozen
    // experts (LoRA) are sharded and gathered the same way.
    const int experts_ep = m.moe ? std::max(1, plan.ep) : 1;
    const double gathered_experts =
        experts_ep == 1 ? all_experts : plan.zero_ranks() / experts_ep > 1 ? all_experts / experts_ep : 0.0;
    const double gathered =
        (params.total - all_experts + gathered_experts) / (plan.tp * plan.pp) * weight_bytes_per_param(w);
    const double copy_out = memory_seconds(c.memory_rates, 2 * gathered) +
                            (stage_layers - 1) * c.memory_rates.kernel_overhead_seconds;
    fwd_mb += copy_out;
    bwd_mb += copy_out;
  }
  double tp_mb = 0;
  if (plan.tp > 1) {
    GroupLink link = group_link(*in.device, in.system, plan.tp, 1);
    tp_mb = stage_layers * (c.tp_allreduces_per_layer + 2 * rc_share) *
                allreduce_seconds(c.tp_allreduce_bytes_layer, plan.tp, link) +
            2 * allreduce_seconds(c.tp_allreduce_bytes_head, plan.tp, link) +
            (c.tp_gather_bytes_logits > 0 ? allgather_seconds(c.tp_gather_bytes_logits, plan.tp, link) : 0.0);
  }
  double cp_mb = 0;
  if (plan.cp > 1 && c.cp_chunk_bytes_layer > 0) {
    // Ring attention: while the rank computes attention on the chunk of keys at hand, it receives the next; of
    // the cp - 1 transfers per pass only what outlasts one chunk's attention waits. Backward passes the keys and
    // values again with their gradients; a recomputed forward repeats the forward ring.
    GroupLink link = group_link(*in.device, in.system, plan.cp, plan.tp);
    const double steps = plan.cp - 1;
    const double fwd_chunk = c.layer.attention_core_forward_seconds / plan.cp;
    const double bwd_chunk = c.layer.attention_core_backward_seconds / plan.cp;
    const double fwd = steps * std::max(0.0, p2p_seconds(c.cp_chunk_bytes_layer, link) - fwd_chunk);
    const double bwd = steps * std::max(0.0, p2p_seconds(2 * c.cp_chunk_bytes_layer, link) - bwd_chunk);
    cp_mb = stage_layers * (fwd * (1 + rc_share) + bwd);
  }
  if (plan.ep > 1 && c.ep_alltoall_bytes_layer > 0) {
    // Expert-parallel ranks are consecutive data-parallel ranks (stride tp x cp); the all-to-all is not overlapped.
    GroupLink link = group_link(*in.device, in.system, plan.ep, plan.tp * plan.cp);
    tp_mb += stage_layers * (c.ep_alltoalls_per_layer + 2 * rc_share) *
             alltoall_seconds(c.ep_alltoall_bytes_layer, plan.ep, link);
  }
  double pp_mb = 0;
  if (plan.pp > 1) {
    // Neighbouring stages are tp x cp x dp ranks apart (pipeline outermost).
    // The chain of stages: its slowest hop (a stage boundary that crosses a node or a package) sets the sends.
    GroupLink link = send_link(*in.device, in.system, std::max(2, plan.pp), plan.tp * plan.cp * plan.dp);
    double bytes = static_cast<double>(plan.micro_batch * m.hidden_size) * seq * activation_bytes(w.precision) /
                   (plan.sequence_parallel && plan.tp > 1 ? plan.tp : 1) / plan.cp;
    const double transfer = p2p_seconds(bytes, link);
    if (plan.vp > 1 && w.stack.overlap_p2p) {
      // The interleaved schedule posts each chunk's sends and receives and computes the next chunk meanwhile
      // (Stack::overlap_p2p; Megatron-LM's overlap_p2p_comm, only for the interleaved schedule): what shows is
      // what outlasts a chunk's forward or backward.
      pp_mb = std::max(0.0, transfer - fwd_mb / plan.vp) + std::max(0.0, transfer - bwd_mb / plan.vp);
    } else {
      pp_mb = 2 * transfer;  // 1F1B: sends and receives batched between the passes
    }
  }
  double per_mb = fwd_mb + bwd_mb + tp_mb + cp_mb + pp_mb;
  // 1F1B pipeline: (pp - 1) idle slots of one micro-batch each at fill and drain; the interleaved schedule
  // (vp model chunks per device) shrinks each slot to 1/vp of a micro-batch but sends vp times as often.
  double bubble = (plan.pp - 1) * per_mb / std::max(1, plan.vp);
  pp_mb *= std::max(1, plan.vp);
  per_mb = fwd_mb + bwd_mb + tp_mb + cp_mb + pp_mb;
  t.forward_seconds = fwd_mb * micro_batches;
  t.backward_seconds = bwd_mb * micro_batches;
  t.recompute_seconds = stage_layers * recompute * micro_batches;
  t.tp_comm_seconds = tp_mb * micro_batches;
  t.cp_comm_seconds = cp_mb * micro_batches;
  t.pp_comm_seconds = pp_mb * micro_batches;
  t.bubble_seconds = bubble;
  t.gemm_seconds = (stage_layers * c.layer.gemm_seconds + c.head.gemm_seconds) * micro_batches;
  t.memory_bound_seconds = (stage_layers * c.layer.memory_seconds + c.head.memory_seconds) * micro_batches;
  const double recompute_wait = plan.recompute == Recompute::kFull ? rc_share * c.layer.host_wait_forward_seconds : 0;
  t.host_wait_seconds = (stage_layers * (c.layer.host_wait_seconds + recompute_wait) + c.head.host_wait_seconds) * micro_batches;

  // Data parallelism: gradients (trainable parameters of this stage) are reduced once per optimizer step.
  const bool lora = w.task == Task::kLora || w.task == Task::kQlora;
  const double stage_params = params.total / (plan.tp * plan.pp);
  // Context-parallel ranks hold the same weights as data-parallel ones: gradients are reduced over both.
  const int replica_ranks = plan.replica_ranks();
  // With expert parallelism each rank holds 1/ep of the experts: their gradients are reduced over the dp / ep
  // ranks that hold the same experts, the rest over all dp ranks.
  const int ep = m.moe && !lora ? std::max(1, plan.ep) : 1;
  const double expert_params = ep > 1 ? all_experts / (plan.tp * plan.pp) : 0;
  const double trainable = lora ? c.lora_parameters / (plan.tp * plan.pp) : stage_params - expert_params;
  const double trainable_experts = expert_params / ep;
  // Gradients are reduced in fp32 by PyTorch DDP under autocast and by Megatron (fp32 main grads, its distributed
  // optimizer reduce-scatters them so); ZeRO / FSDP reduce-scatter them in the 16-bit training dtype, or in fp32
  // where the mixed-precision policy says so (Stack::fp32_reduce).
  const bool fp32_reduction = fp32_gradients(w) || fp32_reduce_over_16_bits(w);
  const double grad_bytes = plan.zero >= 1 && !fp32_reduction ? activation_bytes(w.precision) : 4;
  if (replica_ranks > 1) {
    // ZeRO collectives run over the ranks of one shard (all of dp x cp unless --shard-group); with replicated
    // shards each rank then all-reduces its gradient shard with the ranks holding the same shard in other replicas.
    // The group's slowest link is the data-parallel one (stride tp x cp) when there is one, else the
    // context-parallel one (stride tp).
    const int shards = plan.zero >= 1 ? plan.zero_ranks() : replica_ranks;
    const int replicas = plan.shard_replicas();
    const int dp_stride = plan.tp * plan.cp;  // data-parallel ranks are this far apart
    GroupLink link = plan.dp > 1 ? group_link(*in.device, in.system, std::max(1, shards / plan.cp), dp_stride)
                                 : group_link(*in.device, in.system, plan.cp, plan.tp);
    const double grads = trainable * grad_bytes;
    auto reduction = [&](auto collective) {
      double s = collective(grads, shards, link);
      if (replicas > 1) {
        GroupLink replica_link = group_link(*in.device, in.system, replicas, plan.tp * shards);
        s += allreduce_seconds(grads / shards, replicas, replica_link);
      }
      if (trainable_experts > 0 && plan.dp / ep > 1) {
        GroupLink expert_link = group_link(*in.device, in.system, plan.dp / ep, dp_stride * ep);
        s += collective(trainable_experts * grad_bytes, plan.dp / ep, expert_link);
      }
      return s;
    };
    // What crosses the data-parallel link, and when:
    // - DDP and ZeRO-1 (Megatron's distributed optimizer) reduce the gradients once per optimizer step, during
    //   the last micro-batch's backward (no_sync / main-grad accumulation before it); ZeRO-1 then gathers the
    //   updated parameters (all-reduce volume = reduce-scatter + all-gather).
    // - ZeRO-2 and ZeRO-3 / FSDP reduce-scatter the gradients in every micro-batch's backward (DeepSpeed's
    //   partitioned-gradient buckets, FSDP's post-backward hook): the sharded gradient cannot accumulate a
    //   micro-batch it has not been reduced from. ZeRO-2 gathers the updated parameters once per step.
    //   Under no_sync accumulation (deferred_grad_sync) the micro-batches before the last keep unsharded gradients
    //   and only the last one's backward reduce-scatters them.
    // - ZeRO-3 / FSDP gathers each layer's parameters before its forward and again before its backward.
    const bool shard_grads = plan.zero >= 2;
    const double reductions = deferred_grad_sync(w, plan) ? 1.0 : micro_batches;
    const double weights = stage_params * weight_bytes_per_param(w);
    // After the sharded optimizer step each rank gathers the parameters the others updated, in their 16-bit
    // form: the trainable dense ones over the shard, the experts over the ranks that hold the same experts.
    auto updated_params_gather = [&]() {
      const double bytes = weight_bytes_per_param(w);
      double s = allgather_seconds(trainable * bytes, shards, link);
      if (trainable_experts > 0 && plan.dp / ep > 1) {
        GroupLink expert_link = group_link(*in.device, in.system, plan.dp / ep, dp_stride * ep);
        s += allgather_seconds(trainable_experts * bytes, plan.dp / ep, expert_link);
      }
      return s;
    };
    // ZeRO-1 reduce-scatters the gradients (in their dtype) and all-gathers the updated parameters.
    const double reduce_step = shard_grads    ? 0.0
                               : plan.zero == 1 ? reduction(reduce_scatter_seconds) + updated_params_gather()
                                                : reduction(allreduce_seconds);
    const double reduce_mb = shard_grads ? reduction(reduce_scatter_seconds) : 0.0;
    // ZeRO-3 gathers each layer's dense part over the shard and the rank's experts over the ranks holding the same.
    double gather_mb = 0.0;
    if (plan.zero >= 3) {
      gather_mb = 2 * allgather_seconds(weights - expert_params * weight_bytes_per_param(w), shards, link);
      if (trainable_experts > 0 && plan.dp / ep > 1) {
        GroupLink expert_link = group_link(*in.device, in.system, plan.dp / ep, dp_stride * ep);
        gather_mb += 2 * allgather_seconds(trainable_experts * weight_bytes_per_param(w), plan.dp / ep, expert_link);
      }
    }
    const double gather_step = plan.zero == 2 ? updated_params_gather() : 0.0;
    t.dp_comm_seconds = reduce_step + gather_step + reduce_mb * reductions + gather_mb * micro_batches;
    // One link carries all of it, so the transfers that overlap compute share one window: per micro-batch the
    // gathers prefetch during forward and backward and the reduce-scatters run during backward; what does not
    // fit in the window waits. The first layer's gather and the last layer's reduction (one bucket) can never
    // overlap.
    const double layer_share = 1.0 / std::max(1.0, stage_layers);
    const double last_bucket = std::min(reduce_step + reduce_mb, allreduce_seconds(25e6 * grad_bytes / 2, shards, link));
    double exposed = 0;
    if (shard_grads) {
      // Without overlap (--no-overlap-grad-reduce) the reductions wait for the backward; gathers still prefetch.
      const double overlapped_reduce = in.system.overlap_grad_reduce ? reduce_mb : 0.0;
      const double window = (plan.zero >= 3 ? fwd_mb : 0.0) + bwd_mb;
      // Per micro-batch the window holds its gathers, and its reduce-scatters where it has them (all, or the
      // last one's under no_sync).
      exposed += reductions * (std::max(0.0, overlapped_reduce + gather_mb - window) + (reduce_mb - overlapped_reduce)) +
                 (micro_batches - reductions) * std::max(0.0, gather_mb - window);
      exposed += micro_batches * (gather_mb / 2) * layer_share + (overlapped_reduce > 0 ? last_bucket : 0.0);
      exposed += gather_step;  // after the optimizer step, before the next forward
    } else {
      exposed = in.system.overlap_grad_reduce ? std::max(reduce_step - bwd_mb, last_bucket) : reduce_step;
    }
    t.dp_comm_exposed_seconds = std::min(exposed, t.dp_comm_seconds);
    // While a collective overlaps compute, its kernels hold streaming multiprocessors the GEMMs cannot use
    // (one CTA per NCCL channel; ~16 channels for rings over NVLink and multi-rail NICs, NCCL's default
    // NCCL_MAX_NCHANNELS range; DeepSeek-V3's report dedicates 20 of 132 H800 SMs to communication): the
    // overlapped compute runs that fraction slower.
    const double sms = static_cast<double>(in.device->compute_units.value_or(0));
    const double stolen = sms > 0 ? std::min(0.25, assumptions().collective_sms / sms) : 0.0;
    t.dp_interference_seconds = (t.dp_comm_seconds - t.dp_comm_exposed_seconds) * stolen;
  }

  // Optimizer step: memory-bound passes over the (sharded) trainable parameters (optimizer_step_bytes).
  double shard = plan.zero >= 1 ? plan.zero_ranks() : 1;
  // Parameters this rank updates: its shard of the dense ones and of the experts it holds.
  const double updated = trainable / shard + trainable_experts / (plan.zero >= 1 ? std::max(1, plan.dp / ep) : 1);
  const double opt_bytes_per_param = optimizer_step_bytes(w), clip_bytes_per_param = clip_step_bytes(w);
  const DeviceRates& mem_rates = c.memory_rates;
  if (plan.offload == Offload::kNone) {
    // A multi-tensor step is a few kernels. A Python loop over the parameter tensors issues each update op for
    // each tensor: its kernels' floors on the device and their dispatch on the host, which the device cannot hide
    // (nothing else is queued).
    // Adafactor (Hugging Face's) and the 8-bit optimizers (bitsandbytes, torchao) have no multi-tensor path: they
    // loop over the tensors whatever the stack's default.
    const bool looped = !w.stack.foreach_optimizer || w.optimizer == Optimizer::kAdafactor ||
                        w.optimizer == Optimizer::kAdam8bit;
    const double kernels = !looped ? 20.0
                                   : (lora ? lora_tensors(m, w.lora_targets) : parameter_tensors(m)) / plan.pp *
                                         loop_optimizer_kernels(w.optimizer);
    const double host = !looped ? 0.0 : kernels * w.stack.host_seconds_per_kernel;
    // A fused AdamW update is one kernel over all tensors (torch's _fused_adamw_) that keeps four tensors' values and
    // its fp32 arithmetic in registers: fewer resident warps per SM than a streaming kernel, so less memory traffic
    // in flight. A reporter's traces of it (A40, PyTorch 2.2) showed 67% occupancy against 100% for the foreach ops
    // (pytorch/pytorch #121857). After its register cut (#117872; #118361: open_llama_7b_v2, 144.1 -> 49.7 ms a
    // step) a 7B bf16 step took 49.9 ms on an H100 (SXM assumed): 6.74e9 x 14 bytes at 1.89 TB/s, 56% of the
    // 3.35 TB/s peak where streaming kernels reach about 85% (assumptions().fused_optimizer_bandwidth_share =
    // 0.66 of them). The apex-derived FusedAdam of DeepSpeed, Megatron and Transformer Engine is assumed alike;
    // fused SGD (fewer tensors per element) is left at a streaming kernel's rate. Clipping runs as separate
    // foreach kernels (clip_step_bytes) at the full rate.
    const double share =
        fused_update(w) && w.optimizer == Optimizer::kAdamW ? assumptions().fused_optimizer_bandwidth_share : 1.0;
    const double device = memory_seconds(mem_rates, updated * (opt_bytes_per_param / share + clip_bytes_per_param)) +
                          kernels * mem_rates.kernel_overhead_seconds;
    t.optimizer_seconds = std::max(device, host);
    t.host_wait_seconds += std::max(0.0, host - device);
  } else {
    // ZeRO-Offload: gradients go down and updated weights come back over PCIe; CPU Adam updates about
    // 1e9 parameters/s on a many-core host (Ren et al. 2021, ZeRO-Offload, Sec. 5).
    const double pcie = host_link_rate(*in.device);
    double transfer = updated * (grad_bytes + weight_bytes_per_param(w)) / pcie;
    t.optimizer_seconds = updated / 1e9;
    t.offload_seconds = transfer;
    if (plan.offload == Offload::kParams)
      t.offload_seconds += std::max(0.0, 2 * stage_params * weight_bytes_per_param(w) / pcie * micro_batches -
                                             (fwd_mb + bwd_mb) * micro_batches);
  }

  t.paging_seconds = paged_out_bytes / host_link_rate(*in.device);

  // The devices' own work (forward, backward, optimizer) runs at the pace of the slowest device of the job:
  // the collectives, the pipeline's next stage and the next step all wait for it.
  t.slowest_device_seconds =
      slowest_device_slowdown(plan.count()) * ((fwd_mb + bwd_mb) * micro_batches + t.optimizer_seconds);

  // Unpacked samples: each data-parallel rank pads its micro-batch to its own longest sample, and the ranks meet
  // (collectives) at the pace of the one with the longest.
  t.padding_wait_seconds = (padded_rank_pace(w, plan) - 1) * (fwd_mb + bwd_mb) * micro_batches;

  t.step_seconds = per_mb * micro_batches + bubble + t.dp_comm_exposed_seconds + t.dp_interference_seconds +
                   t.optimizer_seconds + t.offload_seconds + t.paging_seconds + t.slowest_device_seconds +
                   t.padding_wait_seconds;
  // Unpacked samples: the step computes their padding too, but only their own tokens count.
  t.tokens_per_step = static_cast<double>(plan.global_batch()) * own_seq;
  if (!m.is_transformer()) t.tokens_per_step = static_cast<double>(plan.global_batch());  // samples
  t.tokens_per_second = t.step_seconds > 0 ? t.tokens_per_step / t.step_seconds : 0;

  // Model FLOPs (PaLM appendix B): 6 N per token for the non-embedding weights and the logits, plus 12 L H Q s
  // for attention (H heads of Q dimensions: the hidden size in most models, not in all; half of it over MLA's
  // narrower value heads); sliding-window layers
  // count the keys they score (at most the window); LoRA does no weight-gradient GEMMs for the frozen base (4 N).
  // Hardware FLOPs add recompute.
  double tokens = t.tokens_per_step;
  if (m.is_transformer()) {
    // The head's weights count once (shared with the input embedding when tied); without the language-model head
    // the vocabulary projection is not computed (a task head's few outputs are negligible).
    const double head = static_cast<double>(m.vocab_size * m.hidden_size);
    const double body = params.active - params.embedding - (m.tied_embeddings ? 0 : head);
    double n = body + (w.lm_head ? head : 0);
    auto attn = [&](double length) {
      double keys = length;
      if (m.sliding_window > 0 && length > static_cast<double>(m.sliding_window)) {
        const double window = static_cast<double>(m.sliding_window);
        const double local = static_cast<double>(m.sliding_window_layers) / static_cast<double>(m.total_layers());
        keys = length * ((1 - local) + local * (length * window - window * window / 2) / (length * length / 2));
      }
      // Scores over the query-key dimension, the context over the value dimension (MLA's differ: 192 and 128).
      const double dv = m.mla ? static_cast<double>(m.mla->v_head_dim) : static_cast<double>(m.head_dim);
      return 6.0 * static_cast<double>(m.total_layers()) * static_cast<double>(m.attention_heads) *
             (static_cast<double>(m.head_dim) + dv) * keys;
    };
    double factor = lora ? 4.0 / 6.0 : 1.0;
    t.model_flops_per_step = tokens * (6 * n + attn(own_seq)) * factor;
    // The hardware also computes the padding of unpacked samples, and the recomputed forward passes.
    t.hardware_flops_per_step = static_cast<double>(plan.global_batch()) * seq * (6 * n + attn(seq)) * factor *
                                (1 + rc_share / 3.0);
  } else {
    t.model_flops_per_step = tokens * 3 * m.forward_flops_per_sample;
    t.hardware_flops_per_step = t.model_flops_per_step;
  }
  return t;
}

// Identical GPUs are not equally fast: Sinha et al. (SC22, arXiv:2208.11035) ran the same kernels on over 90% of
// the GPUs of five clusters (V100 and MI60, air- and water-cooled) and found them 8% apart on average (up to 22%),
// from power management and manufacturing variation, with outliers up to 1.5x slower than the median. A device's
// speed is a property of the device, so a synchronous job is as fast as the slowest it was given, every step. With
// speeds spread evenly over that range the slowest of n lies at n / (n + 1) of it: 3.1% behind the median for 8
// devices, 3.9% for 64, 4% (half the spread) for thousands. Outliers are left out: schedulers drain such nodes.
double slowest_device_slowdown(long long devices) {
  if (devices <= 1) return 0.0;
  const double n = static_cast<double>(devices);
  return 0.5 * assumptions().device_speed_spread * (n - 1) / (n + 1);
}

Goodput training_goodput(long long devices, double training_seconds) {
  // Unexpected interruptions per device-hour: Llama 3 (Dubey et al. 2024, Sec. 3.3.4) saw 419 in a 54-day
  // snapshot on 16,384 H100s: 419 / (54 x 24 x 16,384) = 1.97e-5, a failing GPU, host, NIC or switch stopping the
  // whole synchronous job. Each costs a restart (reschedule, initialise NCCL, reload the checkpoint: about ten
  // minutes) and, on average, half a checkpoint interval of lost work; each checkpoint stalls training while
  // its snapshot is taken (about 20 s with asynchronous checkpointing to fast storage). With these figures a
  // 16,384-GPU job trains about 89% of the time, in line with the "more than 90% effective training time" Llama 3
  // reports after its own automation.
  const Assumptions& as = assumptions();
  Goodput g;
  if (devices < 1 || !(training_seconds > 0)) return g;
  const double rate = as.interruptions_per_device_hour * static_cast<double>(devices) / 3600.0;  // per second, whole job
  // Young (1974): the checkpoint interval that minimises stall + lost work is sqrt(2 x stall / rate).
  const double interval = std::sqrt(2 * as.checkpoint_stall_seconds / rate);
  const double overhead = rate * (as.restart_seconds + interval / 2) + as.checkpoint_stall_seconds / interval;
  g.fraction = 1.0 / (1.0 + overhead);
  g.checkpoint_interval_seconds = interval;
  g.expected_interruptions = rate * training_seconds * (1.0 + overhead);
  return g;
}

}  // namespace hwplan
