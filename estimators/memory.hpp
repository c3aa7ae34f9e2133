// Per-device memory of a training, fine-tuning or inference run, broken down by what holds it.
#pragma once

#include <algorithm>

#include "core/device.hpp"
#include "core/model.hpp"
#include "core/workload.hpp"
#include "estimators/params.hpp"

namespace hwplan {

struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;     // optimizer states incl. fp32 master weights in mixed precision
  double activations = 0;
  double kv_cache = 0;
  double runtime_context = 0;      // CUDA/ROCm context and loaded kernels
  double runtime_workspace = 0;    // framework workspace (cuBLAS, communication buffers)
  double runtime_fragmentation = 0;  // caching-allocator slack
  double host_bytes = 0;           // offloaded optimizer / parameters / activations in host memory
  double managed_bytes = 0;        // part of `optimizer` in CUDA managed (paged) memory: outside PyTorch's counters
  // Managed bytes the device cannot hold: the driver evicts them to host memory and pages them back for each
  // optimizer step (set by page_out()).
  double paged_out_bytes = 0;
  // Parameters a device without memory of its own (Device::streams_parameters) cannot cache on chip: they stay in
  // host memory (counted in host_bytes too) and cross the host link on every forward pass.
  double streamed_bytes = 0;
  // Inference layers (and output projection, and their KV cache) left in host memory (--gpu-layers), this device's
  // share: one replica's host holds it times the replica's devices. Counted in host_bytes too.
  double offloaded_bytes = 0;
  double runtime() const { return runtime_context + runtime_workspace + runtime_fragmentation; }
  // Everything the run allocates on the device, evicted managed pages included.
  double demand() const { return weights + gradients + optimizer + activations + kv_cache + runtime(); }
  // What the device holds at the peak: everything but the managed pages evicted to the host.
  double total() const { return demand() - paged_out_bytes; }
  // Evict managed memory beyond `usable` device bytes (none without a paged optimizer).
  void page_out(double usable) { paged_out_bytes = std::clamp(demand() - usable, 0.0, managed_bytes); }
  // The peak as the stack reports it: PyTorch's allocated bytes (no allocator slack, no context, no managed
  // memory), the allocator's reserved bytes (+ slack), or the device's used memory (everything).
  double reported(MemoryMetric metric) const {
    double allocated = weights + gradients + optimizer - managed_bytes + activations + kv_cache + runtime_workspace;
    if (metric == MemoryMetric::kAllocated) return allocated;
    if (metric == MemoryMetric::kReserved) return allocated + runtime_fragmentation;
    return total();
  }
};

// A device without memory of its own (Device::streams_parameters): its on-chip SRAM (`usable` of it) holds the
// activations and as many parameters as fit beside them; the rest move to streamed_bytes (and host_bytes).
void stream_parameters(MemoryBreakdown& m, double usable);

// Inference with some layers' weights left in host memory (Workload::device_layers, --gpu-layers): how many of the
// model's transformer layers the devices hold, and whether the output projection stays with the host (engines that
// run the offloaded layers on the host's CPU, Stack::offload_runs_on_host, below -ngl = layers + 1).
struct LayerPlacement {
  double total_layers = 0;
  double device_layers = 0;
  bool head_on_host = false;
  double host_layers() const { return total_layers - device_layers; }
  double device_share() const { return total_layers > 0 ? device_layers / total_layers : 1.0; }
  bool offloaded() const { return host_layers() > 0 || head_on_host; }
};
LayerPlacement layer_placement(const Model& model, const Workload& w);
// Whether the device has memory of its own that layers can be left out of (not one shared with its CPU, as Apple
// silicon and Jetson have, nor none at all, as the Coral has).
bool can_leave_layers_in_host(const Device& device);

// Bytes per element of stored activations for a compute precision.
double activation_bytes(Precision p);

// The model's weights are fp32 and run in 16 bits under autocast (Stack::autocast with fp32 master weights and a
// 16-bit compute precision): fp32 residual stream, per-projection casts. LoRA's and QLoRA's frozen model is already
// 16-bit or less, whatever the adapters.
bool autocast_model(const Workload& w);

// Gradients of 16-bit (bf16, fp8-compute) parameters kept and reduced in fp32 (Stack::fp32_grads: Megatron's
// main_grad buffer). Not for fp16, whose Megatron gradients stay fp16, nor for fp32 training, whose are fp32 anyway.
bool fp32_gradients(const Workload& w);
// Bytes of one gradient element as the stack keeps it: the parameter's type (fp32 under autocast over fp32 weights,
// else the compute type), unless the stack keeps gradients in fp32 (fp32_gradients).
double gradient_bytes(const Workload& w);
// The stack reduces 16-bit gradients in fp32 (Stack::fp32_reduce with a 16-bit or fp8 training precision).
bool fp32_reduce_over_16_bits(const Workload& w);
// Bytes of one gradient element while accumulated unsharded under deferred sync: 4 where the stack reduces in fp32
// over 16-bit gradients (Stack::fp32_reduce), else gradient_bytes (4 under autocast over fp32 weights).
double reduce_bytes(const Workload& w);
// Accumulation under no_sync applies (Stack::defer_grad_sync): ZeRO-2/3 over several ranks with several micro-batches,
// gradients on the device, not applied in backward.
bool deferred_grad_sync(const Workload& w, const Plan& plan);

// Share of a stage's layers whose forward is recomputed in backward: 1 with full recomputation of every layer,
// recompute_layers / stage_layers when only some are (0 without full recomputation).
double recompute_share(const Plan& plan, double stage_layers);

// Activation bytes of one layer for one micro-batch (the generalised Korthikanti et al. 2022 terms), per device.
double layer_activation_bytes(const Model& model, const Workload& w, const Plan& plan, double micro_batch);

// Bytes the caching allocator's rounding and splitting leaves unusable, for the allocations of `m`.
double allocator_fragmentation(const MemoryBreakdown& m);

MemoryBreakdown training_memory(const Model& model, const ParameterCounts& params, const Device& device,
                                const Workload& w, const Plan& plan);
MemoryBreakdown inference_memory(const Model& model, const ParameterCounts& params, const Device& device,
                                 const Workload& w, const Plan& plan);

// Weight bytes per parameter of the weights the device holds for this workload.
double weight_bytes_per_param(const Workload& w);
// Bytes per parameter of the embedding and the output projection: quantized weights keep them in the 16-bit compute
// format (GPTQ, AWQ, bitsandbytes and FP8 checkpoints, QLoRA's base) unless the stack quantizes the head too
// (Stack::quantized_head: llama.cpp, MLC, ExLlamaV2, gpt-fast, torchao); otherwise the layers'.
double head_weight_bytes(const Workload& w);
// Whether head_weight_bytes keeps them in the compute format (quantized weights whose quantization leaves them out).
bool head_in_compute_format(const Workload& w);
// Bytes per parameter of the token embedding table in inference with quantized weights: the layers' when the stack
// quantizes it (Stack::quantized_embedding: MLC, GGUF, on-device runtimes), else the compute format (PyTorch's
// weight-only quantizers convert nn.Linear modules only); otherwise head_weight_bytes.
double embedding_weight_bytes(const Workload& w);
// Whether the device holds the embedding table: not when the stack keeps it in host memory (llama.cpp, ExLlamaV2)
// on a device with memory of its own; a unified-memory device (Apple silicon, Jetson) holds it either way.
bool embedding_on_device(const Workload& w, const Device& device);

}  // namespace hwplan
