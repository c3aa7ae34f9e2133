// Inference: prefill (time to first token) and decode (time per output token) on a layout.
#pragma once

#include "estimators/estimate.hpp"

namespace hwplan {

InferenceTime inference_time(const EstimateInput& in, const ParameterCounts& params);

}  // namespace hwplan
