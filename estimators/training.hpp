// Time of one optimizer step of training / fine-tuning on a parallel layout.
#pragma once

#include "estimators/estimate.hpp"
#include "estimators/operators.hpp"

namespace hwplan {

// Layer and head costs for one micro-batch (independent of pp, dp and ZeRO: the layout search caches them).
struct MicroBatchCost {
  Cost layer;
  Cost head;
  double tp_comm_per_layer = 0;  // forward + backward (+ recompute) collectives of one layer
  double tp_comm_head = 0;
  DeviceRates memory_rates;      // for the memory-bound optimizer step
  double lora_parameters = 0;    // trainable adapter parameters of the whole model (LoRA / QLoRA)
};

// Transformers: per-layer and head operators; other networks: the whole network as the head.
MicroBatchCost micro_batch_cost(const EstimateInput& in, const DeviceRates& rates);
TrainingTime training_time(const EstimateInput& in, const ParameterCounts& params, const MicroBatchCost& cost);
LayerShape training_shape(const EstimateInput& in);

}  // namespace hwplan
