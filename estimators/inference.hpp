// Inference: prefill (time to first token) and decode (time per output token) on a layout.
#pragma once

#include "estimators/estimate.hpp"

namespace hwplan {

// The precision inference GEMMs are asked to run in: quantised weights are dequantised to fp16 (int8 weights use
// int8 GEMMs), and fp32 activations keep everything in fp32. The device may substitute (effective_precision).
Precision inference_compute_precision(const Workload& w);
InferenceTime inference_time(const EstimateInput& in, const ParameterCounts& params);

}  // namespace hwplan
