// The top of the estimator stack: (model, device, system, workload, plan) -> Estimate, with memory, time,
// throughput, MFU, and the reasons behind them. The types are in estimators/estimate_types.hpp.
#pragma once

#include "estimators/estimate_types.hpp"
#include "estimators/memory.hpp"
#include "estimators/params.hpp"

namespace hwplan {

// Checks the combination (heads divisible by tp, layers by pp, count = tp*pp*dp, ...). Throws InputError.
void validate_plan(const EstimateInput& in);
Estimate estimate(const EstimateInput& in);
// Memory only (used by the layout search to prune before timing).
MemoryBreakdown estimate_memory(const EstimateInput& in, const ParameterCounts& params);

}  // namespace hwplan
