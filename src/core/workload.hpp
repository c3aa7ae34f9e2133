// What the user wants to run (task, batch, sequence) and how (the execution plan). Neither a model nor a device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/precision.hpp"

namespace hwplan {

enum class Task { kTrain, kFinetune, kLora, kQlora, kInfer };
enum class Recompute { kNone, kSelective, kFull };
enum class Offload { kNone, kOptimizer, kParams };
enum class Attention { kEager, kFlash };
enum class Optimizer { kAdamW, kSgd, kAdafactor, kAdam8bit };
enum class Framework { kHfTrainer, kDeepspeed, kFsdp, kTorchtune, kTorchtitan, kMegatron, kLitgpt };
// kNpuRuntime: an NPU's own compiled-graph runtime (TensorFlow Lite with the Edge TPU delegate, Core ML, Qualcomm's
// QNN), named on the command line by its product (tflite, coreml, qnn).
enum class Engine { kHf, kVllm, kSglang, kTrtllm, kLlamacpp, kExllama, kMlc, kNpuRuntime };
// Which peak a stack reports: PyTorch's allocated bytes, the caching allocator's reserved bytes, or the
// device's used memory as nvidia-smi shows it (reserved + CUDA context).
enum class MemoryMetric { kAllocated, kReserved, kDevice };

const char* to_string(Task t);
const char* to_string(Recompute r);
const char* to_string(Offload o);
const char* to_string(Attention a);
const char* to_string(Optimizer o);
std::optional<Task> parse_task(const std::string& s);
std::optional<Recompute> parse_recompute(const std::string& s);
std::optional<Offload> parse_offload(const std::string& s);
std::optional<Attention> parse_attention(const std::string& s);
std::optional<Optimizer> parse_optimizer(const std::string& s);
const char* to_string(Framework f);
const char* to_string(Engine e);
const char* to_string(MemoryMetric m);
std::optional<Framework> parse_framework(const std::string& s);
std::optional<Engine> parse_engine(const std::string& s);
std::optional<MemoryMetric> parse_memory_metric(const std::string& s);

// The software stack's behaviour that changes memory and time: a preset (estimators/stack.cpp) with each part
// overridable. Host costs are CPU time; they are hidden behind GPU work when the GPU is the slower side.
struct Stack {
  std::string preset;                   // "fsdp", "vllm", ...: what the parts below came from
  bool preset_assumed = true;           // the user named no framework / engine: the default was used
  // The engine does not run on the device's software stack (vLLM on a Core ML NPU): said with the figures, which then
  // model the engine's behaviour on that hardware rather than a setup that exists.
  std::string platform_warning;
  // ZeRO-3 as PyTorch's FSDP2 (fully_shard) does it: each all-gather lands in one flat buffer that a copy kernel then
  // splits into the per-parameter unsharded tensors, on the compute stream (torchtune, torchtitan).
  bool gather_copy_out = false;
  std::vector<std::string> overridden;  // parts the user set by their own flags ("name value")
  // Whether the user set the part `name` by its own flag.
  bool overrides(std::string_view name) const {
    return std::any_of(overridden.begin(), overridden.end(), [&](const std::string& o) { return o.starts_with(name); });
  }
  bool master_weights_fp32 = true;      // mixed precision keeps an fp32 copy of the trainable weights
  // With fp32 master weights, mixed precision is torch.amp autocast over fp32 parameters (Hugging Face Trainer):
  // gradients are fp32, the residual stream and the norms run in fp32, and each projection casts its input to
  // 16 bits separately. Otherwise the model holds 16-bit parameters and the optimizer an fp32 copy (Megatron,
  // DeepSpeed, FSDP mixed precision, torchtitan).
  bool autocast = false;
  // Gradients live in buffers kept across steps (Megatron's contiguous gradient buffer, DeepSpeed's partitions).
  // Otherwise a single-process eager loop frees them between steps (PyTorch's zero_grad(set_to_none=True), the
  // default since 2.0): in backward they appear as the activations they replace are freed.
  bool persistent_grads = false;
  // The optimizer updates all tensors in a few multi-tensor kernels (torch.optim's foreach default since PyTorch
  // 2.0, fused Adam in DeepSpeed, Megatron, apex). Off: a Python loop over the parameter tensors issuing a handful
  // of kernels for each (torch.optim with foreach=False, older library optimizers such as BERT's BertAdam).
  bool foreach_optimizer = true;
  // The update is one fused kernel pass over the optimizer's tensors (torch.optim fused=True, apex / Transformer
  // Engine / DeepSpeed FusedAdam): each element of parameter, gradient and moments read and written once. Off:
  // torch.optim's foreach (or for-loop) implementation, eight elementwise passes for AdamW, each over whole tensors
  // (estimators/training.cpp optimizer_step_bytes).
  bool fused_optimizer = true;
  // Gradient clipping by global norm at every step. torch.nn.utils.clip_grad_norm_ reads every gradient for the
  // norm and then scales them all in place by the clamped coefficient whatever the norm (clip_scale_always);
  // Megatron and apex scale only when the norm exceeds the threshold: the norm's read remains.
  bool clip_grad_norm = false;
  bool clip_scale_always = true;
  // Gradients accumulated and reduced in fp32 while the parameters are 16-bit: Megatron-LM's main_grad buffer, which
  // it keeps in fp32 for bf16 training (--accumulate-allreduce-grads-in-fp32, set for bf16; its README's bytes per
  // parameter: "bf16 param, fp32 grads: 18; distributed optimizer 6 + 12/d"). 4 bytes per gradient in memory and in
  // the data-parallel reduction. Off: gradients in the parameters' 16 bits (FSDP and ZeRO's reduce dtype).
  bool fp32_grads = false;
  // Gradients reduced in fp32 while kept in the parameters' 16 bits: PyTorch FSDP2's MixedPrecisionPolicy with
  // reduce_dtype float32 over bf16 parameters casts each gradient up for the reduce-scatter and the reduced shard
  // back down. 4 bytes a parameter cross the data-parallel link; the stored shards stay 2 bytes (fp32_grads: 4).
  bool fp32_reduce = false;
  // With gradient accumulation under ZeRO-2/3 sharding, the micro-batches before the last skip the gradient
  // reduction and accumulate unsharded gradients (FSDP1's no_sync(), FSDP2's set_requires_gradient_sync(False):
  // Hugging Face accelerate's accumulate() does so for FSDP unless sync_each_batch, Lightning Fabric's
  // no_backward_sync): each rank then holds its whole stage's gradients, in the reduce dtype (FSDP2 upcasts the
  // accumulated gradient to it), and reduce-scatters them once, in the last micro-batch's backward. Off: a
  // reduce-scatter in every micro-batch onto the sharded gradients (DeepSpeed ZeRO-2/3, torchtitan, torchtune).
  bool defer_grad_sync = false;
  // Under tensor parallelism, the cross-entropy runs on each rank's vocabulary shard of the logits (Megatron's
  // vocab_parallel_cross_entropy, torchtitan's loss_parallel). Off: the output projection's ColwiseParallel output is
  // gathered whole on every rank (output_layouts=Replicate()) and each rank computes the whole loss: the logits'
  // all-gather, the full vocabulary's logits and fp32 loss tensors on every rank, its passes repeated on each.
  bool loss_parallel = true;
  // With fp8 training, the vocabulary projection (logits) also runs in fp8: torchao's float8 training converts every
  // nn.Linear whose dimensions allow it unless the recipe filters it out, as Transformer Engine does for the modules
  // it replaces. Off: it runs in 16 bits: Megatron-core builds its output layer as tensor_parallel's
  // ColumnParallelLinear, not a Transformer Engine module, so --fp8 leaves it in bf16.
  bool fp8_head = true;
  bool fused_kernels = true;            // norm / activation / RoPE / loss fused (Megatron, torch.compile)
  bool cuda_graphs = false;             // decode replayed as a CUDA graph
  // The engine prepares step n+1 on the CPU while the GPU runs step n (vLLM's async scheduling, SGLang's
  // zero-overhead scheduler, TensorRT-LLM's overlap scheduler): the per-step overhead is hidden behind the GPU's
  // work, and a request arriving while a step runs joins the step after next (the next one is already formed).
  bool overlap_scheduling = false;
  // The engine spreads one model over several devices by layers, each device running its layers in turn for every
  // token (llama.cpp's default --split-mode layer, ExLlama's gpu_split, accelerate's device_map for Transformers);
  // off: tensor parallelism, every device working on every layer at once (vLLM, SGLang, TensorRT-LLM, MLC). The
  // layout search then tries pipelines only; --tp N asks for tensor parallelism all the same.
  bool layer_split = false;
  // The KV cache grows by concatenation: Transformers' DynamicCache appends each step's keys and values with
  // torch.cat, which copies the whole cache of every layer (read and write) on every token; engines with paged or
  // preallocated caches write the new entries in place.
  bool kv_cache_concat = false;
  bool chunked_loss = false;            // the fp32 logits of the whole batch never exist at once
  bool optimizer_in_backward = false;   // each gradient is applied and freed as backward produces it
  bool activation_offload = false;      // saved activations live in host memory between forward and backward
  bool paged_optimizer = false;         // optimizer state in CUDA managed memory (not in PyTorch's counters)
  bool interleaved_pipeline = false;    // interleaved 1F1B: each device holds several model chunks (Megatron, torchtitan)
  // The interleaved schedule posts each chunk's pipeline sends and receives and computes the next chunk meanwhile
  // (Megatron-LM's overlap_p2p_comm, on by default since mid-2023: apex #1616, Megatron-LM #331; torch.distributed
  // pipelining's asynchronous schedules). Off: each transfer waits (1F1B, Megatron-LM before 2023).
  bool overlap_p2p = false;
  // Weight quantization covers the output projection too (llama.cpp, MLC, ExLlamaV2, gpt-fast's and torchao's
  // all-Linear quantizers); off: it stays in 16 bits, as GPTQ, AWQ, bitsandbytes and FP8 checkpoints keep it (and
  // their embeddings), which every decode step reads. Inference with quantized weights only.
  bool quantized_head = false;
  // Quantized inference: the token embedding table is quantized with the layers (MLC's q4f16, GGUF, on-device
  // runtimes); off: it stays in the compute format, as PyTorch's weight-only quantizers (gpt-fast, torchao, GPTQ,
  // AWQ, bitsandbytes) convert nn.Linear modules only. A decode step reads one row of it: memory only.
  bool quantized_embedding = false;
  // The token embedding table lives in host memory, not on the device (llama.cpp keeps its input layer on the CPU
  // whatever -ngl says; ExLlamaV2 loads it to system RAM). A tied table is also the output projection, which stays
  // on the device. Devices that share one memory with their host (Apple silicon, Jetson) hold it either way.
  bool embedding_on_host = false;
  // Inference with some transformer layers' weights in host memory (Workload::device_layers, --gpu-layers). On: the
  // engine runs those layers on the host's CPU, from host memory, with their KV cache there too; a prompt batch of at
  // least offload_min_batch tokens has their products run on the device instead, after their weights cross the host
  // link once per offload_ubatch tokens (llama.cpp: the CPU backend keeps the layers -ngl leaves out, and ggml's
  // scheduler offloads an op whose batch reaches 32 rows to the GPU, copying its weights over; n_ubatch 512). Off:
  // the engine streams them to the device for every forward pass and the device computes every layer, its KV cache
  // included (accelerate's device_map offload hooks, vLLM's --cpu-offload-gb, TensorRT's weight streaming).
  bool offload_runs_on_host = false;
  double offload_min_batch = 0;
  double offload_ubatch = 0;
  // Tensor-parallel all-reduces inside an NVLink-class fabric run as the engine's own one-kernel all-reduce (vLLM and
  // SGLang's custom all-reduce, TensorRT-LLM's, PyTorch's ENABLE_INTRA_NODE_COMM) rather than NCCL's: a fixed few
  // microseconds per call whatever the group size, which is most of a tensor-parallel decode step's communication.
  bool custom_allreduce = false;
  // Attention kernels written for the device's architecture (cuDNN fused attention via Transformer Engine,
  // FlashAttention-3, TensorRT-LLM's FMHA) rather than portable FlashAttention-2-class ones (FlashAttention-2,
  // PyTorch SDPA's flash backend, xformers, Triton / FlexAttention). Changes time on Hopper and datacenter Blackwell.
  bool native_attention = false;
  // Context parallelism (ring attention over sequence chunks): Megatron-core / Transformer Engine, torchtitan.
  bool context_parallel = false;
  // Training layouts the stack can build: tensor parallelism (Megatron-core, torchtitan, torchtune's
  // tensor_parallel_dim, FSDP with PyTorch's tensor parallel API) and pipeline parallelism (Megatron-core,
  // torchtitan); Hugging Face's Trainer, DeepSpeed ZeRO over Hugging Face models and LitGPT scale by data parallelism
  // and sharding alone. The layout search keeps what the stack cannot build at 1; a degree given with --tp / --pp is
  // priced as given.
  bool tensor_parallel = true;
  bool pipeline_parallel = true;
  // Recomputation of some layers only (Megatron's block method, torchtitan's per-layer checkpointing); other
  // stacks checkpoint every layer or none (Hugging Face gradient_checkpointing).
  bool partial_recompute = false;
  // ZeRO-3: how many full (gathered) parameters stay on each device. 0: the layer being computed and the prefetched
  // next one, as FSDP's per-layer units do. DeepSpeed keeps gathered parameters until stage3_max_live_parameters
  // (1e9 by default) would be exceeded and does not release one it will reuse within stage3_max_reuse_distance
  // (1e9): up to 1e9 parameters resident whatever the layer size.
  double zero3_live_parameters = 0;
  MemoryMetric memory_metric = MemoryMetric::kReserved;
  // A CNN's activations in NHWC (channels last, hwplan --memory-format nhwc). In NCHW, PyTorch's default, every
  // tensor-core convolution transposes its input to NHWC and its output back (cuDNN's tensor-core kernels are
  // NHWC-native): extra passes over the activations. TensorRT-style engines choose NHWC themselves.
  bool channels_last = false;
  double host_seconds_per_kernel = 0;   // CPU cost of issuing one kernel (eager op dispatch incl. Python)
  double decode_step_overhead_seconds = 0;  // per generated token: sampling, scheduler, stop checks
  // Per forward pass of a network compiled ahead of time into one graph (an NPU runtime's invoke: the call into the
  // runtime, the driver's submission and completion, the input and output buffers' hand-over); 0 for stacks that
  // issue kernels one by one, whose host cost host_seconds_per_kernel already counts.
  double invoke_seconds = 0;
  // An NPU's compiled graph: the NPU's own sequencer starts each layer as the last ends, with no launch from the host,
  // so the per-kernel floors of a GPU (launch, ramp-up, tail) do not apply; the invoke above is paid instead.
  bool npu_graph = false;
  // The compiled graph tiles each layer's input and output through the NPU's on-chip memory (fused layer groups,
  // depth-first tiling): only the weights come from DRAM.
  bool on_chip_activations = false;
  // The two host times above are a GPU server's CPU's (where the presets' figures were measured); true: scaled to
  // a desktop's faster cores (consumer cards; src/recommend/query.cpp, desktop_host_time_ratio).
  bool desktop_host = false;
  double adapter_kernels = 2;           // kernels per LoRA adapter forward (A and B; PEFT adds dropout, scale, add)
  // Kernels one decode step issues per transformer layer when the engine's graph is known op by op (llama.cpp's
  // ggml graph); 0 = from fused_kernels (estimators/inference.cpp). Plus this many per linear layer whose weights
  // are quantised (llama.cpp quantises the activations to q8_1 before each quantised matrix-vector product).
  double decode_kernels_per_layer = 0;
  double quantized_linear_kernels = 0;
  // Bytes eager 16-bit training moves per byte of the per-op pass counts; applies when fused_kernels is off. 1 =
  // the pass counts as they are; the framework presets set the calibrated kEagerTrafficFactor (estimators/stack.cpp),
  // the one physics constant fitted to the measurement sets (`hwplan validate` refits it per held-out group).
  double eager_traffic_factor = 1.0;
};

// The parallel layout and memory-saving choices. count = tp * cp * pp * dp.
struct Plan {
  int tp = 1;
  // Context parallelism: each sequence is split over cp ranks, which pass the keys and values around a ring while
  // attention runs (Megatron / Transformer Engine, torchtitan). Ranks are numbered tp innermost, then cp, dp (whose
  // expert-parallel groups are its consecutive ranks, at cp 1), pp outermost: Megatron-core's default order
  // "tp-cp-ep-dp-pp", torchtitan's device mesh (pp, dp_replicate, dp_shard, cp, tp from outer to inner), DeepSpeed's
  // pipe-data-model topology.
  int cp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;     // expert parallelism (MoE), carved out of dp
  int vp = 1;     // virtual pipeline stages per device (interleaved 1F1B): bubble / vp
  int zero = 0;  // 0..3 (3 = FSDP full sharding)
  // Data-parallel ranks one ZeRO shard spans; the shards are replicated across the rest (FSDP HYBRID_SHARD,
  // DeepSpeed ZeRO++ hpZ / MiCS). 0 = all of dp (plain ZeRO / FULL_SHARD).
  int shard_group = 0;
  // Ranks holding the same weights: the data-parallel ranks and, within each, the context-parallel ones. Gradients
  // are reduced and ZeRO state is sharded over all of them (Megatron's data-parallel-with-context group, torchtitan's
  // dp_shard_cp mesh).
  int replica_ranks() const { return dp * cp; }
  int zero_ranks() const { return shard_group > 0 && shard_group < replica_ranks() ? shard_group : replica_ranks(); }
  // Copies of each ZeRO shard across the data-parallel ranks: above 1 with hybrid sharding (1 without ZeRO).
  int shard_replicas() const { return zero >= 1 ? replica_ranks() / zero_ranks() : 1; }
  Recompute recompute = Recompute::kNone;
  // With full recomputation: how many layers of each device's stage recompute their activations; the others keep
  // them (Megatron's --recompute-method block --recompute-num-layers, torchtitan's activation checkpointing of every
  // Nth layer). 0 = every layer.
  int recompute_layers = 0;
  Offload offload = Offload::kNone;
  bool sequence_parallel = true;  // with tp > 1, Megatron-style sequence parallelism
  std::int64_t micro_batch = 1;   // sequences per device per micro-step
  std::int64_t grad_accum = 1;    // micro-steps per optimizer step (pipeline: micro-batches in flight)
  std::int64_t global_batch() const { return micro_batch * grad_accum * dp; }
  int count() const { return tp * cp * pp * dp; }
};

// The cluster around the devices.
struct System {
  int count = 1;
  int devices_per_node = 8;
  double network_bytes_per_s = 50e9;  // inter-node, per device, one direction (400 Gb/s NIC per GPU)
  // Where network_bytes_per_s came from when the user did not say: the device's reference system, in words.
  std::string network_assumed;
  double host_memory_bytes = 0;       // 0 = unknown (not checked)
  // The host's achieved memory read rate and its CPU's matrix rate (inference layers kept in host memory,
  // Workload::device_layers); `host_assumed` says, in words, where they came from when the user did not give them.
  double host_memory_bytes_per_s = 0;
  double host_matrix_flops = 0;
  std::string host_assumed;
  // Whether the framework overlaps the data-parallel gradient reduction with the backward pass (PyTorch DDP,
  // FSDP, DeepSpeed, Megatron-core with overlap_grad_reduce); Megatron-LM before 2023 reduced after backward.
  bool overlap_grad_reduce = true;
  // Share of device memory a plan must leave free: a run planned at 99% of memory fails on allocator variance
  // (caching-allocator block rounding, NCCL buffers that grow, the peak of one unlucky batch).
  double memory_headroom_fraction = 0.05;
  // Whether the fraction was given (--headroom): a serving engine fills memory to its own fraction unless it was.
  bool memory_headroom_given = false;
  double usable_bytes(double capacity_bytes) const { return capacity_bytes * (1 - memory_headroom_fraction); }
};

struct Workload {
  Task task = Task::kTrain;
  Precision precision = Precision::kBf16;       // compute precision of training / inference
  std::optional<WeightFormat> weights;          // inference weight storage (default: precision)
  // int8 weights through one fused kernel per linear (a GPTQ / AWQ checkpoint) rather than LLM.int8()'s several.
  bool fused_dequant_kernels = false;
  // Exact bytes per parameter of a checkpoint read from its headers (GGUF, safetensors); inference only, and
  // only when --weights is not given.
  std::optional<double> checkpoint_bytes_per_param;
  Precision kv_cache = Precision::kBf16;        // KV cache element format
  bool kv_cache_set = false;
  std::int64_t seq = 2048;
  // Training on samples that are not packed: their lengths (tokens, each at most seq) as sorted quantiles of the
  // dataset's distribution. Each micro-batch is padded to its longest sample and the step computes the padding
  // too; tokens/s and --tokens count the samples' own tokens. Empty: every sequence is seq tokens (packed).
  std::vector<double> sample_tokens;
  std::optional<double> tokens;                 // total training tokens
  Attention attention = Attention::kFlash;
  Optimizer optimizer = Optimizer::kAdamW;
  int lora_rank = 16;
  std::string lora_targets = "all-linear";      // or "qv"
  // The language-model head: the vocabulary projection (logits) and, in training, its cross-entropy. Off: the
  // model runs with a task head of a handful of outputs (SQuAD span extraction, sequence classification, an
  // embedding model), whose cost is negligible against the layers.
  bool lm_head = true;
  Stack stack;
  // Inference.
  // Transformer layers whose weights the device holds (llama.cpp's -ngl, --gpu-layers); the others stay in host
  // memory (Stack::offload_runs_on_host says who computes them). Unset: all of them. With fewer than all, the
  // engines that run offloaded layers on the host keep the output projection there too (llama.cpp puts it on the GPU
  // only at -ngl above the layer count).
  std::optional<std::int64_t> device_layers;
  std::int64_t prompt = 512;
  std::int64_t generate = 256;
  // Generic models: samples, not sequences.
};

}  // namespace hwplan
