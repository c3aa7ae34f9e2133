#include "estimators/inference.hpp"

#include <algorithm>
#include <cmath>

#include "estimators/comm.hpp"
#include "estimators/efficiency.hpp"
#include "estimators/memory.hpp"
#include "estimators/operators.hpp"
#include "estimators/params.hpp"
#include "estimators/stack.hpp"
#include "core/assumptions.hpp"

namespace hwplan {
namespace {

// The experts a MoE layer's `tokens` touch, on average: E (1 - (1 - k/E)^tokens).
double experts_touched(const Model& m, double tokens) {
  if (!m.moe) return 0;
  const double experts = m.moe->experts;
  return experts * (1 - std::pow(1 - static_cast<double>(m.moe->experts_per_token) / experts, std::max(1.0, tokens)));
}

// The token-wise part of one layer for `batch` new tokens (decode: one per sequence), per device: each projection
// is a skinny GEMM (M = tokens) that reads the whole weight matrix, memory-bound until the token count reaches the
// device's ridge point; the small elementwise kernels (norms, RoPE, KV append, residuals, activation) cost mostly
// their launch. `grouped_experts`: the engine runs a MoE layer's experts as one grouped GEMM per projection
// (vLLM's and SGLang's fused_moe, TensorRT-LLM's MoE plugin, llama.cpp's mul_mat_id), one kernel floor each; else
// (eager modelling code) a loop over the touched experts, each its own GEMMs.
double token_layer_seconds(const Model& m, const DeviceRates& r, double batch, int tp, double weight_bytes,
                           double* weight_read, bool grouped_experts) {
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.attention_heads * m.head_dim) / tp;
  const double kv = std::max(static_cast<double>(m.head_dim), static_cast<double>(m.kv_heads * m.head_dim) / tp);
  const double f = static_cast<double>(m.moe ? m.expert_ffn() : m.ffn_hidden_size) / tp;
  const double e = 2;
  double t = 0;
  double weights = 0;
  auto proj = [&](double n, double k, double count = 1) {
    t += count * gemm_seconds(r, batch, n, k, 1, e, weight_bytes);
    weights += count * n * k * weight_bytes;
  };
  if (m.mla) {
    // MLA: the low-rank query and key/value factors and the output projection, all read once per step.
    proj(attention_parameters(m) / tp / h, h);
  } else {
    proj(q + 2 * kv, h);  // fused QKV
    proj(h, q);           // output
  }
  if (m.moe) {
    // Each token activates k experts; a batch touches experts_touched of them.
    const double touched = experts_touched(m, batch);
    double tokens_per_expert = batch * m.moe->experts_per_token / touched;
    if (grouped_experts) {
      t += gemm_seconds(r, tokens_per_expert, (m.gated() ? 2 : 1) * f, h, touched, e, weight_bytes);
      t += gemm_seconds(r, tokens_per_expert, h, f, touched, e, weight_bytes);
    } else {  // each touched expert's own two GEMMs (the expected number of experts: extra_kernels counts the same)
      t += touched * (gemm_seconds(r, tokens_per_expert, (m.gated() ? 2 : 1) * f, h, 1, e, weight_bytes) +
                      gemm_seconds(r, tokens_per_expert, h, f, 1, e, weight_bytes));
    }
    weights += touched * (m.gated() ? 3 : 2) * h * f * weight_bytes;
    if (m.moe->shared_experts > 0) {  // always-active experts: a dense MLP of their combined width
      const double shared = m.moe->shared_experts;
      proj((m.gated() ? 2 : 1) * f * shared, h);
      proj(h, f * shared);
    }
  } else {
    proj((m.gated() ? 2 : 1) * f, h);
    proj(h, f);
  }
  // Elementwise kernels: 2 norms (2 kernels each in eager frameworks), RoPE (2), KV append (2), 2 residual adds,
  // activation (+ gate multiply).
  const double small = batch * h * e * 3;
  t += 12 * memory_seconds(r, small);
  if (weight_read) *weight_read += weights;
  return t;
}

// Decode attention of one layer over `context_tokens` cached positions in total (summed over the sequences), per
// device: read K and V for every cached position; 4 a d c FLOPs per sequence.
double decode_attention_layer_seconds(const Model& m, const DeviceRates& r, double context_tokens, int tp,
                                      double kv_bytes, double* kv_read, double sequences = 1) {
  const double q = static_cast<double>(m.attention_heads * m.head_dim) / tp;
  const double kv = std::max(static_cast<double>(m.head_dim), static_cast<double>(m.kv_heads * m.head_dim) / tp);
  double cache = 2 * kv * context_tokens * kv_bytes;
  if (m.mla || m.sliding_window > 0) {
    // Average over the layers: sliding-window layers read at most the window of each sequence, MLA reads its
    // latent (whole on every tensor-parallel rank).
    const double split = m.mla ? 1 : kv / static_cast<double>(m.kv_heads * m.head_dim);
    const double n = std::max(1.0, sequences);
    cache = kv_cache_elements(m, context_tokens / n) / static_cast<double>(m.total_layers()) * split * n * kv_bytes;
  }
  const double attn_flops = 4 * q * context_tokens;
  if (kv_read) *kv_read += cache;
  return std::max(cache / achieved_bandwidth(r, cache), attn_flops / (r.matrix_flops * 0.3)) + 3 * r.kernel_overhead_seconds;
}

// One decode step of one layer for `batch` sequences at `context` tokens of KV cache, per device.
double decode_layer_seconds(const Model& m, const DeviceRates& r, double batch, double context, int tp,
                            double weight_bytes, double kv_bytes, double* weight_read, double* kv_read, bool grouped_experts) {
  return token_layer_seconds(m, r, batch, tp, weight_bytes, weight_read, grouped_experts) +
         decode_attention_layer_seconds(m, r, context * batch, tp, kv_bytes, kv_read, batch);
}

// Kernels one decode step issues per layer. Fused engines: the device prices QKV, output, up and down GEMMs,
// attention (3), two norms, RoPE, KV append, two residual adds and the activation (~15-19); their code issues
// fewer calls (kFusedDecodeCallsPerLayer below). Eager Hugging Face modelling code: RMSNorm
// as seven ops (twice), RoPE as ten, q/k/v as three GEMMs, KV-cache concatenation and GQA head repetition (two
// each), the gated activation as two: ~42. Quantised weights in eager code add the library's per-linear
// glue: bitsandbytes 4-bit, nf4 (quant-state unpacking, casts, the gemv: ~3 more per linear); LLM.int8() (row/column
// statistics, outlier split, int8 GEMM, dequantise, fp16 GEMM for outliers, add: ~12 more). GPTQ / AWQ int4 layers
// call one fused dequantise-and-multiply kernel from their extension (AutoGPTQ's exllama QuantLinear: ext_q4_matmul
// and the bias add; AutoAWQ's WQLinear: one gemm/gemv call): about one more per linear; so do GPTQ int8 layers
// (AutoGPTQ's 8-bit QuantLinear: one vecquant8matmul call), which a GPTQ checkpoint's int8 means
// (Workload::fused_dequant_kernels) where a bare --weights int8 means bitsandbytes' LLM.int8().
constexpr double kFusedDecodeKernelsPerLayer = 4 + 3 + 12;

// What a fused stack's code issues per decode layer when no CUDA graph replays it, one kernel a call: the two norms
// (fused with the residual adds in vLLM, AutoAWQ's fused RMSNorm plus a separate add), QKV, RoPE and the cache
// write (vLLM's rotary and reshape_and_cache; inside the FasterTransformer-derived decode attention of AutoAWQ's
// fused modules), attention, output, gate and up (one merged GEMM in vLLM), the activation and its gate multiply
// (vLLM's silu_and_mul), down: 10 (vLLM 0.2 eager) to 12 (AutoAWQ fuse_layers); 12 taken. The device side still
// prices kFusedDecodeKernelsPerLayer floors (token_layer_seconds' count): this changes the host's issue time only.
constexpr double kFusedDecodeCallsPerLayer = 12;

// Eager MoE blocks (transformers' Mixtral, Qwen2/3-MoE: a Python loop over the touched experts) replace the dense
// MLP's ~5 kernels with the router (gate linear, softmax, top-k, renormalisation, cast, one-hot mask, its sum and hit
// test, nonzero: ~10) and, per touched expert, torch.where over its mask, the gather of its tokens, its gated MLP
// (5), the routing-weight lookup and multiply (2) and index_add_ (~10). The nonzero and each torch.where copy a
// result to the host, which waits for the GPU: host and device work no longer overlap (inference_time).
bool eager_moe(const Model& m, const Workload& w) {
  // Engines that state their own kernels per layer (llama.cpp's graph) run the experts in one kernel each.
  return m.moe && !w.stack.fused_kernels && w.stack.decode_kernels_per_layer <= 0;
}

double eager_moe_extra_kernels(const Model& m, const Workload& w, double tokens) {
  if (!eager_moe(m, w)) return 0;
  return 10 - 5 + 10 * experts_touched(m, tokens);
}

// Kernels a fused engine's decode layer issues beyond a dense GQA layer's, which token_layer_seconds does not price
// on its own, averaged over the layers. A MoE block (vLLM's and SGLang's fused_moe path, TensorRT-LLM's MoE plugin)
// adds the router's GEMM, the top-k selection, the alignment of tokens to expert blocks and the weighted sum of the
// experts' outputs (4), and its shared experts' activation (their two GEMMs are priced); MLA (DeepSeek-V2/V3) runs
// its attention as five GEMMs where one is priced (the fused q_a/kv_a down-projection, q_b, the absorbed W_UK and W_UV
// batched GEMMs, the output) and adds the two latent norms (6).
double fused_architecture_kernels(const Model& m) {
  double kernels = 0;
  if (m.moe) {
    const double layers = std::max<double>(1.0, static_cast<double>(m.total_layers()));
    const double moe_share = 1 - std::min<double>(layers, static_cast<double>(m.moe->dense_layers)) / layers;
    kernels += moe_share * (4 + (m.moe->shared_experts > 0 ? 1 : 0));
  }
  if (m.mla) kernels += 6;
  return kernels;
}

// The architecture's extra kernels apply to the fused engines whose per-layer count hwplan derives (not to eager code,
// whose MoE loop eager_moe_extra_kernels counts, nor to an engine that states its own graph).
double architecture_kernels(const Model& m, const Workload& w) {
  return w.stack.fused_kernels && w.stack.decode_kernels_per_layer <= 0 ? fused_architecture_kernels(m) : 0.0;
}

double decode_kernels_per_layer(const Model& m, const Workload& w, double tokens = 1) {
  const double linears = m.gated() ? 7 : 6;
  const bool quantized = w.weights && (*w.weights == WeightFormat::kInt8 || *w.weights == WeightFormat::kInt4 ||
                                       *w.weights == WeightFormat::kNf4 || *w.weights == WeightFormat::kQ4_0 ||
                                       *w.weights == WeightFormat::kQ4KM);
  if (w.stack.decode_kernels_per_layer > 0)
    return w.stack.decode_kernels_per_layer + (quantized ? linears * w.stack.quantized_linear_kernels : 0);
  const bool fused = w.stack.fused_kernels;
  double kernels = (fused ? kFusedDecodeCallsPerLayer : 42) + eager_moe_extra_kernels(m, w, tokens) + architecture_kernels(m, w);
  if (!fused && w.weights) {
    WeightFormat f = *w.weights;
    if (f == WeightFormat::kNf4 || f == WeightFormat::kQ4_0 || f == WeightFormat::kQ4KM) kernels += 3 * linears;
    if (f == WeightFormat::kInt4) kernels += linears;
    if (f == WeightFormat::kInt8) kernels += (w.fused_dequant_kernels ? 1 : 12) * linears;
  }
  return kernels;
}

// Kernels per decode step beyond the fused engine's (which token_layer_seconds and the attention already count):
// each still costs the device its per-kernel floor (launch, ramp-up, tail) however little it moves.
double extra_kernels(const Model& m, const Workload& w, double tokens = 1) {
  // The eager MoE loop's expert GEMMs are priced by token_layer_seconds already (2 per touched expert).
  const double priced = eager_moe(m, w) ? 2 * experts_touched(m, tokens) : 0;
  const double architecture = architecture_kernels(m, w);
  return static_cast<double>(m.total_layers()) *
         (std::max(0.0, decode_kernels_per_layer(m, w, tokens) - architecture - kFusedDecodeKernelsPerLayer - priced) +
          architecture);
}

}  // namespace

double engine_step_seconds(double gpu, double host_issue, double step_overhead, bool overlap) {
  return overlap ? std::max(gpu, host_issue + step_overhead) : std::max(gpu, host_issue) + step_overhead;
}

double generic_inference_activation_bytes(const Workload& w) {
  const Precision compute = inference_compute_precision(w);
  const bool eight_bit = compute == Precision::kInt8 || compute == Precision::kFp8;
  return eight_bit && w.stack.fused_kernels ? 1.0 : activation_bytes(w.precision);
}

Precision inference_compute_precision(const Workload& w) {
  if (w.precision == Precision::kFp32) return Precision::kFp32;
  return w.weights ? compute_precision(*w.weights) : w.precision;
}

// A device without memory of its own (Device::streams_parameters): the parameters its on-chip cache cannot hold
// cross the host link on every forward pass, while the layers before them compute (the Edge TPU re-reads them for
// each inference; coral.ai's benchmarks show models beyond its 8 MB slowing down sharply). The pass lasts as long as
// the longer of the two: ResNet-50 at 299x299 (18.4 MiB streamed) takes 49 ms and VGG16 (about 130 MB) 296 ms on the
// USB Accelerator, 0.41-0.44 GB/s if the transfer overlaps the arithmetic, against USB 3's realistic 0.4.
double streamed_parameter_seconds(const EstimateInput& in) {
  const Device& d = *in.device;
  if (!d.streams_parameters()) return 0;
  MemoryBreakdown m = inference_memory(*in.model, count_parameters(*in.model), d, in.workload, in.plan);
  stream_parameters(m, in.system.usable_bytes(d.plan_memory_bytes()));
  const double streamed = m.streamed_bytes;
  const double rate = d.host_link.bytes_per_s() * assumptions().host_link_efficiency;
  return streamed > 0 && rate > 0 ? streamed / rate : 0;
}

namespace {

// Inference with layers left in host memory (--gpu-layers), one replica: what the host holds and how fast it is.
struct OffloadGeometry {
  LayerPlacement place;
  bool on_host = false;           // the host's CPU computes them (llama.cpp), else they stream to the device
  double min_batch = 0;           // rows from which the engine runs them on the device after all (llama.cpp: 32)
  double layer_params = 0;        // one transformer layer's parameters, all its experts included
  double expert_params = 0;       // one routed expert's, per layer (0 for a dense model)
  double bytes_per_param = 2;
  double head_params = 0;         // the output projection's, where it stays with the host; else 0
  double head_bytes_per_param = 2;
  // Whole weights: what the host holds, and what crosses the link when the device computes them.
  double host_weight_bytes() const {
    return layer_params * place.host_layers() * bytes_per_param + head_params * head_bytes_per_param;
  }
  double memory_bytes_per_s = 0;  // the host's share, where several replicas' layers live on one host
  double matrix_flops = 0;
  double link_bytes_per_s = 0;
};

OffloadGeometry offload_geometry(const EstimateInput& in) {
  OffloadGeometry g;
  const Model& m = *in.model;
  const Workload& w = in.workload;
  g.place = layer_placement(m, w);
  if (!g.place.offloaded()) return g;
  g.on_host = w.stack.offload_runs_on_host;
  g.min_batch = w.stack.offload_min_batch;
  const ParameterCounts p = count_parameters(m);
  g.layer_params = (p.total - p.embedding - p.output) / std::max(1.0, g.place.total_layers);
  if (m.moe) g.expert_params = (m.gated() ? 3.0 : 2.0) * static_cast<double>(m.hidden_size) * static_cast<double>(m.expert_ffn());
  g.bytes_per_param = weight_bytes_per_param(w);
  g.head_bytes_per_param = head_weight_bytes(w);
  if (g.place.head_on_host) g.head_params = static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size);
  // The replicas a host carries (its devices over one replica's) read its memory and share its cores at once.
  const double on_host = std::min<double>(in.system.count, std::max(1, in.system.devices_per_node));
  const double replicas = std::max(1.0, on_host / (in.plan.tp * in.plan.pp));
  const HostRates typical = typical_host(*in.device);
  g.memory_bytes_per_s =
      (in.system.host_memory_bytes_per_s > 0 ? in.system.host_memory_bytes_per_s : typical.memory_bytes_per_s) / replicas;
  g.matrix_flops = (in.system.host_matrix_flops > 0 ? in.system.host_matrix_flops : typical.matrix_flops) / replicas;
  g.link_bytes_per_s = std::max(1e6, in.device->host_link.bytes_per_s() * assumptions().host_link_efficiency);
  return g;
}

// The host's CPU running its layers for `tokens` new tokens of `sequences` sequences at `context` cached positions
// each: it reads their weights once (of a MoE layer, the experts the tokens touch) and their KV cache, and
// multiplies (each token through its k experts); the slower of the two, as a roofline.
double host_layers_seconds(const Model& m, const Workload& w, const OffloadGeometry& g, double tokens, double sequences,
                           double context) {
  const double kv_per_layer = kv_cache_elements(m, std::max(1.0, context)) / std::max(1.0, g.place.total_layers) *
                              bytes_per_element(w.kv_cache) * sequences;
  const double q = static_cast<double>(m.attention_heads * m.head_dim);
  double read_params = g.layer_params, token_params = g.layer_params;
  if (m.moe) {
    const double idle = static_cast<double>(m.moe->experts) - experts_touched(m, tokens);
    read_params -= idle * g.expert_params;
    token_params -= static_cast<double>(m.moe->experts - m.moe->experts_per_token) * g.expert_params;
  }
  const double layers = g.place.host_layers();
  const double bytes = layers * (read_params * g.bytes_per_param + kv_per_layer) + g.head_params * g.head_bytes_per_param;
  const double flops = 2 * tokens * (layers * token_params + g.head_params) + layers * 4 * q * context * tokens;
  return std::max(bytes / g.memory_bytes_per_s, flops / g.matrix_flops);
}

}  // namespace

DeviceRates inference_rates(const EstimateInput& in) {
  DeviceRates r = device_rates(*in.device, inference_compute_precision(in.workload), in.profile);
  if (in.workload.stack.npu_graph) r.kernel_overhead_seconds = r.memory_bound_kernel_overhead_seconds = 0;
  // Plain Transformers runs quantized layers through bitsandbytes or AutoGPTQ's batch-1 kernels (see the kernel
  // counts above), not Marlin-class fused kernels built for batches.
  if (parse_engine(in.workload.stack.preset) == Engine::kHf) r.fused_dequant_gemm = false;
  return r;
}

namespace {

InferenceJobRate inference_job_rate(const Model& m, const Workload& w, const Plan& plan, const InferenceTime& t) {
  const double batch = static_cast<double>(plan.micro_batch) * std::max(1, t.replicas);
  InferenceJobRate r;
  if (!m.is_transformer()) {
    r.per_second = t.total_decode_tokens_per_second();  // forward passes: samples per second
    r.counts = "samples";
  } else if (w.generate > 0 && t.total_seconds > 0) {
    r.per_second = batch * static_cast<double>(w.generate) / t.total_seconds;
  } else if (t.prefill_seconds > 0) {
    r.per_second = batch * static_cast<double>(w.prompt) / t.prefill_seconds;
    r.counts = "input";
  }
  return r;
}

// One prefill: a forward pass over `batch` x the prompt, the workload's stack and attention, on the plan's split.
LayerShape prefill_shape(const EstimateInput& in, double batch, double weight_bytes) {
  const Workload& w = in.workload;
  LayerShape s;
  s.model = in.model;
  s.micro_batch = batch;
  s.seq = static_cast<double>(w.prompt);
  s.tp = in.plan.tp;
  s.ep = in.plan.ep;
  s.sequence_parallel = in.plan.sequence_parallel;
  s.attention = w.attention;
  s.training = false;
  s.lm_head = w.lm_head;
  s.activation_bytes = activation_bytes(w.precision);
  s.weight_bytes = weight_bytes;
  s.stack = &w.stack;
  return s;
}

InferenceTime prefill_and_decode(const EstimateInput& in) {
  InferenceTime out;
  out.replicas = std::max(1, in.plan.dp);
  const Model& m = *in.model;
  const Workload& w = in.workload;
  const Plan& plan = in.plan;
  const DeviceRates rates = inference_rates(in);
  // Parameters a device without memory of its own streams in, every forward pass and every decode step.
  out.streamed_seconds = streamed_parameter_seconds(in);
  const double weight_bytes = weight_bytes_per_param(w);
  const double head_bytes = head_weight_bytes(w);  // the output projection's (16-bit in quantized checkpoints)
  const double batch = static_cast<double>(plan.micro_batch);

  if (!m.is_transformer()) {
    LayerShape s;
    s.model = &m;
    s.micro_batch = batch;
    s.training = false;
    // 8-bit engines hand 8-bit tensors between layers: the memory-bound traffic halves with the arithmetic.
    s.activation_bytes = generic_inference_activation_bytes(w);
    s.stack = &w.stack;
    Cost c = generic_cost(s, rates);
    double forward = std::max(c.forward_seconds, out.streamed_seconds);
    // One invoke per forward pass (its fixed cost includes handing a 224x224 image over: the rows that set it).
    if (w.stack.npu_graph) forward += w.stack.invoke_seconds;
    out.prefill_seconds = forward;
    out.total_seconds = forward;
    out.decode_tokens_per_second = batch / std::max(1e-12, forward);  // samples/s
    out.time_per_output_token_seconds = forward;
    return out;
  }

  const double layers = static_cast<double>(m.total_layers());
  // Layers left in host memory (--gpu-layers): the device computes the rest (every layer, where they stream to it).
  const OffloadGeometry off = offload_geometry(in);
  out.offload_on_host = off.on_host;
  out.offload_host_layers = off.place.host_layers();
  const double device_layers = off.on_host ? off.place.device_layers : layers;
  const double layers_per_stage = std::ceil(device_layers / plan.pp);
  GroupLink tp_link = group_link(*in.device, in.system, plan.tp, 1);
  // A pipeline is a chain: its slowest stage-to-stage hop sets its sends, so the whole chain is the group.
  GroupLink pp_link = send_link(*in.device, in.system, std::max(2, plan.pp), plan.tp);

  // Prefill: one forward pass over batch x prompt tokens.
  if (w.prompt > 0) {
    const LayerShape s = prefill_shape(in, batch, weight_bytes);
    Cost layer = layer_cost(s, rates);
    // A plain forward (generate 0) computes logits for every position; serving keeps only the last one.
    Cost head = head_cost(s, rates);
    if (w.generate > 0) {
      LayerShape last = s;
      last.seq = 1;
      last.weight_bytes = head_bytes;
      head = head_cost(last, rates);
    }
    double tp_comm = plan.tp > 1 ? 2 * engine_allreduce_seconds(batch * s.seq * static_cast<double>(m.hidden_size) * 2, plan.tp,
                                                                 tp_link, w.stack.custom_allreduce)
                                 : 0;
    double pp_comm = plan.pp > 1 ? (plan.pp - 1) * p2p_seconds(batch * s.seq * static_cast<double>(m.hidden_size) * 2, pp_link) : 0;
    // Stages run one after another for a single batch.
    double prefill_layers = layers, head_seconds = head.forward_seconds;
    if (off.place.offloaded()) {
      // Layers left in host memory: an engine that computes them on the host does so for a prompt batch below its
      // offload threshold; above it (and in every engine that streams them) the device computes every layer after
      // their weights cross the host link: once per ubatch, or once per pass. A host-held output projection
      // computes the last positions' logits on the host.
      const double tokens = batch * static_cast<double>(w.prompt);
      const bool host_computes = off.on_host && tokens < w.stack.offload_min_batch;
      if (host_computes) {
        prefill_layers = off.place.device_layers;
        out.offload_prefill_seconds = host_layers_seconds(m, w, off, tokens, batch, static_cast<double>(w.prompt) / 2);
      } else {
        OffloadGeometry layers_only = off;
        layers_only.head_params = 0;
        const double passes = off.on_host && w.stack.offload_ubatch > 0 ? std::ceil(tokens / w.stack.offload_ubatch) : 1.0;
        out.offload_prefill_seconds = passes * layers_only.host_weight_bytes() / off.link_bytes_per_s;
        if (off.place.head_on_host) {
          // The logits of the last positions (of every position with nothing to generate): on the host's CPU below
          // the engine's threshold, else on the device after the projection crosses the link.
          const double rows = w.generate > 0 ? batch : tokens;
          OffloadGeometry head_only = off;
          head_only.place.device_layers = head_only.place.total_layers;
          out.offload_prefill_seconds += rows < off.min_batch ? host_layers_seconds(m, w, head_only, rows, batch, 0)
                                                              : head_only.host_weight_bytes() / off.link_bytes_per_s;
        }
      }
      if (off.place.head_on_host) head_seconds = 0;
    }
    out.prefill_seconds =
        std::max(prefill_layers * (layer.forward_seconds + tp_comm) + head_seconds + pp_comm, out.streamed_seconds) +
        out.offload_prefill_seconds + w.stack.invoke_seconds;
  }

  // Decode: per output token, at the average context length over the generation.
  if (w.generate > 0) {
    const double context = static_cast<double>(w.prompt) + static_cast<double>(w.generate) / 2.0;
    const Stack& st = w.stack;
    struct Step {
      double gpu = 0, host = 0, seconds = 0, comm = 0, weight_read = 0, kv_read = 0, read_seconds = 0, offload = 0;
    };
    // One decode step of `b` sequences: the device's time, the host's issue and the step as the two combine.
    auto step = [&](double b) {
      Step t;
      // A decode step of a few sequences is memory-bound: a power-limited device runs it at its boost clock.
      const DeviceRates decode = rates_at_load(rates, b, weight_bytes);
      const double layer = decode_layer_seconds(m, decode, b, context, plan.tp, weight_bytes, bytes_per_element(w.kv_cache),
                                                &t.weight_read, &t.kv_read, !eager_moe(m, w));
      const double tp_comm = plan.tp > 1 ? 2 * engine_allreduce_seconds(b * static_cast<double>(m.hidden_size) * 2, plan.tp,
                                                                          tp_link, w.stack.custom_allreduce)
                                         : 0;
      const double logits = gemm_seconds(decode, b, static_cast<double>(m.vocab_size) / plan.tp,
                                         static_cast<double>(m.hidden_size), 1, 2, head_bytes) +
                            4 * decode.kernel_overhead_seconds;
      const double pp_comm = plan.pp > 1 ? (plan.pp - 1) * p2p_seconds(b * static_cast<double>(m.hidden_size) * 2, pp_link) : 0;
      // Pipeline stages work on different micro-batches in steady state only when there are several;
      // a single stream walks through all stages.
      // Layers left in host memory: the host's CPU computes them for a step of fewer sequences than the engine's
      // threshold (llama.cpp: 32 rows); otherwise, and in every engine that streams them, the device computes every
      // layer after their weights cross the host link.
      const bool host_runs = off.on_host && b < off.min_batch;
      const double computed = host_runs ? device_layers : layers;
      const double device_share = computed / std::max(1.0, layers);
      const double device_head = host_runs && off.place.head_on_host ? 0.0 : 1.0;
      t.gpu = std::max(computed * (layer + tp_comm) + device_head * logits + pp_comm +
                           device_share * extra_kernels(m, w, b) * decode.kernel_overhead_seconds,
                       out.streamed_seconds);
      t.comm = computed * tp_comm + pp_comm;
      // A cache grown by concatenation is copied whole in every layer on every token: read it, write it again
      // (the concatenation's kernels are already among the eager step's).
      if (st.kv_cache_concat) t.gpu += computed * memory_seconds(decode, 2 * t.kv_read);
      // The host issues every kernel of the step (eager) or replays one graph; it also samples, checks stop
      // conditions and schedules once per step. A step lasts as long as the slower of the two sides.
      t.host = st.cuda_graphs ? 0.0 : (computed * decode_kernels_per_layer(m, w, b) + 8) * st.host_seconds_per_kernel;
      t.seconds = engine_step_seconds(t.gpu, t.host, st.decode_step_overhead_seconds, st.overlap_scheduling);
      // An eager MoE loop synchronises with the device in every layer: the host's issue and the GPU's work add up.
      if (eager_moe(m, w) && !st.cuda_graphs) t.seconds = t.gpu + t.host + st.decode_step_overhead_seconds;
      // Layers left in host memory, in turn with the device's: the host's CPU computes them from its memory, or
      // their weights cross the host link for the device to compute.
      if (off.place.offloaded()) {
        t.offload = host_runs ? host_layers_seconds(m, w, off, b, b, context) : off.host_weight_bytes() / off.link_bytes_per_s;
        t.seconds += t.offload;
      }
      const double read = computed * (t.weight_read + t.kv_read) +
                          device_head * static_cast<double>(m.vocab_size * m.hidden_size) / plan.tp * head_bytes;
      t.read_seconds = read / achieved_bandwidth(decode, read);
      return t;
    };
    const Step now = step(batch);
    out.decode_gpu_seconds = now.gpu;
    out.decode_comm_seconds = now.comm;
    out.decode_comm_medium = plan.tp > 1 ? tp_link.medium : pp_link.medium;
    out.host_seconds_per_token = now.host + st.decode_step_overhead_seconds;
    out.time_per_output_token_seconds = now.seconds;
    // The host issuing kernels sets the pace only where it is also longer than the layers the host computes.
    out.decode_host_bound = now.host > now.gpu && now.host > now.offload;
    out.offload_seconds_per_token = now.offload;
    out.offload_decode_on_host = off.on_host && batch < off.min_batch;
    out.decode_weight_bytes = layers_per_stage * now.weight_read +
                              (off.place.head_on_host ? 0.0 : static_cast<double>(m.vocab_size * m.hidden_size) / plan.tp * head_bytes);
    out.decode_kv_bytes = layers_per_stage * now.kv_read;
    // What a step of twice the sequences costs, as the estimators time it: a larger batch is almost free when the step
    // barely grows (reads of the same weights, kernels' fixed costs), not when the GEMMs near the device's compute
    // rate, the cache's reads dominate or an MoE batch touches more experts.
    out.decode_doubling_ratio = step(2 * batch).seconds / std::max(1e-12, now.seconds);
    // Compute-bound when the step grows with its sequences and the weights' and cache's reads are not most of it
    // (peak rates called a batch of 256 on an H100 memory-bound where its GEMMs' own time rivals the reads); a step
    // that barely grows is set by its reads and its kernels' fixed costs: memory-bound.
    out.decode_memory_bound = now.read_seconds >= 0.5 * std::max(1e-12, now.gpu - now.comm) ||
                              out.decode_doubling_ratio < 1.5;
    out.decode_tokens_per_second = batch / out.time_per_output_token_seconds;
  }
  // The prefill's last logits give the first output token: the other generate - 1 come from decode steps (as serve
  // times a request: its TTFT, then a step per further token).
  // Without a prompt there is no prefill: every output token is a decode step.
  const long decode_steps = std::max<long>(0, w.generate - (w.prompt > 0 ? 1 : 0));
  out.total_seconds = out.prefill_seconds + static_cast<double>(decode_steps) * out.time_per_output_token_seconds;
  if (!m.generates()) {
    // An encoder's inference is its forward pass over the batch: the per-token fields carry it per sample, as a
    // generic network's do.
    out.time_per_output_token_seconds = out.prefill_seconds;
    out.decode_tokens_per_second = batch / std::max(1e-12, out.prefill_seconds);  // samples/s
  }
  return out;
}

}  // namespace

InferenceTime inference_time(const EstimateInput& in) {
  InferenceTime out = prefill_and_decode(in);
  out.job = inference_job_rate(*in.model, in.workload, in.plan, out);
  return out;
}

StepRates step_rates(const EstimateInput& in) {
  StepRates s;
  const Model& m = *in.model;
  const Workload& w = in.workload;
  s.model = &m;
  s.rates = inference_rates(in);
  s.tp = in.plan.tp;
  s.pp = in.plan.pp;
  s.tp_link = group_link(*in.device, in.system, in.plan.tp, 1);
  s.pp_link = send_link(*in.device, in.system, std::max(2, in.plan.pp), in.plan.tp);  // the chain's slowest hop
  s.layers = static_cast<double>(m.total_layers());
  s.weight_bytes = weight_bytes_per_param(w);
  s.head_weight_bytes = head_weight_bytes(w);
  s.kv_bytes = bytes_per_element(w.kv_cache);
  // A chunk of a few hundred tokens against its heads: the flash-attention rate of that tile shape.
  const double heads = static_cast<double>(m.attention_heads) / s.tp;
  const Stack& st = w.stack;
  s.memory_bound_tokens = memory_bound_tokens(s.rates, s.weight_bytes);
  s.memory_bound_rates = rates_at_load(s.rates, 0, s.weight_bytes);
  s.prefill_attention_flops_per_s = s.rates.matrix_flops * s.rates.attention_efficiency *
                                    (st.native_attention ? 1.0 : s.rates.portable_attention_fraction) *
                                    s.rates.fused_attention_fraction *
                                    gemm_efficiency(s.rates, 512, 512, static_cast<double>(m.head_dim), heads);
  s.host_seconds = st.cuda_graphs ? 0.0 : (s.layers * decode_kernels_per_layer(m, w) + 8) * st.host_seconds_per_kernel;
  s.step_overhead_seconds = st.decode_step_overhead_seconds;
  s.overlap_scheduling = st.overlap_scheduling;
  s.custom_allreduce = st.custom_allreduce;
  s.extra_kernels = extra_kernels(m, w);
  s.grouped_experts = !eager_moe(m, w);
  if (m.is_transformer() && w.prompt > 0 && (w.attention == Attention::kEager || !st.fused_kernels)) {
    const LayerShape as_given = prefill_shape(in, 1, s.weight_bytes);
    Stack fused_stack = st;
    fused_stack.fused_kernels = true;
    LayerShape fused = as_given;
    fused.attention = Attention::kFlash;
    fused.stack = &fused_stack;
    const double extra = layer_cost(as_given, s.rates).forward_seconds - layer_cost(fused, s.rates).forward_seconds;
    // The unfused kernels' fixed costs are already in every step (extra_kernels_at): not counted twice.
    s.unfused_prefill_seconds_per_token =
        std::max(0.0, extra * s.layers - s.extra_kernels * s.rates.kernel_overhead_seconds) / as_given.seq;
  }
  return s;
}

double step_tokens_seconds(const StepRates& s, double tokens) {
  if (tokens <= 0) return 0;
  const Model& m = *s.model;
  double layer = token_layer_seconds(m, s.at(tokens), tokens, s.tp, s.weight_bytes, nullptr, s.grouped_experts);
  double tp_comm =
      s.tp > 1 ? 2 * engine_allreduce_seconds(tokens * static_cast<double>(m.hidden_size) * 2, s.tp, s.tp_link, s.custom_allreduce) : 0;
  double pp_comm = s.pp > 1 ? (s.pp - 1) * p2p_seconds(tokens * static_cast<double>(m.hidden_size) * 2, s.pp_link) : 0;
  return s.layers * (layer + tp_comm) + pp_comm;
}

double step_logits_seconds(const StepRates& s, double sequences, double step_tokens) {
  if (sequences <= 0) return 0;
  const Model& m = *s.model;
  const DeviceRates& r = s.at(step_tokens);
  return gemm_seconds(r, sequences, static_cast<double>(m.vocab_size) / s.tp, static_cast<double>(m.hidden_size),
                      1, 2, s.head_weight_bytes) + 4 * r.kernel_overhead_seconds;
}

double step_decode_attention_seconds(const StepRates& s, double context_tokens, double step_tokens) {
  if (context_tokens <= 0) return 0;
  // The serving step knows only the summed context: sliding windows are not applied per sequence here (a
  // conservative read of the cache); MLA's latent is.
  return s.layers * decode_attention_layer_seconds(*s.model, s.at(step_tokens), context_tokens, s.tp, s.kv_bytes,
                                                   nullptr, context_tokens);
}

double step_prefill_attention_seconds(const StepRates& s, double score_tokens, double kv_tokens, double step_tokens) {
  if (score_tokens <= 0) return 0;
  const Model& m = *s.model;
  const double heads = static_cast<double>(m.attention_heads) / s.tp;
  const double kv_heads = std::max(1.0, static_cast<double>(m.kv_heads) / s.tp);
  const double d = static_cast<double>(m.head_dim);
  double flops = 4 * heads * d * score_tokens;
  double bytes = 2 * kv_heads * d * kv_tokens * s.kv_bytes;
  const DeviceRates& r = s.at(step_tokens);
  double t = std::max(flops / std::max(1.0, s.prefill_attention_flops_per_s), bytes / achieved_bandwidth(r, bytes));
  return s.layers * (t + r.kernel_overhead_seconds);
}

double kv_bytes_per_token(const Model& m, const Workload& w, const Plan& plan, double context) {
  const double layers = std::ceil(static_cast<double>(m.total_layers()) / plan.pp);
  const double kv_heads_local = std::max(1.0, static_cast<double>(m.kv_heads) / plan.tp);
  if (!m.mla && m.sliding_window <= 0)
    return 2 * layers * kv_heads_local * static_cast<double>(m.head_dim) * bytes_per_element(w.kv_cache);
  // As inference_memory holds them: MLA's compressed latent (not split by tensor parallelism), sliding-window layers
  // at most the window of a sequence of `context` tokens, averaged over its tokens.
  const double tokens = std::max(1.0, context);
  const double split = m.mla ? 1 : kv_heads_local / static_cast<double>(m.kv_heads);
  const double stage = layers / static_cast<double>(m.total_layers());
  return kv_cache_elements(m, tokens) / tokens * stage * split * bytes_per_element(w.kv_cache);
}

}  // namespace hwplan
