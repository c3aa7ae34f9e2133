#include "estimators/memory.hpp"

#include <algorithm>
#include <cmath>

#include "core/units.hpp"
#include "estimators/inference.hpp"

namespace hwplan {

// The caching allocator rounds and splits blocks; ~5% of the allocated bytes stays unusable in steady state.
double allocator_fragmentation(const MemoryBreakdown& m) {
  return 0.05 * (m.weights + m.gradients + m.optimizer + m.activations + m.kv_cache);
}

namespace {

bool mixed(Precision p) { return p == Precision::kFp16 || p == Precision::kBf16 || p == Precision::kFp8; }

// Runtime overhead that does not scale with the model: the driver context with the framework's kernels loaded
// (PyTorch + CUDA 12 with lazy loading: ~0.4-0.6 GiB; measured by torch.cuda.mem_get_info before/after init),
// and the framework's workspaces (cuBLAS workspace, NCCL buffers).
void add_runtime(MemoryBreakdown& m, const Device& device, bool multi_device) {
  bool accelerator_card = device.device_class != DeviceClass::kEdge;
  m.runtime_context = (accelerator_card ? 0.5 : 0.25) * kGiB;
  m.runtime_workspace = (multi_device ? 0.5 : 0.125) * kGiB;
  m.runtime_fragmentation = allocator_fragmentation(m);
}

// Optimizer state per trainable parameter. Mixed precision with fp32 master weights keeps a 4-byte copy and fp32
// moments; pure 16-bit training (torchtune's dtype bf16, --master-weights none) keeps neither: the moments take
// the parameters' dtype (torch.optim creates state like the parameter).
double optimizer_bytes_per_param(Optimizer o, bool mixed_precision, double adafactor_factor, bool master_fp32 = true) {
  double master = mixed_precision && master_fp32 ? 4 : 0;
  const double moment = mixed_precision && !master_fp32 ? 2 : 4;
  switch (o) {
    case Optimizer::kAdamW: return master + 2 * moment;
    case Optimizer::kSgd: return master + moment;
    case Optimizer::kAdam8bit: return master + 2;
    case Optimizer::kAdafactor: return master + 4 * adafactor_factor;
  }
  return master + 8;
}

// Adafactor keeps a row and a column vector per matrix: (rows + cols) / (rows x cols) of a full state.
double adafactor_fraction(const Model& m) {
  if (!m.is_transformer()) return 0.01;
  double h = static_cast<double>(m.hidden_size), f = static_cast<double>(m.ffn_hidden_size);
  return ((h + h) / (h * h) * 4 + (h + f) / (h * f) * 2) / 6;
}

}  // namespace

double activation_bytes(Precision p) { return p == Precision::kFp32 || p == Precision::kTf32 ? 4 : 2; }

bool autocast_model(const Workload& w) {
  return w.stack.autocast && w.stack.master_weights_fp32 && activation_bytes(w.precision) < 4 &&
         w.task != Task::kLora && w.task != Task::kQlora;
}

bool fp32_gradients(const Workload& w) {
  return w.stack.fp32_grads && (w.precision == Precision::kBf16 || w.precision == Precision::kFp8);
}

double gradient_bytes(const Workload& w) {
  // Megatron's main_grad buffer is fp32 (its fp16 mode keeps fp16 gradients).
  if (fp32_gradients(w)) return 4;
  return mixed(w.precision) && !(w.stack.autocast && w.stack.master_weights_fp32) ? 2 : 4;
}

bool fp32_reduce_over_16_bits(const Workload& w) { return w.stack.fp32_reduce && mixed(w.precision); }

double reduce_bytes(const Workload& w) { return fp32_reduce_over_16_bits(w) ? 4 : gradient_bytes(w); }

bool deferred_grad_sync(const Workload& w, const Plan& plan) {
  return w.stack.defer_grad_sync && plan.zero >= 2 && plan.zero_ranks() > 1 && plan.grad_accum > 1 &&
         plan.offload == Offload::kNone && !w.stack.optimizer_in_backward;
}

double weight_bytes_per_param(const Workload& w) {
  if (w.task == Task::kQlora) return bytes_per_param(WeightFormat::kNf4);
  if (w.task == Task::kInfer && w.checkpoint_bytes_per_param) return *w.checkpoint_bytes_per_param;
  if (w.task == Task::kInfer && w.weights) return bytes_per_param(*w.weights);
  if (w.precision == Precision::kFp32 || w.precision == Precision::kTf32) return 4;
  return 2;
}

bool head_in_compute_format(const Workload& w) {
  if (w.task == Task::kQlora) return true;
  // A checkpoint read from its headers (or config.json) already averages its 16-bit ends into its bytes; fp32 and
  // 16-bit weights are what they are; q4_0 is llama.cpp's, which quantizes the head too.
  if (w.task != Task::kInfer || w.checkpoint_bytes_per_param || !w.weights || w.stack.quantized_head) return false;
  switch (*w.weights) {
    case WeightFormat::kFp8:
    case WeightFormat::kInt8:
    case WeightFormat::kInt4:
    case WeightFormat::kNf4: return true;
    default: return false;
  }
}

namespace {
// Bytes per parameter of a tensor kept in the compute format (fp32 when computing in fp32, else 16 bits).
double compute_format_bytes(const Workload& w) {
  return w.precision == Precision::kFp32 || w.precision == Precision::kTf32 ? 4 : 2;
}
}  // namespace

double head_weight_bytes(const Workload& w) {
  return head_in_compute_format(w) ? compute_format_bytes(w) : weight_bytes_per_param(w);
}

double embedding_weight_bytes(const Workload& w) {
  // Training (QLoRA's base included), a checkpoint's own bytes and unquantized weights: as the head.
  if (w.task != Task::kInfer || w.checkpoint_bytes_per_param || !w.weights || bytes_per_param(*w.weights) >= 2)
    return head_weight_bytes(w);
  // Quantized weights: the layers' format when the stack quantizes the table (q4_0 is GGUF's, which does), whatever
  // it does with the head; otherwise the compute format (PyTorch's quantizers convert nn.Linear modules only).
  if (w.stack.quantized_embedding || *w.weights == WeightFormat::kQ4_0 || *w.weights == WeightFormat::kQ4KM)
    return weight_bytes_per_param(w);
  return compute_format_bytes(w);
}

LayerPlacement layer_placement(const Model& model, const Workload& w) {
  LayerPlacement p;
  const double layers = model.is_transformer() ? static_cast<double>(model.total_layers()) : 0.0;
  p.total_layers = layers;
  p.device_layers = layers;
  if (w.task != Task::kInfer || !model.is_transformer() || !w.device_layers) return p;
  // As llama.cpp counts -ngl: the layers first, then the output layer (layers + 1, or anything above, is all).
  const double given = static_cast<double>(*w.device_layers);
  p.device_layers = std::clamp(given, 0.0, layers);
  p.head_on_host = w.stack.offload_runs_on_host && given <= layers;
  return p;
}

bool can_leave_layers_in_host(const Device& device) {
  return device.host_link.type != "soc" && !device.streams_parameters();
}

bool embedding_on_device(const Workload& w, const Device& device) {
  return !(w.task == Task::kInfer && w.stack.embedding_on_host && device.host_link.type != "soc");
}

double recompute_share(const Plan& plan, double stage_layers) {
  if (plan.recompute != Recompute::kFull) return 0;
  if (plan.recompute_layers <= 0 || stage_layers <= 0) return 1;
  return std::min(1.0, plan.recompute_layers / stage_layers);
}

double layer_activation_bytes(const Model& m, const Workload& w, const Plan& plan, double micro_batch) {
  const double e = activation_bytes(w.precision);
  const double t = plan.tp;
  // Context parallelism splits each sequence: the rank holds the activations of its 1 / cp of the tokens.
  const double tokens = micro_batch * static_cast<double>(w.seq) / std::max(1, plan.cp);
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.attention_heads * m.head_dim);
  const double kv = static_cast<double>(m.kv_heads * m.head_dim);
  const double f = static_cast<double>(m.moe ? m.expert_ffn() : m.ffn_hidden_size);
  const double heads = static_cast<double>(m.attention_heads);
  const double s = static_cast<double>(w.seq);
  const double mask = m.dropout ? 1 : 0;
  const double routed = m.moe ? m.moe->experts_per_token + m.moe->shared_experts : 1;
  // Norm inputs and outputs feeding the projections, and dropout masks (Korthikanti et al. 2022, eq. 2:
  // the 10 sbh of the 34 sbh): 2 e h per norm + 2 mask h per token (two norms, or one whose output feeds both
  // branches with parallel attention). Replicated across tensor-parallel ranks unless sequence parallel.
  // Eager stacks differ where their ops are written out in Python (each saves its own inputs), measured on an
  // H200 by saving one layer more (scripts/gpu_measure.py, experiment layer_activations: Llama 3.2 1B and 3B,
  // Llama 2 7B, GPT-2 Large, BERT-Large, OPT-1.3B shapes; each term below closes its gap to within 0.2%):
  //  - an eager RMSNorm (Hugging Face's LlamaRMSNorm, torchtune's RMSNorm) upcasts its input to fp32 and keeps
  //    that copy (4 h) beside the normalised tensor and the output (2 e h): 4 h more per norm than a fused one;
  //  - under autocast over fp32 weights the residual stream is fp32, so the norm's input and its normalised
  //    tensor are fp32 (8 h with an eager RMSNorm, 4 h + its fp32 output uncounted with LayerNorm), and every
  //    projection reading the norm casts it to 16 bits itself and keeps its own copy (3 for Q, K and V; 2 for a
  //    gated MLP's gate and up; models with fused QKV projections keep fewer, which this does not know).
  const Stack& st = w.stack;
  const bool eager = !st.fused_kernels;
  const bool adapters = w.task == Task::kLora || w.task == Task::kQlora;
  const bool autocast = autocast_model(w);
  const bool eager_rmsnorm = eager && m.norm == NormKind::kRmsNorm;
  auto norm_bytes = [&](double readers) {
    if (autocast) return (eager_rmsnorm ? 8 : 4) * h + readers * e * h;
    return (eager_rmsnorm ? 4 * h : 0) + 2 * e * h;
  };
  const double mlp_readers = m.gated() ? 2 : 1;
  double replicated = (m.parallel_attention ? norm_bytes(3 + mlp_readers) : norm_bytes(3) + norm_bytes(mlp_readers)) +
                      2 * mask * h;
  // Split by tensor parallelism: Q, K, V; attention output; MLP up output(s) and down input (the 24 sbh).
  // The activation's own saved tensors: ReLU's backward reads its output, which the down projection keeps, so
  // the up projection's output is not kept; written-out (eager) activations keep their intermediates: SwiGLU /
  // GeGLU the activated gate beside the product (e f), the GPT-2 family's tanh-approximated GELU (Hugging Face's
  // gelu_new, six elementwise ops) the tanh, 0.5 x and 1 + tanh (3 e f).
  double mlp = e * f * (m.gated() ? 2 : 1) + e * f;
  if (m.ffn_activation == Activation::kRelu) mlp -= e * f;
  if (eager && m.gated()) mlp += e * f;
  if (eager && m.ffn_activation == Activation::kGeluTanh) mlp += 3 * e * f;
  double split = e * (q + 2 * kv) + e * q + routed * mlp;
  // LoRA: a frozen projection needs no input for its backward (only its weight), so PyTorch keeps none; a tensor
  // stays only if an adapter or another op needs it. With adapters on q and v alone, the attention output (the
  // output projection's input), the second norm's output and the down projection's input go (unless the
  // activation keeps its output itself, as ReLU does). Measured on the H200 (lora_activations, PEFT r 8 on q and v):
  // Llama 2 7B 148,200 bytes per token per layer against 147,968 so, and 186,368 with every input kept.
  if (adapters && w.lora_targets == "qv") {
    split -= e * q;
    replicated -= e * h;
    if (m.ffn_activation != Activation::kRelu) split -= routed * e * f;
  }
  // Eager attention keeps the s x s softmax output (+ dropout mask and output): the 5 a s / h term. Flash
  // attention keeps only a log-sum-exp per row (negligible); selective recomputation drops the scores.
  double scores = 0;
  if (w.attention == Attention::kEager && plan.recompute == Recompute::kNone)
    scores = heads * s * (e + (m.dropout ? 1 + e : 0));
  double per_token;
  const bool sp = plan.sequence_parallel && plan.tp > 1;
  if (plan.recompute == Recompute::kFull) {
    per_token = e * h / (sp ? t : 1);  // only the layer input is kept
  } else {
    per_token = replicated / (sp ? t : 1) + (split + scores) / t;
  }
  return per_token * tokens;
}

MemoryBreakdown training_memory(const Model& model, const ParameterCounts& params, const Device& device,
                                const Workload& w, const Plan& plan) {
  MemoryBreakdown m;
  const bool mp = mixed(w.precision);
  const double tp = plan.tp, pp = plan.pp;
  const double layers = static_cast<double>(model.total_layers());

  // Parameters held by the busiest pipeline stage (its layers plus the larger of the embedding / output ends).
  double stage_params, stage_ends = 0;
  double stage_experts = 0;  // of stage_params, the routed experts this device holds (after expert parallelism)
  if (model.is_transformer()) {
    double per_layer_dense = params.attention_per_layer + (model.moe ? 0 : params.mlp_per_layer);
    double per_layer_experts = model.moe ? params.mlp_per_layer / std::max(1, plan.ep) : 0;
    if (model.moe && params.dense_layers > 0) {
      // Dense first layers (first_k_dense_replace): spread over the layers as an average.
      const double dense_fraction = params.dense_layers / layers;
      per_layer_dense += dense_fraction * params.mlp_dense_per_layer;
      per_layer_experts *= 1 - dense_fraction;
    }
    const double embedding_and_head = pp == 1 ? params.embedding + params.output : std::max(params.embedding, params.output);
    const double ends = embedding_and_head + params.extra + params.mtp;
    stage_params = (std::ceil(layers / pp) * (per_layer_dense + per_layer_experts) + ends) / tp;
    if (plan.ep > 1) stage_experts = std::ceil(layers / pp) * per_layer_experts / tp;
    stage_ends = embedding_and_head / tp;
    if (model.decoder_layers > 0) stage_params += std::ceil(static_cast<double>(model.decoder_layers) / pp) * params.decoder_cross_attention / tp;
  } else {
    stage_params = params.total;
  }

  const bool lora = w.task == Task::kLora || w.task == Task::kQlora;
  const double trainable = lora ? lora_parameters(model, w.lora_rank, w.lora_targets) / (tp * pp) : stage_params;
  const double weight_bytes = weight_bytes_per_param(w);
  const Stack& st = w.stack;
  const double grad_bytes = gradient_bytes(w);
  const double opt_bytes = optimizer_bytes_per_param(w.optimizer, mp, adafactor_fraction(model), st.master_weights_fp32);

  const double shards = plan.zero_ranks();
  const double zero_weights = plan.zero >= 3 ? shards : 1;
  const double zero_grads = plan.zero >= 2 ? shards : 1;
  const double zero_opt = plan.zero >= 1 ? shards : 1;
  // Experts split over ep ranks are replicated over the others only: their ZeRO state shards over the data-parallel
  // ranks that hold the same experts (Megatron's expert-data-parallel group, DeepSpeed-MoE's expert data parallelism),
  // ep times fewer, so that the cluster still holds each expert's state once.
  const double expert_shards = std::max(1.0, shards / std::max(1, plan.ep));
  const double zero_expert_weights = plan.zero >= 3 ? expert_shards : 1;
  const double zero_expert_grads = plan.zero >= 2 ? expert_shards : 1;
  const double zero_expert_opt = plan.zero >= 1 ? expert_shards : 1;
  const double experts = lora ? 0.0 : stage_experts;  // LoRA trains adapters only: their state is the small part

  // QLoRA quantizes the layers' linear weights (bitsandbytes converts nn.Linear modules and leaves lm_head out;
  // torchtune's and torchao's NF4 wrap the LoRA-adapted projections): the embedding and the output projection stay
  // in the compute format (head_weight_bytes).
  m.weights = ((stage_params - stage_experts - stage_ends) * weight_bytes + stage_ends * head_weight_bytes(w)) / zero_weights +
              stage_experts * weight_bytes / zero_expert_weights;
  if (lora) m.weights += trainable * 2;  // adapters in bf16/fp16 (fp32 when training in fp32)
  m.gradients = ((trainable - experts) / zero_grads + experts / zero_expert_grads) * grad_bytes;
  m.optimizer = ((trainable - experts) / zero_opt + experts / zero_expert_opt) * opt_bytes;
  // Accumulation under no_sync (Stack::defer_grad_sync): until the last micro-batch's reduce-scatter each rank holds
  // its whole stage's gradients (the experts it holds included), in the reduce dtype, through every forward and
  // backward of the step; the sharded gradients they reduce to replace them layer by layer.
  const bool deferred_sync = deferred_grad_sync(w, plan);
  if (deferred_sync) m.gradients = std::max(m.gradients, trainable * reduce_bytes(w));
  // ZeRO-3's gathered (full) parameters: the layer being computed and the prefetched next one (FSDP's units; a
  // network given without layers, a CNN, is wrapped whole), or
  // as many as the stack keeps resident (DeepSpeed: up to stage3_max_live_parameters, whatever the layer size; a
  // single tensor above the cap, such as a large vocabulary's embedding, is still gathered whole).
  const double largest_tensor = model.is_transformer() ? std::max(params.embedding, params.output) / tp : 0;
  // A layer as gathered: its dense part, and of its experts the rank's own (1/ep), which are whole already where no
  // other rank holds the same experts.
  const double layer_gathered =
      model.moe && plan.ep > 1 && !lora
          ? params.attention_per_layer + (expert_shards > 1 ? params.mlp_per_layer / plan.ep : 0.0)
          : params.layer_total();
  const double gathered = st.zero3_live_parameters > 0
                              ? std::min(stage_params, std::max(st.zero3_live_parameters, largest_tensor))
                              : model.is_transformer() ? 2 * layer_gathered / tp
                                                       // A network without layers to wrap is one FSDP unit: the
                                                       // whole model gathered once (sharding then saves nothing).
                                                       : stage_params;
  if (plan.zero >= 3) m.weights += gathered * weight_bytes;
  if (plan.offload == Offload::kOptimizer || plan.offload == Offload::kParams) {
    m.host_bytes += m.optimizer;
    m.optimizer = 0;
    // ZeRO-Offload: gradients stream to the host in buckets as backward produces them (fp32 copies live there);
    // the device keeps about two layers' worth in flight.
    m.host_bytes += ((trainable - experts) / zero_grads + experts / zero_expert_grads) * 4;
    double per_layer = model.is_transformer() ? params.layer_total() / tp : trainable;
    double trainable_layer = lora ? trainable / std::max(1.0, layers / pp) : per_layer;
    m.gradients = std::min(m.gradients, 2 * trainable_layer * grad_bytes);
  }
  if (plan.offload == Offload::kParams) {
    m.host_bytes += m.weights;
    m.weights = gathered * weight_bytes;
  }
  // Optimizer step in backward: each parameter's gradient is applied and freed as soon as it is produced, so
  // about one layer's gradients exist at a time (torchtune optimizer_in_bwd; not with gradient accumulation).
  if (st.optimizer_in_backward && model.is_transformer()) {
    double trainable_layer = lora ? trainable / std::max(1.0, layers / pp) : params.layer_total() / tp;
    m.gradients = std::min(m.gradients, 2 * trainable_layer * grad_bytes);
  }
  if (st.paged_optimizer) m.managed_bytes = m.optimizer;

  // Activations, 1F1B: stage k holds min(pp - k, micro-batches) micro-batches for its layers; the last stage
  // also holds the logits and the loss.
  if (model.is_transformer()) {
    const double mb = static_cast<double>(plan.micro_batch);
    const double micro_batches = static_cast<double>(plan.grad_accum);
    double stage_layers = std::ceil(layers / pp);
    double per_layer = layer_activation_bytes(model, w, plan, mb);
    // A layer's activations without recomputation: what the layer being recomputed holds during its backward, and
    // what the layers that keep theirs hold when only some recompute (--recompute-layers).
    double full_layer = per_layer;
    if (plan.recompute != Recompute::kNone) {
      Plan without_recompute = plan;
      without_recompute.recompute = Recompute::kNone;
      full_layer = layer_activation_bytes(model, w, without_recompute, mb);
    }
    const bool partial = plan.recompute == Recompute::kFull && plan.recompute_layers > 0;
    auto stage_bytes = [&](double n) {
      if (!partial) return n * per_layer;
      const double r = std::min(n, static_cast<double>(plan.recompute_layers));
      return r * per_layer + (n - r) * full_layer;
    };
    // One micro-batch's activations on the stage that holds the most.
    if (pp > 1 && plan.vp == 1) {
      // Stages of ceil(layers / pp) layers set the step time; when the layers do not divide evenly the first
      // stage, which holds the most micro-batches, takes the shortfall (Megatron's
      // --decoder-first-pipeline-num-layers; Llama 3 405B trained with lighter first and last stages). The
      // second stage, one micro-batch fewer on full layers, may then hold more.
      const double first = std::max(1.0, layers - (pp - 1) * stage_layers);
      m.activations = std::max(std::min(pp, micro_batches) * stage_bytes(first),
                               std::min(pp - 1, micro_batches) * stage_bytes(stage_layers));
    } else if (pp > 1) {
      // Interleaved 1F1B (vp model chunks per device): the first device's warm-up runs 2(pp-1) + (vp-1)pp chunks
      // of 1/vp of its layers ahead, pp (1 + (pp-1)/(pp vp)) micro-batches' worth (Korthikanti et al. 2022,
      // Sec. 4.2.3).
      m.activations = stage_bytes(stage_layers) * std::min(pp, micro_batches) * (1 + (pp - 1) / (pp * plan.vp));
    } else {
      m.activations = stage_bytes(stage_layers);
    }
    double last_stage = stage_bytes(stage_layers);  // one micro-batch in flight
    if (st.activation_offload) {
      // Saved activations stream to host memory as forward proceeds; the device keeps the layer being computed
      // and the one being copied (torchtune / torchao activation offloading).
      double kept = std::min(m.activations, 2 * per_layer);
      m.host_bytes += m.activations - kept;
      m.activations = kept;
      last_stage = std::min(last_stage, 2 * per_layer);
    }
    // The layer being recomputed holds its full activations during its backward. By then the logits and the loss
    // are gone (the output projection's backward runs first and frees them): the two peaks do not add up, the larger
    // of them sits on top of the kept activations.
    const double recomputing = plan.recompute == Recompute::kFull ? full_layer : 0.0;
    // Logits and the fp32 loss on the last stage: output in compute precision + fp32 softmax copy + its grad.
    // Chunked cross-entropy upcasts one vocabulary chunk at a time (torchtune: 8 chunks).
    double tokens = mb * static_cast<double>(w.seq) / std::max(1, plan.cp);
    double e = activation_bytes(w.precision);
    // Unchunked, the loss's backward holds three fp32 vocabulary-wide tensors per token at once in an eager
    // stack (the saved log-softmax, the dense gradient nll_loss writes and the log-softmax gradient: 12 bytes,
    // measured on an H200 with Llama 3.2 shapes, scripts/gpu_measure.py); a fused loss the logits in compute
    // precision and two fp32 copies.
    double per_logit = st.chunked_loss ? e + 8.0 / 8.0 : (!st.fused_kernels ? std::max(12.0, e + 8) : e + 8);
    // Without a vocabulary-parallel loss each tensor-parallel rank holds the gathered logits whole.
    const double vocab_shards = st.loss_parallel ? tp : 1.0;
    const double logits = w.lm_head ? tokens * static_cast<double>(model.vocab_size) / vocab_shards * per_logit : 0.0;
    if (pp > 1) m.activations = std::max(m.activations + recomputing, last_stage + std::max(recomputing, logits));
    else m.activations += std::max(recomputing, logits);
    // Ring attention keeps the chunk of keys and values being computed and the one arriving (backward: with their
    // gradients), for the layer at hand.
    if (plan.cp > 1) {
      const double kv_heads = std::max(1.0, static_cast<double>(model.kv_heads) / tp);
      m.activations += 4 * 2 * tokens * kv_heads * static_cast<double>(model.head_dim) * e;
    }
  } else {
    m.activations = model.activation_bytes_per_sample * static_cast<double>(plan.micro_batch) *
                    (mp ? 0.5 : 1.0);
  }
  // Gradients freed between steps (one process, no accumulation, no persistent buffers): backward produces them
  // as it frees the activations, so the peak holds all the activations and the first gradients produced (the
  // output projection's, the tied embedding's), or all the gradients and what activations are left, whichever
  // is more. Measured on an H200: Llama 3.2 3B pure bf16 predicted +13% with both held in full, +1.5% so.
  if (!st.persistent_grads && !st.optimizer_in_backward && plan.grad_accum == 1 && plan.count() == 1 &&
      plan.zero == 0 && plan.offload == Offload::kNone && model.is_transformer()) {
    const double first = lora ? m.gradients / std::max(1.0, layers)  // the last layer's adapters
                              : (model.tied_embeddings ? params.embedding : params.output) * grad_bytes;
    m.gradients = std::max(std::min(m.gradients, first), m.gradients - m.activations);
  }
  add_runtime(m, device, plan.count() > 1);
  return m;
}

MemoryBreakdown inference_memory(const Model& model, const ParameterCounts& params, const Device& device,
                                 const Workload& w, const Plan& plan) {
  MemoryBreakdown m;
  const double tp = plan.tp, pp = plan.pp;
  const double ends = model.is_transformer() ? params.embedding + params.output : 0;
  // Layers (and the output projection) left in host memory (--gpu-layers): the host holds them once per replica,
  // counted here per device (host_bytes is per device).
  const LayerPlacement place = layer_placement(model, w);
  const double layer_weights = (params.total - ends) * weight_bytes_per_param(w);
  const double head = head_weight_bytes(w);
  m.weights = layer_weights * place.device_share() + (place.head_on_host ? 0.0 : params.output * head);
  double offloaded = layer_weights * (1 - place.device_share()) + (place.head_on_host ? params.output * head : 0.0);
  if (model.is_transformer()) {
    // The token embedding table: on the device in its own format, or in host memory (llama.cpp, ExLlamaV2). A tied
    // table is the output projection too, which the device holds in the head's format; a stack that quantizes the
    // head but not the embedding (torchao, gpt-fast) holds the table twice. An output projection left with the host
    // is the host's table itself where the formats agree.
    const double table = embedding_weight_bytes(w);
    const bool on_device = embedding_on_device(w, device);
    if (model.tied_embeddings && !place.head_on_host)
      m.weights += params.embedding * (head + (on_device && table != head ? table : 0.0));
    else if (on_device)
      m.weights += params.embedding * table;
    if (model.tied_embeddings && place.head_on_host && (on_device || table != head)) offloaded += params.embedding * head;
    // Kept in host memory instead: the host holds it once, beside whatever it holds for the devices.
    if (!on_device) m.host_bytes += params.embedding * table;
  }
  m.weights /= tp * pp;
  m.offloaded_bytes = offloaded / (tp * pp);
  m.host_bytes += m.offloaded_bytes;
  const double batch = static_cast<double>(plan.micro_batch);
  if (model.is_transformer()) {
    const double context = static_cast<double>(w.prompt + w.generate);
    const double kv_bytes = bytes_per_element(w.kv_cache);
    // The layers whose KV cache the device holds: all but those an engine runs on the host, which keeps theirs.
    const double cached_layers = w.stack.offload_runs_on_host ? place.device_layers : static_cast<double>(model.total_layers());
    const double layers = std::ceil(cached_layers / pp);
    // KV heads are split across tensor-parallel ranks (replicated when there are fewer heads than ranks).
    const double kv_heads_local = std::max(1.0, static_cast<double>(model.kv_heads) / tp);
    // An encoder keeps no cache: its one forward pass attends over the whole input at once.
    const bool cached = model.generates() && (w.generate > 0 || w.prompt > 0);
    if (cached && !model.mla && model.sliding_window <= 0) {
      m.kv_cache = 2 * layers * kv_heads_local * static_cast<double>(model.head_dim) * context * batch * kv_bytes;
    } else if (cached) {
      // Sliding-window layers hold at most the window; MLA's latent is not split by tensor parallelism.
      const double split = model.mla ? 1 : kv_heads_local / static_cast<double>(model.kv_heads);
      const double stage = layers / static_cast<double>(model.total_layers());
      m.kv_cache = kv_cache_elements(model, context) * stage * split * batch * kv_bytes;
    }
    // The host layers' cache, in host memory.
    if (cached && cached_layers < model.total_layers()) {
      const double host_kv = kv_cache_elements(model, context) * (1 - cached_layers / static_cast<double>(model.total_layers())) *
                             batch * kv_bytes / (tp * pp);
      m.offloaded_bytes += host_kv;
      m.host_bytes += host_kv;
    }
    // Transient activations of one layer during prefill (flash attention; eager adds the s x s scores).
    const double e = 2;
    const double tokens = batch * static_cast<double>(w.prompt);
    const double h = static_cast<double>(model.hidden_size);
    const double f = static_cast<double>(model.ffn_hidden_size) / tp;
    double transient = tokens * (4 * h + (model.gated() ? 3 : 2) * f) * e;
    if (w.attention == Attention::kEager)
      transient += batch * static_cast<double>(model.attention_heads) / tp * static_cast<double>(w.prompt) *
                   static_cast<double>(w.prompt) * e * 2;
    // Logits of the last position (prefill keeps only the last row) in fp32.
    if (w.lm_head) transient += batch * static_cast<double>(model.vocab_size) * 4;
    m.activations = transient;
  } else {
    // A no-grad forward pass frees each tensor when its last reader is done: what is alive at once is the widest
    // point's input, outputs and kept residual (the model file's fp32 figure), in the precision that runs.
    const double live = model.inference_activation_bytes_per_sample > 0 ? model.inference_activation_bytes_per_sample
                                                                         : 0.25 * model.activation_bytes_per_sample;
    m.activations = live * batch * generic_inference_activation_bytes(w) / 4;
  }
  // A device that streams its parameters runs a runtime that lives in the host's memory: its SRAM holds the
  // activations and what it caches of the parameters (stream_parameters). An NPU runtime (Core ML, QNN) keeps no
  // CUDA-style context, workspace or caching allocator: its compiled graph's buffers are the activations above.
  if (device.streams_parameters() || w.stack.npu_graph) return m;
  // Communication buffers only where a replica spans devices (tensor or pipeline parallel): data-parallel replicas
  // of inference serve their own batches and never talk to each other.
  add_runtime(m, device, plan.count() / std::max(1, plan.dp) > 1);
  return m;
}

void stream_parameters(MemoryBreakdown& m, double usable) {
  // The Edge TPU compiler plans the activations' buffers first and caches parameters in the rest of the 8 MiB: its
  // printouts give 7.98 MiB available to a tiny CNN, 6.25 MiB to ResNet-50 (18.43 MiB streamed), 1.73 MiB to a
  // network with a 1920x1058 input.
  // Whatever else it holds (a language model's KV cache) comes before the parameters too.
  const double cached = std::clamp(usable - (m.demand() - m.weights), 0.0, m.weights);
  m.streamed_bytes = m.weights - cached;
  m.host_bytes += m.streamed_bytes;
  m.weights = cached;
}

}  // namespace hwplan
