#include "estimators/stack.hpp"
#include "core/assumptions.hpp"

#include <cstdio>

namespace hwplan {
namespace {

// CPU time to issue one kernel from eager PyTorch (Python module call + dispatcher + launch). Derived from the
// PyTorch team's gpt-fast write-up ("Accelerating Generative AI with PyTorch II: GPT, Fast", pytorch.org blog,
// 2023-11-30): Llama-2-7B bf16 batch-1 decode in eager mode runs at 25.5 tokens/s on an A100 (39 ms per token)
// while its GPU work is ~7 ms (13.5 GB of weights at ~2 TB/s); its eager model issues about 36 kernels per
// layer, 32 layers + head = ~1,170 kernels per token: (39 - 7) ms / 1,170 = ~27 us per kernel.
// Used as assumptions().eager_host_seconds_per_kernel (src/core/assumptions.hpp, overridable with --assumptions).
// torch.compile (Inductor) launches its generated kernels from a Python wrapper without the dispatcher:
// the same write-up reaches 107 tokens/s with compile + CUDA graphs; without graphs a launch still costs the
// CUDA driver call and the wrapper (~5-8 us, CUDA launch-latency measurements in the CUDA C++ best practices).
// Used as assumptions().compiled_host_seconds_per_kernel (src/core/assumptions.hpp, overridable with --assumptions).
// A C++ engine issuing kernels itself (llama.cpp, ExLlama's C++ extension): cudaLaunchKernel alone, ~4 us.
// Used as assumptions().native_host_seconds_per_kernel (src/core/assumptions.hpp, overridable with --assumptions).

// Eager (uncompiled) PyTorch training in 16-bit moves about twice the bytes that the per-op pass counts of
// estimators/operators.cpp give for its norm, RoPE, activation, residual and adapter ops: the fp32 islands of mixed
// precision (upcasts and downcasts around norms, RoPE and softmax, and their backward), saved-tensor copies,
// transposes made contiguous, GQA key/value expansion. fp32 training has no casts: NeuSight's fp32 eager step
// latencies match the pass counts as they are, so the factor applies to 16-bit activations only. Calibrated on
// torchtune's single-A100 Llama 3.2 3B table (packed eager 7,075 tok/s vs compiled 8,998: the pass counts alone
// gave half that gap) and checked on IBM's FSDP Llama 2 7B on 128 A100 (pytorch.org "Maximizing training
// throughput using PyTorch FSDP and Torch.compile": 57% MFU eager, 68% compiled), where the same factor closes
// the eager/compiled gap to within 10%. `hwplan validate` refits it without each held-out group.
// Used as assumptions().eager_traffic_factor (src/core/assumptions.hpp, overridable with --assumptions).

}  // namespace

Stack framework_preset(Framework f) {
  Stack s;
  s.preset = to_string(f);
  s.eager_traffic_factor = assumptions().eager_traffic_factor;
  switch (f) {
    case Framework::kHfTrainer:
    case Framework::kDeepspeed:
      // transformers' eager modelling code (RMSNorm, RoPE and SwiGLU as separate ops), torch.amp with fp32
      // master weights, PEFT LoRA adapters as dropout + A + B + scale + add. DeepSpeed runs the same model code
      // under ZeRO (with its fused Adam, which the optimizer's memory-bound pass already assumes) on 16-bit
      // parameters (its bf16 / fp16 mode casts the model; the fp32 copy lives in the optimizer).
      s.autocast = f == Framework::kHfTrainer;
      s.persistent_grads = f == Framework::kDeepspeed;
      // The Trainer's default optimizer, adamw_torch (transformers 4.32, PR 25109, until 4.54 with PyTorch 2.8+, PR
      // 37358, made adamw_torch_fused the default), is torch.optim.AdamW's foreach implementation; DeepSpeed
      // replaces it with its FusedAdam. Both clip by global norm every step (max_grad_norm 1.0, DeepSpeed's
      // gradient_clipping from it).
      s.fused_optimizer = f == Framework::kDeepspeed;
      s.clip_grad_norm = true;
      // DeepSpeed's ZeRO-3 keeps up to stage3_max_live_parameters gathered (deepspeed/runtime/zero/config.py:
      // max_live_parameters and max_reuse_distance default to 1e9).
      if (f == Framework::kDeepspeed) s.zero3_live_parameters = 1e9;
      s.fused_kernels = false;
      s.host_seconds_per_kernel = assumptions().eager_host_seconds_per_kernel;
      // The Trainer accumulates through accelerate's accumulate(), which skips the gradient sync of every micro-batch
      // but the last (no_sync) under FSDP; DeepSpeed's engine reduces its partitioned gradients every micro-batch.
      s.defer_grad_sync = f == Framework::kHfTrainer;
      s.adapter_kernels = 5;
      s.tensor_parallel = false;
      s.pipeline_parallel = false;
      break;
    case Framework::kFsdp:
      // Plain PyTorch FSDP/DDP over an eager model with SDPA attention; torch.optim.AdamW with its default (foreach)
      // implementation over the sharded parameters, clipping by global norm (FSDP's clip_grad_norm_).
      s.fused_kernels = false;
      s.fused_optimizer = false;
      s.clip_grad_norm = true;
      s.host_seconds_per_kernel = assumptions().eager_host_seconds_per_kernel;
      // A plain loop runs backward per micro-batch with the reduction on (--defer-grad-sync on for one that wraps the
      // micro-batches before the last in no_sync()).
      // PyTorch's tensor-parallel plans for Llama-style models put ColwiseParallel(output_layouts=Replicate()) on the
      // output projection and compute the plain loss on every rank unless the loop enters loss_parallel().
      s.loss_parallel = false;
      // FSDP composes with PyTorch's tensor parallel API (2-D parallelism; fairscale's model-parallel layers before
      // it, as LLaMA was trained); pipeline stages need another stack.
      s.pipeline_parallel = false;
      break;
    case Framework::kTorchtune:
      // torchtune recipes: pure bf16 (dtype: bf16, no fp32 master copy), chunked cross-entropy
      // (CEWithChunkedOutputLoss), eager unless compile: True; reports torch.cuda peak allocated/active.
      s.master_weights_fp32 = false;
      s.fused_kernels = false;
      s.chunked_loss = true;
      // Its recipes' configs build torch.optim.AdamW with fused: True (or bitsandbytes' 8-bit AdamW, one kernel per
      // tensor) and leave clip_grad_norm null.
      s.fused_optimizer = true;
      s.clip_grad_norm = false;
      s.host_seconds_per_kernel = assumptions().eager_host_seconds_per_kernel;
      s.memory_metric = MemoryMetric::kAllocated;
      s.gather_copy_out = true;  // its distributed recipes shard with FSDP2's fully_shard
      s.loss_parallel = false;   // its tensor-parallel plans gather the output projection (output_layouts=Replicate())
      s.pipeline_parallel = false;  // tensor_parallel_dim in its distributed recipes; no pipeline stages
      break;
    case Framework::kTorchtitan:
      // FSDP2 over fp32 master shards; pipeline schedules include interleaved 1F1B. Eager, as its shipped configs
      // run it (torchtitan/models/llama3/train_configs/llama3_8b.toml: compile = false; llama3_70b.toml:
      // [compile] enable = false): --fused-kernels on for a run with torch.compile per block.
      s.fused_kernels = false;
      s.interleaved_pipeline = true;
      s.overlap_p2p = true;  // torch.distributed.pipelining's schedules post isend / irecv and compute meanwhile
      s.context_parallel = true;  // torch.distributed context_parallel (ring attention over SDPA)
      s.partial_recompute = true;  // activation checkpointing of every Nth transformer block
      // FSDP2's MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32): torchtitan's training config ships
      // mixed_precision_reduce = "float32", so each gradient reduce-scatter moves 4 bytes a parameter, and the
      // sharded gradients are fp32 like the sharded parameters they update.
      s.fp32_grads = true;
      // optimizer.implementation "fused" (its default), clip_grad_norm_ with max_norm 1.0 every step.
      s.fused_optimizer = true;
      s.clip_grad_norm = true;
      s.gather_copy_out = true;  // FSDP2 (fully_shard)
      s.host_seconds_per_kernel = assumptions().eager_host_seconds_per_kernel;
      break;
    case Framework::kLitgpt:
      // LitGPT's finetune and pretrain scripts (Lightning-AI/litgpt, litgpt/finetune/lora.py): Lightning Fabric over
      // its own eager GPT module; with no --precision, get_default_supported_precision(training=True) picks
      // "bf16-mixed" (16-mixed without bf16): fp32 weights under torch.autocast, as the Trainer's; its config_hub
      // recipes ask "bf16-true" (--master-weights none --autocast off); the vocabulary projection and the loss in 128-position chunks
      // (model(..., lm_head_chunk_size=128), chunked_cross_entropy); torch.optim.AdamW with its default foreach
      // implementation (bitsandbytes' PagedAdamW under --quantize bnb.*: --paged-optimizer on); clipping only when
      // max_norm is set (TrainArgs default None); FSDPStrategy with every Block checkpointed on several devices;
      // "Memory used" is torch.cuda.max_memory_allocated() / 1e9 (decimal GB of allocated memory).
      s.autocast = true;
      s.fused_kernels = false;
      s.chunked_loss = true;
      s.fused_optimizer = false;
      s.clip_grad_norm = false;
      s.host_seconds_per_kernel = assumptions().eager_host_seconds_per_kernel;
      s.memory_metric = MemoryMetric::kAllocated;
      s.defer_grad_sync = true;  // fabric.no_backward_sync(model, enabled=is_accumulating) around each backward
      s.tensor_parallel = false;
      s.pipeline_parallel = false;
      break;
    case Framework::kMegatron:
      // Megatron-LM / NeMo: Transformer Engine fused LayerNorm+GEMM, fused RoPE, fused SwiGLU, fused
      // cross-entropy; distributed optimizer with fp32 main weights; large kernels, host cost hidden; the
      // interleaved 1F1B pipeline schedule (--num-layers-per-virtual-pipeline-stage).
      s.fused_kernels = true;
      s.interleaved_pipeline = true;
      // --no-overlap-p2p-communication (store_false: overlap on), effective for the interleaved schedule only
      // (Megatron-LM #331, May 2023, ported from apex #1616).
      s.overlap_p2p = true;
      s.native_attention = true;  // Transformer Engine's cuDNN fused attention
      s.persistent_grads = true;   // the distributed optimizer's contiguous fp32 gradient buffer
      s.fp8_head = false;          // the output layer is tensor_parallel.ColumnParallelLinear: bf16 under --fp8
      s.fp32_grads = true;         // main_grad buffer in fp32 for bf16 (and fp8) training
      s.context_parallel = true;  // --context-parallel-size (Transformer Engine's ring attention)
      s.partial_recompute = true;  // --recompute-method block --recompute-num-layers N
      // Apex / Transformer Engine FusedAdam; --clip-grad 1.0 computes the global norm every step and scales the
      // gradients only when it exceeds the threshold.
      s.fused_optimizer = true;
      s.clip_grad_norm = true;
      s.clip_scale_always = false;
      s.host_seconds_per_kernel = assumptions().compiled_host_seconds_per_kernel;
      break;
  }
  return s;
}

Stack engine_preset(Engine e) {
  Stack s;
  s.preset = to_string(e);
  s.memory_metric = MemoryMetric::kDevice;
  // Compiled engines lay a CNN's activations out as their kernels want them (TensorRT picks NHWC for tensor-core
  // convolutions); eager PyTorch keeps its NCHW default unless the model is converted to channels_last.
  s.channels_last = e != Engine::kHf;
  switch (e) {
    case Engine::kHf:
      // transformers generate(): eager modelling code, one Python dispatch per op, no CUDA graphs; sampling and
      // stopping criteria add a few small ops per token.
      // Its forward pass has the training forward's fp32 islands (RMSNorm, RoPE, softmax upcasts): the same
      // eager 16-bit traffic factor (H200 bf16 forward passes of Llama 2 7B at 4,096-8,192 tokens: -16..-3%
      // without it, +1..+4% with it).
      s.fused_kernels = false;
      s.eager_traffic_factor = assumptions().eager_traffic_factor;
      s.host_seconds_per_kernel = assumptions().eager_host_seconds_per_kernel;
      s.decode_step_overhead_seconds = 20 * assumptions().eager_host_seconds_per_kernel;
      s.layer_split = true;  // from_pretrained(device_map="auto"): accelerate places whole layers on each device
      s.kv_cache_concat = true;  // DynamicCache.update: torch.cat of the cache and the step's keys / values
      break;
    case Engine::kVllm:
    case Engine::kSglang:
      // Decode replayed as CUDA graphs; the Python scheduler, sampler and detokeniser run once per step
      // (~1 ms at small batch in vLLM's own profiles of the V1 engine). Prefill attention: FlashAttention-3 on
      // Hopper (vLLM's vllm-flash-attn, SGLang's default backend there). Both overlap that CPU work with the GPU's
      // step by default: SGLang's zero-overhead batch scheduler since v0.4 (lmsys.org blog, 2024-12-04), vLLM's
      // async scheduling since late 2025 (vllm-project/vllm #19970 added it as --async-scheduling; #27614, in the
      // plan of issue #27679, made it the default; vllm-ascend #9567 dropped the flag from its configs in May 2026
      // as "enabled by default"). --overlap-scheduling off describes older releases.
      s.cuda_graphs = true;
      s.native_attention = true;
      s.overlap_scheduling = true;
      s.decode_step_overhead_seconds = 1e-3;
      // Tensor-parallel all-reduces inside NVLink as their own kernels: vLLM's custom all-reduce (vllm-project/vllm
      // #2192, Dec 2023, on unless --disable-custom-all-reduce), SGLang's (TensorRT-LLM-derived, sgl-project/sglang
      // #2688 / #2904).
      s.custom_allreduce = true;
      // Without CUDA graphs (--cuda-graphs off, --enforce-eager, releases before vLLM 0.2.5) the step's kernels are
      // issued from the Python model code one by one, as eager PyTorch does (fewer of them: fused custom ops).
      s.host_seconds_per_kernel = assumptions().eager_host_seconds_per_kernel;
      break;
    case Engine::kTrtllm:
      // C++ runtime with CUDA graphs (in-flight batching scheduler in C++) and its own per-architecture FMHA kernels;
      // the overlap scheduler is on by default (TensorRT-LLM docs, features/overlap-scheduler).
      s.cuda_graphs = true;
      s.native_attention = true;
      s.overlap_scheduling = true;
      s.decode_step_overhead_seconds = 0.3e-3;
      s.custom_allreduce = true;  // its AllReduce plugin's one-shot / two-shot kernels (strategy AUTO)
      // Without CUDA graphs its C++ runtime launches each kernel itself.
      s.host_seconds_per_kernel = assumptions().native_host_seconds_per_kernel;
      break;
    case Engine::kMlc:
      s.quantized_head = true;  // q4f16_1 and q4f32_1 quantize every linear layer, lm_head included
      s.quantized_embedding = true;  // and the embedding table (GroupQuantizeEmbedding)
      s.cuda_graphs = true;
      s.decode_step_overhead_seconds = 0.3e-3;
      s.host_seconds_per_kernel = assumptions().native_host_seconds_per_kernel;  // TVM's runtime, without graphs
      break;
    case Engine::kLlamacpp:
      // ggml runs its graph one node per kernel, unfused: per Llama layer RMS norm and its weight multiply
      // (twice), q, k and v as three matrix-vector products, RoPE on q and k, two KV-cache copies, K.Q, scale,
      // mask, softmax, KQ.V, the head permute made contiguous, the output projection, two residual adds, gate and
      // up products, SiLU, the gate multiply and the down product: 25 nodes, plus the per-layer views ggml
      // materialises (~7) = 32 (llama.cpp's llm_build_llama graph, late 2023, before CUDA graphs and op fusion).
      // Quantised weights add one q8_1 quantisation of the activations per product (the mmvq path).
      s.host_seconds_per_kernel = assumptions().native_host_seconds_per_kernel;
      s.decode_step_overhead_seconds = 0.2e-3;
      s.decode_kernels_per_layer = 32;
      s.quantized_linear_kernels = 1;
      s.layer_split = true;  // --split-mode layer, the default (row splits each matrix: --tp)
      s.quantized_head = true;  // GGUF quantizes output.weight too (Q6_K in the k-quant mixes)
      s.quantized_embedding = true;  // and token_embd.weight
      // "There is very little benefit to offloading the input layer, so always keep it on the CPU" (llama.cpp
      // src/llama-model.cpp, load_tensors: dev_input is the CPU whatever -ngl is); a tied token_embd is duplicated
      // onto the device as the output layer (TENSOR_DUPLICATED).
      s.embedding_on_host = true;
      // Layers -ngl leaves out run on the CPU backend from host memory, their KV cache with them; a prompt batch of
      // 32 rows or more has their matrix products run on the GPU instead, the weights copied over for each ubatch of
      // 512 tokens (ggml-cuda's offload_op: min_batch_size 32; llama.cpp's n_ubatch default 512).
      s.offload_runs_on_host = true;
      s.offload_min_batch = 32;
      s.offload_ubatch = 512;
      break;
    case Engine::kExllama:
      // Native C++/CUDA engine launching its own fused kernels. ExLlamaV2 per layer: the C++ attention front (norm,
      // the q, k and v quantised matrix products, RoPE on q and k), attention in PyTorch ops when flash-attn is
      // absent (the cache copies, q.k, softmax, .v, the reshape: ~6), the output product with the residual add, and
      // the C++ MLP (norm, gate, up, activation x gate, down, residual): ~19.
      s.host_seconds_per_kernel = assumptions().native_host_seconds_per_kernel;
      s.decode_kernels_per_layer = 19;
      s.decode_step_overhead_seconds = 0.2e-3;
      s.layer_split = true;  // gpu_split / autosplit: consecutive layers on each GPU
      s.quantized_head = true;  // EXL2 quantizes lm_head (6 or 8 bits: head_bits)
      // The embedding table stays fp16 and in system RAM: ExLlamaV2Embedding is loaded to the CPU and its output
      // moved to the first layer's device (exllamav2/embedding.py, safe_move_tensor).
      s.embedding_on_host = true;
      break;
    case Engine::kNpuRuntime:
      // An NPU's own runtime (TensorFlow Lite with the Edge TPU delegate, Core ML, Qualcomm's QNN) runs a graph its
      // compiler fused and scheduled ahead of time: normalisation and activations folded into the convolutions,
      // 8-bit tensors between layers, every linear layer and the embedding quantised, no per-op dispatch from the
      // host. What the host pays is one invoke per forward pass (a decode step is one invoke too).
      // Qualcomm AI Hub's GoogLeNet w8a8 runs its 144 QNN layers in 0.182 ms on a Galaxy S24, everything included:
      // under 1.3 us a layer, where a GPU's launch and ramp-up floor is 4 us: no per-layer floor is charged.
      s.npu_graph = true;
      s.fused_kernels = true;
      s.quantized_head = true;
      s.quantized_embedding = true;
      s.invoke_seconds = assumptions().npu_invoke_seconds;
      // Its compiler keeps a convolutional network's tensors between layers in the NPU's local memory (the Hexagon
      // NPU's VTCM, the Neural Engine's and the Edge TPU's SRAM), tiling a layer that does not fit: the weights are
      // what DRAM delivers. (A transformer's layers are still timed with their activations' DRAM traffic.)
      // Qualcomm AI Hub's ResNet-50 w8a8 on a Galaxy S24 (0.66 ms under QNN) is about its 25 MB of weights at
      // the LPDDR5X rate plus one invoke; with every activation crossing DRAM too it would take twice that.
      s.on_chip_activations = true;
      s.decode_step_overhead_seconds = s.invoke_seconds;
      break;
  }
  return s;
}

Framework default_framework(Task t) {
  return t == Task::kTrain ? Framework::kFsdp : Framework::kHfTrainer;
}

// Language models that generate are served by a serving engine; an encoder (BERT, ViT) or a generic network (a CNN)
// most often runs as eager PyTorch.
Engine default_engine(const Model& m) { return m.generates() ? Engine::kVllm : Engine::kHf; }

// Where each engine runs. vLLM: CUDA and ROCm in tree; Google TPU (XLA), Intel Gaudi (vllm-gaudi), Huawei Ascend
// (vllm-ascend) and AWS Neuron through its hardware plugins. SGLang: CUDA, ROCm and Ascend NPUs. TensorRT-LLM: NVIDIA
// GPUs with TensorRT (Jetson Orin included). ExLlamaV2: CUDA and ROCm. llama.cpp and MLC LLM: CUDA, ROCm and Metal on
// Apple's GPUs (catalog software led by mlx or pytorch). PyTorch eager (hf): CUDA, ROCm, Apple's GPUs (MPS), XLA, Gaudi
// (HPU), Ascend (torch_npu) and Neuron. Apple's Neural Engine (Core ML), the Coral Edge TPU (TFLite) and
// Qualcomm's NPU (QNN / SNPE) run their vendors' runtimes only.
bool engine_runs_on(Engine e, const Device& d) {
  const bool cuda = d.has_software("cuda"), rocm = d.has_software("rocm");
  // An Apple GPU's first stack is MLX or PyTorch (Metal); a Neural Engine's is Core ML (which schedules it).
  const bool metal = d.vendor == "apple" && !d.software.empty() && d.software.front() != "coreml";
  const bool plugins = d.has_software("xla") || d.has_software("synapseai") || d.has_software("cann") ||
                       d.has_software("neuron");
  // vLLM, SGLang and TensorRT-LLM need compute capability 7.0 or newer: no Pascal (P100, P4).
  const bool volta_or_newer = !(d.vendor == "nvidia" && d.architecture_family == "pascal");
  switch (e) {
    case Engine::kVllm: return (cuda && volta_or_newer) || rocm || plugins;
    case Engine::kSglang: return (cuda && volta_or_newer) || rocm || d.has_software("cann");
    case Engine::kTrtllm: return cuda && volta_or_newer && d.has_software("tensorrt");
    case Engine::kExllama: return cuda || rocm;
    case Engine::kLlamacpp:
    case Engine::kMlc: return cuda || rocm || metal;
    case Engine::kHf: return cuda || rocm || metal || plugins;
    case Engine::kNpuRuntime: return !npu_runtime_of(d).empty();
  }
  return false;
}

Engine default_engine(const Model& m, const Device& d) {
  const Engine e = default_engine(m);
  if (engine_runs_on(e, d)) return e;
  if (m.generates() && engine_runs_on(Engine::kLlamacpp, d)) return Engine::kLlamacpp;
  if (engine_runs_on(Engine::kNpuRuntime, d)) return Engine::kNpuRuntime;
  return e;
}

std::string npu_runtime_of(const Device& d) {
  // The device's first stack is its NPU's runtime (Apple's GPUs list Core ML after MLX and PyTorch: Core ML schedules
  // them through Metal, not as an NPU graph).
  if (d.software.empty()) return "";
  const std::string& first = d.software.front();
  if (first == "tflite" || first == "coreml" || first == "qnn") return first;
  // Qualcomm's older SDK (SNPE) runs the same Hexagon graphs; QNN is its successor.
  if (first == "snpe") return "qnn";
  return "";
}

std::string npu_runtime_named(const std::optional<std::string>& engine, const Device& d) {
  return engine && *engine != to_string(Engine::kNpuRuntime) ? *engine : npu_runtime_of(d);
}

Stack npu_runtime_preset(const std::string& runtime, const Device& d) {
  Stack s = engine_preset(Engine::kNpuRuntime);
  if (!runtime.empty()) s.preset = runtime;
  // TensorFlow Lite on the catalog's only TFLite accelerator, the Edge TPU, through its delegate.
  if (runtime == "tflite" && npu_runtime_of(d) == "tflite")
    s.invoke_seconds = s.decode_step_overhead_seconds = assumptions().edgetpu_invoke_seconds;
  return s;
}

// Single-threaded host work (Python dispatch, scheduling, request handling) scales with the core's clock. GPU
// servers' CPUs turbo to 3.7-3.8 GHz; GeForce cards sit in desktops whose cores reach 5.7-5.8 GHz at the same IPC.
// Workstation cards are as often in servers as in workstations: they keep the server's time, the slower of the two.
double host_time_ratio(const Device& device) {
  return device.device_class == DeviceClass::kConsumer ? assumptions().desktop_host_time_ratio : 1.0;
}

HostRates typical_host(const Device& device) {
  const Assumptions& a = assumptions();
  const bool desktop = device.device_class == DeviceClass::kConsumer;
  const bool workstation = device.device_class == DeviceClass::kWorkstation;
  const double peak_gbps = desktop ? a.desktop_host_memory_gbps : a.server_host_memory_gbps;
  HostRates h;
  h.memory_bytes_per_s = peak_gbps * 1e9 * a.host_memory_efficiency;
  h.matrix_flops = (desktop ? a.desktop_host_matrix_tflops : a.server_host_matrix_tflops) * 1e12;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s, %.0f GB/s of its %.0f GB/s peak",
                desktop       ? "a desktop's dual-channel DDR5-5600"
                : workstation ? "a workstation's 8-channel DDR5-4800 (as one socket of a GPU server)"
                              : "one socket of a GPU server, 8-channel DDR5-4800",
                h.memory_bytes_per_s / 1e9, peak_gbps);
  h.memory_words = buf;
  std::snprintf(buf, sizeof buf, "CPU %.1f TFLOP/s", h.matrix_flops / 1e12);
  h.cpu_words = buf;
  return h;
}

}  // namespace hwplan
