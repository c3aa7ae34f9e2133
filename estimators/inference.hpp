// Inference: prefill (time to first token) and decode (time per output token) on a layout.
#pragma once

#include "estimators/comm.hpp"
#include "estimators/efficiency.hpp"
#include "estimators/estimate_types.hpp"

namespace hwplan {

// The precision inference GEMMs are asked to run in: quantised weights are dequantised to fp16 (int8 weights use
// int8 GEMMs), and fp32 activations keep everything in fp32. The device may substitute (effective_precision).
Precision inference_compute_precision(const Workload& w);
// Bytes per activation value of a generic network's inference: an engine that runs the layers in 8 bits
// (TensorRT's INT8 and FP8 modes) hands 8-bit tensors from one layer to the next; otherwise the compute precision's.
double generic_inference_activation_bytes(const Workload& w);
// Prefill, decode and the job rate (InferenceTime::job) of `in`.
InferenceTime inference_time(const EstimateInput& in);
// The rates an inference of `in` runs at: its compute precision's, and without per-kernel launch floors in an NPU's
// compiled graph (Stack::npu_graph).
DeviceRates inference_rates(const EstimateInput& in);
// A device without memory of its own (Device::streams_parameters): how long the parameters its on-chip cache cannot
// hold take to cross the host link, which they do on every forward pass; 0 elsewhere.
double streamed_parameter_seconds(const EstimateInput& in);
// Inference that generates nothing, one forward pass over the batch: an encoder's (BERT, ViT), a generic network's,
// or any model's with --generate 0. Its rate is Estimate::forward_samples_per_second.
inline bool one_forward_pass(const Model& m, long long generate) { return !m.generates() || generate == 0; }

// One engine iteration that batches prefill chunks and decode tokens together (continuous batching, as src/serve
// simulates it), split into the pieces that depend on different counts. The same physics as inference_time's
// decode step: a decode step of b sequences at context c costs
//   step_tokens_seconds(b) + step_logits_seconds(b, b) + step_decode_attention_seconds(b c, b) (+ host and overhead);
// `step_tokens` (all new tokens of the step) says whether the step is memory-bound (StepRates::at).
struct StepRates {
  const Model* model = nullptr;
  DeviceRates rates;
  int tp = 1;
  int pp = 1;
  GroupLink tp_link;
  GroupLink pp_link;
  double layers = 0;                // all layers (pipeline stages run one after another for one step)
  double weight_bytes = 2;          // per parameter as the GEMMs read them
  double head_weight_bytes = 2;     // the output projection's (memory.hpp head_weight_bytes)
  double kv_bytes = 2;              // per KV-cache element
  double prefill_attention_flops_per_s = 0;  // flash attention over a prefill chunk
  double host_seconds = 0;          // host time to issue one step's kernels (0 with CUDA graphs)
  double step_overhead_seconds = 0; // the engine's scheduler, sampler, detokeniser, once per step
  bool overlap_scheduling = false;  // that CPU work runs while the GPU executes the previous step
  bool custom_allreduce = false;    // tensor-parallel all-reduces as the engine's own kernel (Stack::custom_allreduce)
  double extra_kernels = 0;         // the unfused engine's kernels beyond the fused ones, once per step
  bool grouped_experts = true;      // a MoE layer's experts as one grouped GEMM per projection (fused engines)
  // What a stack that leaves attention or kernels unfused (--attention eager, --fused-kernels off) adds to each
  // prefill token, all layers: the full model's prefill of the workload's prompt with that stack, less the same
  // prefill fused (the pieces above price fused kernels only). Exact at the workload's own prompt; eager scores grow
  // with the chunk, so other chunk lengths are approximated per token. 0 for fused stacks.
  double unfused_prefill_seconds_per_token = 0;
  // Steps of fewer new tokens than memory_bound_tokens are memory-bound: the device holds its boost clock there
  // (efficiency.hpp rates_at_load), and these rates apply.
  double memory_bound_tokens = 0;
  DeviceRates memory_bound_rates;
  bool memory_bound(double step_tokens) const { return step_tokens < memory_bound_tokens; }
  const DeviceRates& at(double step_tokens) const { return memory_bound(step_tokens) ? memory_bound_rates : rates; }
  // Device time of the extra kernels in a step of `step_tokens`: their floors at the clock that step holds.
  double extra_kernels_at(double step_tokens) const { return extra_kernels * at(step_tokens).kernel_overhead_seconds; }
};
StepRates step_rates(const EstimateInput& in);
// One engine step: the GPU's work, the host's kernel issue (0 under CUDA graphs) and the engine's per-step CPU work.
// Without overlap the CPU work follows the GPU's; with it (Stack::overlap_scheduling) it runs during the GPU's
// previous step and costs time only where it is the longer side.
double engine_step_seconds(double gpu, double host_issue, double step_overhead, bool overlap);
// GEMMs, elementwise kernels and the tensor-parallel all-reduces of all layers for `tokens` new tokens.
double step_tokens_seconds(const StepRates& s, double tokens);
// The final norm and the logits GEMM for the `sequences` that sample a token this step.
double step_logits_seconds(const StepRates& s, double sequences, double step_tokens);
// Decode attention over `context_tokens` cached positions, summed over the decoding sequences, all layers.
double step_decode_attention_seconds(const StepRates& s, double context_tokens, double step_tokens);
// Prefill attention: `score_tokens` = sum over chunks of chunk x (tokens before the chunk + chunk / 2), the
// causal score count; `kv_tokens` = positions of K and V the chunks read.
double step_prefill_attention_seconds(const StepRates& s, double score_tokens, double kv_tokens, double step_tokens);
// Bytes of KV cache one token takes per device (K and V, all layers of one pipeline stage; MLA's latent; with
// sliding-window layers, the mean over a sequence of `context` tokens, those layers holding at most the window).
double kv_bytes_per_token(const Model& m, const Workload& w, const Plan& plan, double context);

}  // namespace hwplan
