#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hwplan {

// A workload as the user states it (CLI flags, a batch scenario, a measurement case): strings and optional
// numbers, validated and resolved into an EstimateInput by cli::resolve_query.
struct WorkloadSpec {
  std::string model;
  std::string device;
  long long count = 1;
  std::string task = "train";
  std::string precision = "bf16";
  std::optional<std::string> weights;
  std::optional<long long> batch;
  std::optional<long long> seq;
  // Lengths of unpacked training samples: uniform:MIN:MAX | lognormal:MEAN:SIGMA | file:PATH (one length a line).
  std::optional<std::string> sample_tokens;
  std::optional<long long> grad_accum;
  std::optional<long long> global_batch;
  std::optional<double> tokens;
  std::optional<long long> tp, cp, pp, dp, ep, zero, vp, recompute_layers;
  std::optional<long long> shard_group;  // ZeRO shards span this many dp ranks, replicated across the rest (HSDP)
  std::optional<std::string> recompute;
  std::string offload = "none";
  std::string attention = "flash";
  std::string optimizer = "adamw";
  long long lora_rank = 16;
  std::string lora_targets = "all-linear";
  std::optional<bool> lm_head;  // the vocabulary projection and its loss (default on; off: a task head)
  long long prompt = 512;
  long long generate = 256;
  // Whether --prompt / --generate were given at all (a value equal to the default included): serve --trace, which
  // takes the lengths from its file, refuses them rather than ignore them.
  bool prompt_given = false, generate_given = false;
  std::optional<std::string> kv_cache;
  // Inference: transformer layers the device holds (llama.cpp's -ngl): a number, or "auto" for as many as fit; the
  // others stay in host memory. The host memory's peak read rate (GB/s) and CPU matrix rate (TFLOP/s) for them.
  std::optional<std::string> gpu_layers;
  std::optional<double> host_memory_gbps;
  std::optional<double> host_tflops;
  std::optional<std::string> profile;
  long long devices_per_node = 8;
  bool devices_per_node_given = false;  // --devices-per-node given (tco and recommend --own-years then cost those hosts)
  std::optional<double> network_gbps;  // per device, Gb/s; default: the device's reference system (reference_network)
  double headroom = 0.05;     // fraction of device memory a plan leaves free
  bool headroom_given = false;  // --headroom on the command line (serve caps the engine's memory with it only then)
  bool no_sequence_parallel = false;
  bool no_overlap_grad_reduce = false;
  // The software stack (presets of modelled behaviour; see estimators/stack.hpp). Each part is overridable.
  std::optional<std::string> framework;        // training: hf-trainer | deepspeed | fsdp | torchtune | torchtitan | megatron | litgpt
  std::optional<std::string> engine;           // inference: hf | vllm | sglang | trtllm | llamacpp | exllama | mlc | tflite | coreml | qnn
  std::optional<std::string> master_weights;   // fp32 | none
  std::optional<bool> fused_kernels;           // fused norm / activation / RoPE / loss kernels
  std::optional<bool> cuda_graphs;             // decode launched as a CUDA graph (no per-kernel host cost)
  std::optional<bool> overlap_scheduling;      // the engine prepares the next step while the GPU runs this one
  std::optional<bool> overlap_p2p;             // interleaved pipeline sends overlapped with the next chunk's compute
  std::optional<bool> quantized_head;          // weight quantization covers the output projection (inference)
  std::optional<bool> quantized_embedding;     // weight quantization covers the embedding table (inference)
  std::optional<bool> embedding_on_host;       // the embedding table is kept in host memory (inference)
  std::optional<bool> custom_allreduce;        // the engine's one-kernel all-reduce inside the fabric (inference)
  std::optional<bool> gather_copy_out;         // ZeRO-3 as FSDP2: gathered parameters split by a copy kernel
  std::optional<bool> chunked_loss;            // cross-entropy over vocabulary chunks (no full fp32 logits)
  std::optional<bool> optimizer_in_backward;   // optimizer step fused into backward (gradients freed per layer)
  std::optional<bool> activation_offload;      // activations kept in host memory between forward and backward
  std::optional<bool> paged_optimizer;         // optimizer state in CUDA managed memory (outside PyTorch's counters)
  std::optional<bool> native_attention;        // the architecture's own attention kernels (cuDNN, FA3), not FA2-class
  std::optional<bool> autocast;                // mixed precision as torch.amp autocast over fp32 parameters
  std::optional<bool> persistent_grads;        // gradient buffers kept across steps (else freed between steps)
  std::optional<bool> foreach_optimizer;       // multi-tensor optimizer kernels (else a loop over the tensors)
  std::optional<bool> fused_optimizer;         // the update as one fused pass (else torch's foreach elementwise passes)
  std::optional<bool> clip_grad_norm;          // gradient clipping by global norm every step
  std::optional<bool> fp8_head;                // with fp8 training, the vocabulary projection in fp8 too
  std::optional<bool> fp32_grads;              // gradients kept and reduced in fp32 under 16-bit parameters
  std::optional<bool> fp32_reduce;             // gradients reduced in fp32, kept in 16 bits (FSDP2 reduce_dtype)
  std::optional<bool> loss_parallel;           // tensor parallelism: the loss on vocabulary shards (else gathered logits)
  std::optional<bool> defer_grad_sync;         // accumulation under no_sync: unsharded gradients, one reduction a step
  std::optional<double> zero3_live_params;     // ZeRO-3: full parameters kept gathered per device (DeepSpeed's cap)
  std::optional<double> host_kernel_us;        // host time to issue one kernel (eager dispatch), microseconds
  std::optional<std::string> memory_metric;    // allocated | reserved | device: which peak the stack reports
  std::optional<std::string> memory_format;    // nchw | nhwc: a CNN's activation layout
  // On one device, also search recomputation (recommend does: it looks for the best way to run, not a given one).
  bool search_single_device = false;
};

}  // namespace hwplan

namespace hwplan {

// Constraints and objective of `hwplan recommend` (CLI flags or a batch scenario).
struct RecommendSpec {
  std::optional<double> budget_usd;
  long long max_count = 64;
  std::optional<double> max_power_w;
  std::optional<std::string> deadline;   // "14d", "36h"
  std::string cost_basis = "auto";       // buy | rent | own | auto (one basis for the list: recommend.hpp choose_cost_basis)
  double own_years = 3;                  // own: the horizon of the cost of ownership (hwplan tco)
  std::vector<std::string> classes;
  std::vector<std::string> vendors;
  std::vector<std::string> exclude;
  std::vector<std::string> devices;      // only these devices (empty: the whole catalog)
  std::optional<long long> count;        // only this many devices (empty: 1, 2, 4, 8, ... up to max_count)
  bool require_interconnect = false;
  long long top = 5;
  std::string optimize = "balanced";     // cost | time | energy | balanced
  double porting_cost_usd = 50000;       // one-off engineering cost of porting to a non-CUDA stack (CANN)
  std::optional<double> min_decode_tokens_per_second;  // per user (inference)
};

}  // namespace hwplan
