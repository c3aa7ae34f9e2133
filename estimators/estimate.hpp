// The top of the estimator stack: (model, device, system, workload, plan) -> Estimate, with memory, time,
// throughput, MFU, and the reasons behind them. The types are in estimators/estimate_types.hpp.
#pragma once

#include "estimators/estimate_types.hpp"
#include "estimators/memory.hpp"
#include "estimators/params.hpp"

namespace hwplan {

// An interleaved pipeline gives each device vp chunks of at least one layer: pp x vp chunks for the model's layers
// (vp 1 always fits). The one rule the layout search and validate_plan share.
bool interleaving_fits(const Model& m, int pp, int vp);
// Whether the workload can run cp-way context parallelism (training, a transformer, flash attention, a stack that
// has it, a sequence that splits into 2 x cp chunks); throws InputError (key cp) naming what is missing.
void check_context_parallel(const Model& m, const Workload& w, int cp);
// Checks the combination (heads divisible by tp, layers by pp, count = tp*cp*pp*dp, ...). Throws InputError.
void validate_plan(const EstimateInput& in);
Estimate estimate(const EstimateInput& in);
// What sets a decode step's pace, in one word: "host" (the engine issuing kernels), "communication" (all-reduces or
// sends take half the device's step or more), "memory" or "compute". estimate's note and recommend's reason say it.
const char* decode_bound(const InferenceTime& t);
// A unified memory whose GPU gets only part of it by default (Device::gpu_memory_limit_bytes), in words; empty where
// the GPU has all of its memory. estimate notes it, serve warns with it.
std::string gpu_memory_share_note(const Device& d);
// Memory only (used by the layout search to prune before timing).
MemoryBreakdown estimate_memory(const EstimateInput& in, const ParameterCounts& params);

}  // namespace hwplan
