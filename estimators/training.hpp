// Time of one optimizer step of training / fine-tuning on a parallel layout.
#pragma once

#include <optional>

#include "estimators/estimate_types.hpp"
#include "estimators/operators.hpp"

namespace hwplan {

// Layer and head costs for one micro-batch (independent of pp, dp and ZeRO: the layout search caches them).
struct MicroBatchCost {
  Cost layer;
  Cost head;
  // Tensor-parallel collectives (their time depends on where the group sits, so training_time prices them):
  double tp_allreduce_bytes_layer = 0;  // one all-reduce of a layer's activations
  double tp_allreduces_per_layer = 0;   // 2 forward + 2 backward (training_time adds 2 per recomputed forward)
  double tp_allreduce_bytes_head = 0;   // the loss's fp32 reductions (two)
  double tp_gather_bytes_logits = 0;    // the whole logits, all-gathered when the loss is not vocabulary-parallel
  // Expert parallelism: one all-to-all moves each token's hidden state to its top-k experts' ranks (dispatch)
  // and back (combine), in the forward, again in the backward, and again when the forward is recomputed.
  double ep_alltoall_bytes_layer = 0;   // per device, one all-to-all of one MoE layer
  double ep_alltoalls_per_layer = 0;
  // Context parallelism: one ring step passes a chunk of keys and values (bytes below) to the next rank; cp - 1
  // steps forward, and backward the keys and values again with their gradients (twice the bytes).
  double cp_chunk_bytes_layer = 0;
  DeviceRates memory_rates;      // for the memory-bound optimizer step
  double lora_parameters = 0;    // trainable adapter parameters of the whole model (LoRA / QLoRA)
};

// Transformers: per-layer and head operators; other networks: the whole network as the head.
MicroBatchCost micro_batch_cost(const EstimateInput& in, const DeviceRates& rates);
// `paged_out_bytes`: the paged optimizer states the plan's memory evicts to the host (MemoryBreakdown::page_out),
// which cross the host link every step.
TrainingTime training_time(const EstimateInput& in, const ParameterCounts& params, const MicroBatchCost& cost,
                           double paged_out_bytes);
LayerShape training_shape(const EstimateInput& in);
// Under fp8 training the attention core (and a 16-bit vocabulary projection) runs in bf16: the rates of those
// GEMMs, which a LayerShape points to (attention_rates); none when the workload is not fp8.
std::optional<DeviceRates> sixteen_bit_rates(const EstimateInput& in);

// Tokens each sequence of a micro-batch of `micro_batch` computes: the sequence length, or with unpacked samples
// (Workload::sample_tokens) the expected longest of micro_batch of them, which the others are padded to.
double computed_sequence(const Workload& w, std::int64_t micro_batch);
// Tokens a sequence holds of its own: the samples' mean length, or the sequence length when packed.
double sample_sequence(const Workload& w);
// Unpacked samples on data-parallel ranks: each rank pads its micro-batch to its own longest sample, and the ranks
// meet at the pace of the one whose batch is longest. The expected ratio of that rank's padded length to an average
// rank's (1 when packed or on one rank).
double padded_rank_pace(const Workload& w, const Plan& plan);

// How much slower than a median device a synchronous job of `devices` devices runs: every step waits for its
// slowest device. Device speeds taken as spread evenly over assumptions().device_speed_spread around the median;
// the slowest of n such draws lies (n - 1) / (n + 1) of half the spread below it. 0 for one device.
double slowest_device_slowdown(long long devices);

// Goodput of a training job of `devices` devices needing `training_seconds` of uninterrupted steps.
Goodput training_goodput(long long devices, double training_seconds);

}  // namespace hwplan
