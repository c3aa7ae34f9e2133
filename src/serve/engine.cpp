#include "serve/engine.hpp"

#include <algorithm>
#include <cctype>

namespace hwplan::serve {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}

double kv_fraction_for(const EngineConfig& e, int tp) {
  if (!e.kv_fraction_by_tp) return e.kv_memory_fraction;
  return tp >= 16 ? 0.79 : tp >= 8 ? 0.81 : tp >= 4 ? 0.85 : tp >= 2 ? 0.87 : 0.88;
}

const char* to_string(KvBudget b) {
  switch (b) {
    case KvBudget::kShareOfDevice: return "device";
    case KvBudget::kStaticShareOfDevice: return "device-static";
    case KvBudget::kShareOfFree: return "free";
  }
  return "device";
}

const char* to_string(KvProfile p) { return p == KvProfile::kDeviceUsed ? "device-used" : "allocated-peak"; }

const char* to_string(KvAdmission a) {
  switch (a) {
    case KvAdmission::kOnDemand: return "on-demand";
    case KvAdmission::kReserve: return "reserve";
    case KvAdmission::kEstimate: return "estimate";
  }
  return "on-demand";
}

bool engine_served(Engine e) {
  return e == Engine::kVllm || e == Engine::kSglang || e == Engine::kTrtllm || e == Engine::kLlamacpp;
}

EngineConfig engine_config(Engine e, double device_memory_bytes, const std::string& device_name, double host_time_ratio) {
  EngineConfig c;
  c.preset = to_string(e);
  c.request_overhead_seconds *= host_time_ratio;  // the API server's Python work on this host
  const bool large = device_memory_bytes >= 70 * kGiB;
  // vLLM's EngineArgs keeps the small defaults on an A100 of 80 GB: "a100" in the device's name (a larger step
  // budget lowered its throughput there, vllm-project/vllm #17885; its tests/engine/test_arg_utils.py checks it).
  std::string lower = device_name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const bool vllm_large = large && lower.find("a100") == std::string::npos;
  switch (e) {
    case Engine::kSglang:
      // SGLang server arguments: token-granular KV pool (page_size 1, radix cache), mem_fraction_static 0.88 at tensor
      // parallelism 1 falling to 0.79 at 16 (server_args.py: the static pool shares the device with more
      // communication buffers as tp grows), chunked_prefill_size 8192 on large GPUs and 2048-4096 on smaller ones;
      // the number of running requests is bounded by the KV pool rather than a fixed cap.
      c.block_tokens = 1;
      c.kv_memory_fraction = 0.88;
      c.kv_fraction_by_tp = true;
      c.kv_budget = KvBudget::kStaticShareOfDevice;
      c.max_batched_tokens = large ? 8192 : 4096;
      c.max_sequences = 4096;
      // Its event loop runs a prefill batch whenever one can be formed and a decode batch otherwise (mixing the two
      // only with --enable-mixed-chunk, off by default). A new request is admitted when its prompt and output fit
      // beside the running requests' estimated remaining outputs (new_token_ratio); a retracted request's computed
      // tokens are freed, not inserted in the radix tree (retract_decode), so it is recomputed in full.
      c.separate_prefill = true;
      c.kv_admission = KvAdmission::kEstimate;
      c.keep_preempted_kv = false;
      break;
    case Engine::kTrtllm:
      // TensorRT-LLM LLM API / trtllm-serve defaults: max_batch_size 2048, max_num_tokens 8192, KV cache
      // free_gpu_memory_fraction 0.9 of the memory left after the weights, tokens_per_block 32; the capacity
      // scheduler's policy GUARANTEED_NO_EVICT (SchedulerConfig's default: a request starts only when the KV blocks
      // for its prompt and its maximum new tokens are free, and a started request is never paused).
      c.block_tokens = 32;
      c.kv_admission = KvAdmission::kReserve;
      c.kv_memory_fraction = 0.90;
      c.kv_budget = KvBudget::kShareOfFree;
      c.max_batched_tokens = 8192;
      c.max_sequences = 2048;
      break;
    case Engine::kLlamacpp:
      // llama-server: a unified KV cache of token cells (no pages), 4 parallel slots by default (-np), logical
      // batch 2048 tokens (-b) per step; a slot keeps its context until the request ends (no preemption): the
      // whole request's cells are reserved when a slot takes it.
      c.block_tokens = 1;
      c.kv_memory_fraction = 0.90;
      c.kv_budget = KvBudget::kShareOfFree;
      c.max_batched_tokens = 2048;
      c.max_sequences = 4;
      c.kv_admission = KvAdmission::kReserve;
      c.keep_preempted_kv = false;
      break;
    default:
      // vLLM V1 (EngineArgs defaults for the OpenAI server): block_size 16, gpu_memory_utilization 0.90 of the
      // whole device (its worker logs "total_gpu_memory x gpu_memory_utilization = ...; model weights take ...;
      // non_torch_memory takes ...; PyTorch activation peak memory takes ...; the rest of the memory reserved for KV
      // Cache is ..."), max_num_batched_tokens 8192 and max_num_seqs 1024 on GPUs with >= 70 GiB other than the
      // A100, 2048 and 256 on the rest.
      c.preset = "vllm";
      c.block_tokens = 16;
      c.kv_memory_fraction = 0.90;
      c.kv_budget = KvBudget::kShareOfDevice;
      c.max_batched_tokens = vllm_large ? 8192 : 2048;
      c.max_sequences = vllm_large ? 1024 : 256;
      break;
  }
  return c;
}

}  // namespace hwplan::serve
