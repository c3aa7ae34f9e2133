// The scheduler of a serving engine as src/serve simulates it: paged KV cache, token budget per step (chunked
// prefill), maximum batched sequences. Presets per engine with their documented defaults; every part can be
// overridden (hwplan serve --block-size, --kv-memory-fraction, --max-batched-tokens, --max-sequences).
#pragma once

#include <string>

#include "core/workload.hpp"

namespace hwplan::serve {

// What an engine's memory fraction is a fraction of, and so what the KV cache gets (serve/capacity.cpp, kv_capacity).
enum class KvBudget {
  // vLLM's gpu_memory_utilization: the engine may use this share of the whole device; the KV cache gets what the
  // weights, the profiled activation peak and the memory outside PyTorch leave of it.
  kShareOfDevice,
  // SGLang's mem_fraction_static: this share of the whole device holds the weights and the KV pool; activations and
  // CUDA graphs live in the rest.
  kStaticShareOfDevice,
  // TensorRT-LLM's free_gpu_memory_fraction (and llama.cpp's cache here): this share of what is free after the
  // weights, activations and runtime.
  kShareOfFree,
};

// When a request gets its KV blocks (hwplan serve --kv-admission).
enum class KvAdmission {
  // As its tokens are computed (vLLM, SGLang): a waiting request is admitted when its next chunk fits; when a running
  // sequence needs a block and none is free, the most recently admitted sequence is preempted (recomputed later).
  kOnDemand,
  // The whole request up front (TensorRT-LLM's GUARANTEED_NO_EVICT capacity scheduler, its default): admitted only
  // when the blocks for its prompt and its maximum output are free; a running sequence is never preempted.
  kReserve,
  // As its tokens are computed, but admitted only when its prompt and its whole output fit beside an estimate of what
  // the running sequences will still write: their remaining outputs times a ratio that starts at
  // EngineConfig::estimate_ratio_start, falls by estimate_ratio_decay each decode step to estimate_ratio_floor, and
  // after a preemption is set to what the survivors need (SGLang's new_token_ratio and its PrefillAdder).
  kEstimate,
};

// How vLLM's profiling pass counts what is not KV cache (its gpu_memory_utilization is a share of the total).
enum class KvProfile {
  // vLLM 0.6.5 and later (its memory profiler, pull request #10511): the weights, the peak PyTorch *allocated*
  // during the pass and the memory outside PyTorch that grew during it (cuBLAS workspace, NCCL buffers), against
  // the total the driver reports; the CUDA context, created before its baseline, and the caching allocator's
  // reserve beyond what it allocated are not counted.
  kAllocatedPeak,
  // Earlier vLLM: the device's whole used memory after the pass (total - free from cudaMemGetInfo): the context,
  // the weights, the allocator's reserved peak with its fragmentation, and the workspaces.
  kDeviceUsed,
};

struct EngineConfig {
  std::string preset;                // "vllm", "sglang", "trtllm", "llamacpp"
  int block_tokens = 16;             // KV-cache page size in tokens
  double kv_memory_fraction = 0.90;  // the engine's memory fraction, of what kv_budget says
  // The most of the device the engine may fill, weights and cache together: 1 (what the engine's own fraction
  // gives), or 1 - --headroom when the user keeps some free.
  double memory_cap_fraction = 1.0;
  KvBudget kv_budget = KvBudget::kShareOfDevice;
  KvProfile kv_profile = KvProfile::kAllocatedPeak;  // with kShareOfDevice
  // The fraction falls with the tensor-parallel degree (SGLang's default, unless --kv-memory-fraction is given):
  // kv_fraction_for gives the one a layout uses.
  bool kv_fraction_by_tp = false;
  long long max_batched_tokens = 8192;  // token budget of one step (prefill chunks + decode tokens)
  long long max_sequences = 256;     // sequences batched in one step
  // The server's handling of one request outside the engine's steps: the HTTP request, tokenisation, the hand-off to
  // the engine and the first chunk's way back to the client. Added to each request's TTFT and E2E (and to a closed-
  // loop client's cycle); not its growth under load (the server's queue), which is not modelled.
  double request_overhead_seconds = 0.010;
  bool chunked_prefill = true;       // a prompt longer than the budget is split over steps
  KvAdmission kv_admission = KvAdmission::kOnDemand;
  // Prefill and decode in separate steps, prefills first: while a prompt can start (or continue) the running decodes
  // wait (vLLM V0 without chunked prefill; SGLang unless --enable-mixed-chunk). Off: one step carries both (vLLM's
  // chunked prefill, TensorRT-LLM's in-flight batching).
  bool separate_prefill = false;
  // Multi-step scheduling (vLLM 0.6-0.7's --num-scheduler-steps): a batch of decodes runs this many steps per
  // scheduling round; its CPU work (scheduling, input preparation, output processing) is paid once per round, and a
  // new request waits for the round to end before its prefill starts. 1: every step is scheduled.
  int scheduler_steps = 1;
  // kEstimate's ratio (SGLang's global_config: init_new_token_ratio 0.7, base_min_new_token_ratio 0.1,
  // new_token_ratio_decay 0.001 per decode step, back to the start when the engine is idle; after a retraction,
  // (tokens decoded + retract_decode_steps 20 per sequence) over the outputs asked, at most 1).
  double estimate_ratio_start = 0.7, estimate_ratio_floor = 0.1, estimate_ratio_decay = 0.001;
  int estimate_retract_steps = 20;
  long long estimate_output_cap = 4096;  // a request's output counted at most this far (CLIP_MAX_NEW_TOKENS_ESTIMATION)
  // What a preempted sequence's KV becomes. Kept cached (vLLM's automatic prefix caching, on by default in V1): its
  // full blocks stay in the cache, hashed, until a new allocation evicts them (least recently freed first, a
  // sequence's last blocks before its first); re-admitted, it finds what is left of them and recomputes only the
  // rest. Freed (vLLM without prefix caching, before 0.8 by default; SGLang, whose retraction frees the request's
  // computed tokens without putting them in its radix tree): recomputed in full.
  bool keep_preempted_kv = true;
  // The next step is formed while the GPU runs this one (the stack's overlap_scheduling, which the step model and
  // the simulator read from StepRates; kept here for the report).
  bool overlap_scheduling = false;
};

// "device", "device-static" (weights and cache), "free": what the fraction is of, for the report.
const char* to_string(KvBudget b);
// "allocated-peak", "device-used".
const char* to_string(KvProfile p);
// "on-demand", "reserve", "estimate".
const char* to_string(KvAdmission a);

// The memory fraction a layout of `tp` tensor-parallel ranks uses: SGLang's server_args default (0.88 at tp 1,
// 0.87 at 2-3, 0.85 at 4-7, 0.81 at 8-15, 0.79 at 16 and more) where the preset follows it, else kv_memory_fraction.
double kv_fraction_for(const EngineConfig& e, int tp);

// The engine's defaults for a device of `device_memory_bytes` named `device_name` (some engines scale them with
// the device: vLLM by its memory, except on A100s).
// `host_time_ratio`: the request handling's CPU time against a GPU server's (estimators/stack.hpp host_time_ratio).
EngineConfig engine_config(Engine e, double device_memory_bytes, const std::string& device_name = "",
                           double host_time_ratio = 1.0);
// The engines whose scheduler src/serve models.
bool engine_served(Engine e);

}  // namespace hwplan::serve
