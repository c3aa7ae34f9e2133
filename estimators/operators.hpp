// The operators of one transformer layer and of the model head, with their forward and backward cost on a
// device. Each GEMM is timed on the roofline with shape-dependent efficiency; norms, activations, residuals,
// dropout and the eager attention's s x s passes are memory-bound; backward is derived per operator (dgrad +
// wgrad for linear layers, two input gradients for the attention GEMMs, read-x-read-dy-write-dx for
// elementwise ops), not as a flat 2x.
#pragma once

#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/workload.hpp"
#include "estimators/efficiency.hpp"

namespace hwplan {

enum class OpKind { kGemm, kAttention, kMemory };

struct LayerShape {
  const Model* model = nullptr;
  double micro_batch = 1;  // sequences
  double seq = 2048;  // tokens of a sequence this rank computes (the whole sequence / cp)
  int tp = 1;
  int cp = 1;  // context parallelism: the rank's queries attend to the keys of all cp ranks' chunks
  int ep = 1;
  bool sequence_parallel = true;
  Attention attention = Attention::kFlash;
  bool training = true;          // dropout active, loss computed
  bool lm_head = true;           // the vocabulary projection (and its loss); off: a negligible task head
  bool frozen_weights = false;   // LoRA/QLoRA: no weight gradients for the base model
  bool dequantize = false;       // QLoRA: NF4 weights dequantised before each GEMM
  int lora_targets = 0;          // adapters per layer (0 = none)
  int lora_rank = 0;
  double activation_bytes = 2;   // bytes per activation element
  double weight_bytes = 2;       // bytes per weight element as the GEMM reads it
  // FP8 training (Transformer Engine recipe): GEMM inputs are cast to fp8 (and transposed for the backward
  // GEMMs) by memory-bound kernels; attention and elementwise work stay in bf16.
  bool fp8 = false;
  // Rates of the GEMMs that stay in 16 bits under fp8 training (attention core; the vocabulary projection when the
  // stack keeps it in 16 bits); null: the same as the other GEMMs.
  const DeviceRates* attention_rates = nullptr;
  // The software stack: unfused elementwise ops (eager modelling code) cost more passes and kernels; each
  // kernel costs host time, which bounds the layer when the GPU work is shorter (small batches, decode).
  const Stack* stack = nullptr;
};

struct OpRecord {
  const char* name = "";
  OpKind kind = OpKind::kMemory;
  int forward_kernels = 1;
  int backward_kernels = 0;
  double forward_flops = 0;
  double forward_bytes = 0;
  double forward_seconds = 0;
  double backward_flops = 0;
  double backward_seconds = 0;
};

struct Cost {
  double forward_seconds = 0;
  double backward_seconds = 0;
  double attention_core_forward_seconds = 0;  // what selective recomputation repeats
  double attention_core_backward_seconds = 0;  // attention's own backward (context parallelism overlaps its ring with it)
  double forward_flops = 0;
  double backward_flops = 0;
  double gemm_seconds = 0;    // forward + backward, GEMMs and attention
  double memory_seconds = 0;  // forward + backward, memory-bound ops
  double forward_kernels = 0;
  double backward_kernels = 0;
  double host_wait_seconds = 0;  // GPU idle while the host issues kernels (forward + backward)
  double host_wait_forward_seconds = 0;  // the forward's share (a recomputed forward waits as long again)
  void add(const OpRecord& op);
};

// Host time to issue the forward / backward kernels of a cost (eager dispatch from Python forward; the C++
// autograd engine issues the backward ones at about half the cost).
double host_forward_seconds(const Cost& c, const Stack* stack);
double host_backward_seconds(const Cost& c, const Stack* stack);

// Cost of one layer (per device, one micro-batch).
Cost layer_cost(const LayerShape& shape, const DeviceRates& rates, std::vector<OpRecord>* ops = nullptr);
// A non-transformer network (CNN) from its per-sample FLOPs, saved-activation bytes and kernel count: the
// convolutions and the normalisation / activation passes between them (memory-bound), in series. Convolutions the
// model lists by shape are priced one by one (implicit GEMMs with their shape's efficiency and their own traffic),
// with the NCHW layout's transposes when the stack keeps PyTorch's default layout on tensor cores.
Cost generic_cost(const LayerShape& shape, const DeviceRates& rates, std::vector<OpRecord>* ops = nullptr);
// Embedding, final norm, logits and (training) the loss, per device, one micro-batch.
Cost head_cost(const LayerShape& shape, const DeviceRates& rates, std::vector<OpRecord>* ops = nullptr);

}  // namespace hwplan
