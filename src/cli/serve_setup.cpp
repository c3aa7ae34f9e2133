#include "cli/serve_setup.hpp"

#include <algorithm>
#include <thread>

namespace hwplan::cli {

void describe_serving_engines(CLI::App& app) {
  if (CLI::Option* engine = app.get_option_no_throw("--engine"))
    engine->description("Serving engine preset: vllm | sglang | trtllm | llamacpp (default: vllm, or llamacpp where vLLM does "
                        "not run); on a phone or Apple NPU, coreml | qnn (its own runtime, the default there) times the "
                        "steps under llama-server's scheduler");
}

void add_serve_options(CLI::App& a, ServeOptions& o, bool threads_flag) {
  o.workload.task = "infer";
  a.add_option("--rate", o.rate, "Requests per second (open loop, all replicas)");
  a.add_option("--arrival", o.arrival, "Arrival process with --rate: poisson | gamma")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.arrival_given = true; });
  a.add_option("--burstiness", o.burstiness, "Coefficient of variation of the inter-arrival times (gamma arrivals; 1 = Poisson)");
  a.add_option("--concurrency", o.concurrency, "Concurrent clients (closed loop, all replicas)");
  a.add_option("--trace", o.trace, "Request trace, CSV or JSONL")->type_name("FILE");
  a.add_option("--requests", o.requests, "Requests to simulate (default 2000, 500 per device in recommend --task serve, or in a closed loop ten rounds of the clients a replica carries if more; with --trace its rows, at most 20,000)");
  a.add_option("--warmup", o.warmup,
               "Share of the requests, the first by arrival, left out of the statistics (default 0.1; 0: every request, as "
               "benchmark clients such as vllm bench serve report)");
  a.add_option("--seed", o.seed, "Random seed (arrivals and lengths)")->capture_default_str();
  a.add_option("--prompt-dist", o.prompt_dist, "Prompt lengths: uniform:MIN:MAX | lognormal:MEAN:SIGMA | file:PATH");
  a.add_option("--generate-dist", o.generate_dist, "Output lengths: uniform:MIN:MAX | lognormal:MEAN:SIGMA | file:PATH");
  a.add_option("--prefix-cache-hit", o.prefix_cache_hit, "Fraction of each prompt found in the prefix cache")->capture_default_str();
  a.add_option("--ttft-p95", o.targets.ttft_p95, "Target p95 time to first token, seconds");
  a.add_option("--ttft-p99", o.targets.ttft_p99, "Target p99 time to first token, seconds");
  a.add_option("--tpot-p95", o.targets.tpot_p95, "Target p95 time per output token, seconds");
  a.add_option("--tpot-p99", o.targets.tpot_p99, "Target p99 time per output token, seconds");
  a.add_option("--e2e-p95", o.targets.e2e_p95, "Target p95 end-to-end latency, seconds");
  a.add_option("--e2e-p99", o.targets.e2e_p99, "Target p99 end-to-end latency, seconds");
  a.add_option("--block-size", o.block_size, "KV-cache block (page) size in tokens (default: the engine's)");
  a.add_option("--kv-memory-fraction", o.kv_memory_fraction, "The engine's memory fraction, as it counts it: vllm's gpu_memory_utilization (of the whole device; the cache gets what weights, activations and runtime leave of that), sglang's mem_fraction_static (weights and cache), trtllm's free_gpu_memory_fraction (of what is free after them)");
  a.add_option("--max-batched-tokens", o.max_batched_tokens, "Token budget per step (chunked prefill)");
  a.add_option("--max-sequences", o.max_sequences, "Most sequences batched in one step");
  a.add_option("--chunked-prefill", o.chunked_prefill, "Split long prompts over steps (on | off; default on)")->type_name("on|off");
  a.add_option("--preempted-kv", o.preempted_kv,
               "A preempted sequence's KV: cached (its blocks stay in the prefix cache until evicted; re-admitted it "
               "recomputes only what was evicted: vllm with prefix caching) | freed (recomputed in full: sglang, vLLM "
               "without prefix caching)")
      ->type_name("cached|freed");
  a.add_option("--kv-profile", o.kv_profile,
               "How vllm counts what is not KV cache: allocated-peak (0.6.5 and later: weights, the profiling pass's "
               "allocated peak and the non-PyTorch memory it added, of the total the driver reports) | device-used "
               "(earlier: all the device's used memory, context and allocator reserve included)")
      ->type_name("allocated-peak|device-used");
  a.add_option("--scheduler-steps", o.scheduler_steps,
               "Decode steps per scheduling round (vLLM 0.6-0.7's --num-scheduler-steps): the per-step CPU overhead is paid "
               "once a round and new requests wait for the round to end (default 1)");
  a.add_option("--separate-prefill", o.separate_prefill,
               "Prefills in steps of their own, run first while a prompt can start; the decodes wait (on: sglang, vLLM V0 "
               "without chunked prefill) | off: decodes and prefill chunks share a step (vllm, trtllm, llamacpp)")
      ->type_name("on|off");
  a.add_option("--kv-admission", o.kv_admission,
               "When a request gets its KV blocks: on-demand (as tokens come; the newest sequence is preempted when the cache "
               "is full: vllm), estimate (on demand, admitted only beside an estimate of the running outputs: sglang) or "
               "reserve (prompt and all output up front, never preempted: trtllm's GUARANTEED_NO_EVICT, llamacpp's slots)")
      ->type_name("on-demand|estimate|reserve");
  a.add_option("--step-overhead-ms", o.step_overhead_ms,
               "Engine overhead per step, ms (per scheduling round with --scheduler-steps; default: the engine preset's)");
  a.add_option("--request-overhead-ms", o.request_overhead_ms,
               "The server's handling of one request outside the engine (HTTP, tokenisation, hand-off, first chunk back), ms; "
               "in every TTFT and E2E (default 10: vLLM's client TTFT less its own; 0.65 of it on a consumer card's desktop host)");
  if (threads_flag) a.add_option("--threads", o.threads, "Worker threads for the layout search (default: all cores); output does not depend on it");
  group_options(a, "Traffic",
                {"--rate", "--arrival", "--burstiness", "--concurrency", "--trace", "--requests", "--warmup", "--seed", "--prompt-dist",
                 "--generate-dist", "--prefix-cache-hit"});
  group_options(a, "Latency targets", {"--ttft-p95", "--ttft-p99", "--tpot-p95", "--tpot-p99", "--e2e-p95", "--e2e-p99"});
  group_options(a, "Serving engine",
                {"--block-size", "--kv-memory-fraction", "--max-batched-tokens", "--max-sequences", "--chunked-prefill",
                 "--preempted-kv", "--kv-admission", "--separate-prefill", "--kv-profile", "--scheduler-steps", "--step-overhead-ms", "--request-overhead-ms"});
  if (threads_flag) group_options(a, "Serving engine", {"--threads"});
}

bool serve_flags_given(const ServeOptions& o) {
  return o.rate || o.concurrency || o.trace || o.requests || o.warmup || o.prompt_dist || o.generate_dist || o.burstiness ||
         o.targets.any() || o.block_size || o.max_batched_tokens || o.max_sequences || o.kv_memory_fraction ||
         o.step_overhead_ms || o.request_overhead_ms || o.chunked_prefill || o.preempted_kv || o.kv_admission || o.separate_prefill || o.kv_profile || o.scheduler_steps || o.prefix_cache_hit != 0 || o.arrival != "poisson" || o.seed != 1;
}

int threads_of(const ServeOptions& o) {
  return o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace hwplan::cli
