#include "recommend/query.hpp"

#include <fmt/format.h>

#include "estimators/efficiency.hpp"
#include "estimators/estimate.hpp"
#include "estimators/params.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/assumptions.hpp"
#include "core/normal.hpp"
#include "core/strings.hpp"
#include "estimators/stack.hpp"
#include "io/profile_io.hpp"
#include "recommend/recommend.hpp"
#include "recommend/serve_setup.hpp"

namespace hwplan {

namespace {

// The lengths of unpacked training samples as 256 sorted quantiles, each cut at the sequence length (frameworks
// truncate samples at their maximum length).
std::vector<double> sample_quantiles(const std::string& spec, std::int64_t cut) {
  constexpr int kQuantiles = 256;
  serve::LengthDist dist = read_length_dist("--sample-tokens", spec, cut);
  std::sort(dist.values.begin(), dist.values.end());  // a file's lengths, read in order
  const double mu = std::log(dist.mean) - dist.sigma * dist.sigma / 2;  // lognormal: the given mean is E[length]
  std::vector<double> q(kQuantiles);
  for (int i = 0; i < kQuantiles; ++i) {
    const double u = (i + 0.5) / kQuantiles;
    double v = static_cast<double>(dist.fixed);
    if (dist.kind == serve::LengthKind::kUniform)
      v = static_cast<double>(dist.min) + u * static_cast<double>(dist.max - dist.min);
    else if (dist.kind == serve::LengthKind::kLognormal)
      v = std::exp(mu + dist.sigma * normal_quantile(u));
    else if (dist.kind == serve::LengthKind::kEmpirical)
      v = static_cast<double>(dist.values[std::min(dist.values.size() - 1, static_cast<size_t>(u * static_cast<double>(dist.values.size())))]);
    q[static_cast<size_t>(i)] = std::clamp(v, 1.0, static_cast<double>(cut));
  }
  return q;
}

[[noreturn]] void bad(const std::string& flag, const std::string& message) { throw InputError({}, flag, message); }

template <typename T, typename Parse>
T parse_choice(const std::string& flag, const std::string& value, Parse parse, const char* allowed) {
  auto v = parse(value);
  if (!v) {
    std::string message = "'" + value + "' is not one of: " + allowed;
    bad(flag, message);
  }
  return *v;
}

void check_range(const std::string& flag, long long v, long long lo, long long hi) {
  if (v < lo) bad(flag, "must be at least " + std::to_string(lo) + ", got " + std::to_string(v));
  if (v > hi) bad(flag, "must be at most " + std::to_string(hi) + ", got " + std::to_string(v));
}

}  // namespace

void check_layout_against_model(const Model& model, const WorkloadSpec& o) {
  if (model.is_transformer() && o.tp && *o.tp > 0 && model.attention_heads % *o.tp != 0)
    bad("--tp", std::to_string(*o.tp) + "-way tensor parallelism does not divide the " +
                    std::to_string(model.attention_heads) + " attention heads of " + model.id);
}

long long fixed_layout_devices(const WorkloadSpec& w) { return w.tp.value_or(1) * w.cp.value_or(1) * w.pp.value_or(1); }

void check_layout_within_count(const WorkloadSpec& w, long long max_count) {
  const long long fixed = fixed_layout_devices(w);
  if (fixed > max_count)
    bad("--max-count", "the search goes up to " + std::to_string(max_count) + " devices and the fixed layout needs " +
                           std::to_string(fixed) + " (--tp x --cp x --pp): raise --max-count");
}

namespace {

// The software stack: the named (or default) preset, then each part the user set by its own flag.
Stack resolve_stack(const WorkloadSpec& o, Task task, const Model& model, const Device& device) {
  Stack s;
  if (task == Task::kInfer) {
    if (o.framework) bad("--framework", "applies to training tasks; inference takes --engine");
    Engine e = o.engine ? parse_choice<Engine>("--engine", *o.engine, parse_engine, "hf, vllm, sglang, trtllm (or tensorrt), llamacpp, exllama, mlc, tflite, coreml, qnn (or npu-runtime)")
                        : default_engine(model, device);
    // An NPU runtime goes by its product's name: the one the user gave, else the device's own.
    const std::string runtime = e == Engine::kNpuRuntime ? npu_runtime_named(o.engine, device) : "";
    const bool foreign_runtime = e == Engine::kNpuRuntime && runtime != npu_runtime_of(device);
    s = e == Engine::kNpuRuntime ? npu_runtime_preset(runtime, device) : engine_preset(e);
    if (!engine_runs_on(e, device) || foreign_runtime) {
      const std::string name = e == Engine::kNpuRuntime && !runtime.empty() ? runtime : to_string(e);
      std::string software;
      for (const auto& t : device.software) software += (software.empty() ? "" : ", ") + t;
      if (software.empty()) software = "none listed";
      s.platform_warning =
          foreign_runtime && device.has_software(runtime)
              ? runtime + " is not an NPU runtime on " + device.id + " (its software: " + software +
                    (runtime == "coreml" ? "; Core ML schedules a GPU through Metal" : "") +
                    "): the figures model an NPU's compiled graph on this hardware"
          : o.engine ? name + " does not run on " + device.id + " (its software: " + software + "): the figures model " +
                         name + "'s behaviour on this hardware, not a setup that exists"
                   : "no engine preset runs on " + device.id + " (its software: " + software + "): the figures assume " +
                         name + "'s behaviour" +
                         (device.device_class == DeviceClass::kEdge
                              ? " (with quantized --weights, every linear layer and the embedding quantized, as on-device "
                                "runtimes do)"
                              : "") +
                         ", standing in for the device's own runtime";
    }
    if (o.engine && *o.engine == "tensorrt") s.preset = "tensorrt";  // the name the user gave (trtllm's preset)
    s.preset_assumed = !o.engine;
    // On-device runtimes (Core ML, Qualcomm's QNN, ExecuTorch, llama.cpp, MLC) quantize every linear layer, the
    // output projection included, and the embedding table: the assumed stack on an edge device does (an engine the
    // user names keeps its own).
    if (!o.engine && device.device_class == DeviceClass::kEdge) s.quantized_head = s.quantized_embedding = true;
    // The engines' own all-reduce kernels are written for NVLink (CUDA IPC) and for AMD's xGMI (vLLM's ROCm custom
    // all-reduce); on Gaudi, TPU, Trainium and Ascend the vendor's collective library does it (--custom-allreduce on
    // to say otherwise).
    if (device.vendor != "nvidia" && device.vendor != "amd") s.custom_allreduce = false;
  } else {
    if (o.engine) bad("--engine", "applies to --task infer; training takes --framework");
    Framework f = o.framework ? parse_choice<Framework>("--framework", *o.framework, parse_framework,
                                                        "hf-trainer, deepspeed, fsdp, torchtune, torchtitan, megatron, litgpt")
                              : default_framework(task);
    s = framework_preset(f);
    s.preset_assumed = !o.framework;
  }
  if (o.master_weights) {
    if (*o.master_weights != "fp32" && *o.master_weights != "none") bad("--master-weights", "'" + *o.master_weights + "' is not one of: fp32, none");
    // Training state: for inference neither applied nor listed as set (Query::ignored_inputs says it was ignored).
    if (task != Task::kInfer) {
      s.master_weights_fp32 = *o.master_weights == "fp32";
      s.overridden.push_back("master-weights " + *o.master_weights);
    }
  }
  // The presets' host times are a GPU server's; the machine the device sits in may be faster (host_time_ratio). A
  // time the user gives (--host-kernel-us, below) replaces the host's, and the per-step host work scales with it.
  if (const double ratio = host_time_ratio(device); ratio != 1.0) {
    s.host_seconds_per_kernel *= ratio;
    s.decode_step_overhead_seconds *= ratio;
    s.desktop_host = true;
  }
  auto flag = [&](const std::optional<bool>& v, bool& into, const char* name) {
    if (!v) return;
    into = *v;
    s.overridden.push_back(std::string(name) + (*v ? " on" : " off"));
  };
  flag(o.fused_kernels, s.fused_kernels, "fused-kernels");
  flag(o.chunked_loss, s.chunked_loss, "chunked-loss");
  flag(o.optimizer_in_backward, s.optimizer_in_backward, "optimizer-in-backward");
  flag(o.activation_offload, s.activation_offload, "activation-offload");
  flag(o.paged_optimizer, s.paged_optimizer, "paged-optimizer");
  flag(o.native_attention, s.native_attention, "native-attention");
  flag(o.autocast, s.autocast, "autocast");
  flag(o.persistent_grads, s.persistent_grads, "persistent-grads");
  flag(o.foreach_optimizer, s.foreach_optimizer, "foreach-optimizer");
  flag(o.fused_optimizer, s.fused_optimizer, "fused-optimizer");
  flag(o.clip_grad_norm, s.clip_grad_norm, "clip-grad-norm");
  flag(o.fp8_head, s.fp8_head, "fp8-head");
  flag(o.fp32_grads, s.fp32_grads, "fp32-grads");
  flag(o.fp32_reduce, s.fp32_reduce, "fp32-reduce");
  flag(o.defer_grad_sync, s.defer_grad_sync, "defer-grad-sync");
  flag(o.loss_parallel, s.loss_parallel, "loss-parallel");
  flag(o.overlap_p2p, s.overlap_p2p, "overlap-p2p");
  flag(o.gather_copy_out, s.gather_copy_out, "gather-copy-out");
  // An inference engine's behaviour: read for inference only. Given to training it changes nothing (CUDA graphs
  // would otherwise drop the training step's host time) and is neither applied nor listed as set; the query warns
  // that it was ignored (Query::ignored_inputs).
  if (task == Task::kInfer) {
    flag(o.cuda_graphs, s.cuda_graphs, "cuda-graphs");
    flag(o.overlap_scheduling, s.overlap_scheduling, "overlap-scheduling");
    flag(o.quantized_head, s.quantized_head, "quantized-head");
    flag(o.quantized_embedding, s.quantized_embedding, "quantized-embedding");
    flag(o.embedding_on_host, s.embedding_on_host, "embedding-on-host");
    flag(o.custom_allreduce, s.custom_allreduce, "custom-allreduce");
  }
  if (o.zero3_live_params) {
    if (!(*o.zero3_live_params >= 0) || *o.zero3_live_params > 1e13) bad("--zero3-live-params", "must be between 0 and 1e13 (parameters)");
    s.zero3_live_parameters = *o.zero3_live_params;
    s.overridden.push_back(fmt::format("zero3-live-params {:g}", *o.zero3_live_params));
  }
  if (o.host_kernel_us) {
    if (!(*o.host_kernel_us >= 0) || *o.host_kernel_us > 1e4) bad("--host-kernel-us", "must be between 0 and 10,000 (microseconds)");
    // The preset's per-step host work (sampling, stop checks) is in the same host's time: it scales along.
    if (s.host_seconds_per_kernel > 0) s.decode_step_overhead_seconds *= *o.host_kernel_us * 1e-6 / s.host_seconds_per_kernel;
    s.host_seconds_per_kernel = *o.host_kernel_us * 1e-6;
    s.desktop_host = false;  // the user's own host
    s.overridden.push_back(fmt::format("host-kernel-us {:g}", *o.host_kernel_us));
  }
  if (o.memory_format) {
    if (*o.memory_format != "nchw" && *o.memory_format != "nhwc") bad("--memory-format", "'" + *o.memory_format + "' is not one of: nchw, nhwc");
    s.channels_last = *o.memory_format == "nhwc";
    s.overridden.push_back("memory-format " + *o.memory_format);
  }
  if (o.memory_metric) {
    s.memory_metric = parse_choice<MemoryMetric>("--memory-metric", *o.memory_metric, parse_memory_metric, "allocated, reserved, device");
    s.overridden.push_back("memory-metric " + *o.memory_metric);
  }
  // CUDA graphs replay the whole decode step: no per-kernel host cost.
  if (s.cuda_graphs) s.host_seconds_per_kernel = 0;
  // An NPU's compiled graph fuses its layers, lays its tensors out itself and issues nothing from the host: the switches
  // of a GPU stack do not apply to it (said, and neither applied nor listed as set).
  if (s.npu_graph) {
    std::vector<std::string> ignored;
    auto drop = [&](bool given, const char* name, const char* prefix) {
      if (!given) return;
      ignored.push_back(name);
      s.overridden.erase(std::remove_if(s.overridden.begin(), s.overridden.end(),
                                        [&](const std::string& set) { return set.rfind(prefix, 0) == 0; }),
                         s.overridden.end());
    };
    drop(o.fused_kernels.has_value(), "--fused-kernels", "fused-kernels");
    drop(o.cuda_graphs.has_value(), "--cuda-graphs", "cuda-graphs");
    drop(o.host_kernel_us.has_value(), "--host-kernel-us", "host-kernel-us");
    drop(o.memory_format.has_value(), "--memory-format", "memory-format");
    s.fused_kernels = s.channels_last = true;
    s.cuda_graphs = s.desktop_host = false;
    s.host_seconds_per_kernel = 0;
    if (!ignored.empty()) {
      std::string flags;
      for (const auto& f : ignored) flags += (flags.empty() ? "" : ", ") + f;
      s.platform_warning += (s.platform_warning.empty() ? "" : "; ") + std::string("ignored by ") + s.preset + ": " +
                            flags + " (an NPU's compiled graph fuses its layers and issues no kernels from the host)";
    }
  }
  return s;
}

// A fixed global batch with a fixed micro-batch and/or accumulation: some dp dividing the device count must
// satisfy global = micro-batch x accumulation x dp. The error shows the arithmetic.
void check_batch_arithmetic(const WorkloadSpec& o, long long count, const SearchSpace& space) {
  const long long g = *o.global_batch;
  const long long mb = o.batch.value_or(1);
  const long long fixed = (o.batch ? mb : 1) * o.grad_accum.value_or(1);
  for (long long dp = 1; dp <= count; ++dp) {
    if (count % dp != 0) continue;
    if (space.dp && dp != *space.dp) continue;
    if (o.batch && o.grad_accum ? fixed * dp == g : g % (fixed * dp) == 0) return;
  }
  std::string terms = (o.batch ? "--batch " + std::to_string(mb) + " x " : std::string()) +
                      (o.grad_accum ? "--grad-accum " + std::to_string(*o.grad_accum) + " x " : std::string()) + "dp";
  bad("--global-batch", std::to_string(g) + " cannot be " + terms + " for any dp dividing --count " + std::to_string(count) +
                            (space.dp ? " (dp fixed at " + std::to_string(*space.dp) + ")" : std::string()) +
                            ": give a global batch that is a multiple of " + std::to_string(fixed) +
                            ", or leave one of them free");
}

// The workload: task, precisions, sequence, tokens, the software stack, optimizer, LoRA, prompt and generation.
void resolve_workload(const WorkloadSpec& o, Query& q) {
  Workload& w = q.input.workload;
  w.task = parse_choice<Task>("--task", o.task, parse_task, "train, finetune, lora, qlora, infer");
  w.precision = parse_choice<Precision>("--precision", o.precision, parse_precision, "fp32, tf32, fp16, bf16, fp8");
  if (w.precision == Precision::kInt8 || w.precision == Precision::kInt4 || w.precision == Precision::kFp4 ||
      w.precision == Precision::kFp64)
    bad("--precision", "'" + o.precision + "' is not a compute precision (use --weights for quantised inference)");
  // A generic network's fp32 is its convolutions' fp32: cuDNN and TensorRT run those in TF32 on NVIDIA GPUs that have
  // it unless told otherwise (PyTorch's torch.backends.cudnn.allow_tf32 defaults to True, unlike its matmul flag).
  // Where TF32 is no faster than fp32 on paper (GeForce cards), cuDNN's choice among its algorithms (Winograd in fp32
  // among them) is what the fp32 pricing already takes.
  if (w.precision == Precision::kFp32 && !q.model.is_transformer() && !q.model.convolutions.empty() &&
      q.device->vendor == "nvidia" && q.device->peak(Precision::kTf32) > q.device->peak(Precision::kFp32)) {
    w.precision = Precision::kTf32;
    q.model.ingest_notes.push_back("fp32 convolutions run in TF32 on " + q.device->id +
                                   ", as cuDNN does by default (torch.backends.cudnn.allow_tf32 = True) and TensorRT too: "
                                   "priced as --precision tf32");
  }
  if (o.weights) {
    w.weights = parse_choice<WeightFormat>("--weights", *o.weights, parse_weight_format,
                                           "fp32, fp16, bf16, fp8, int8, int4, nf4, q4_0, q4_k_m");
    if (w.task != Task::kInfer) bad("--weights", "applies to --task infer (QLoRA uses nf4 by itself)");
  }
  // A quantised checkpoint (quantization_config, GGUF) is served in its own format unless --weights says otherwise.
  if (!o.weights && w.task == Task::kInfer && q.model.weight_format && *q.model.weight_format != WeightFormat::kBf16 &&
      *q.model.weight_format != WeightFormat::kFp16 && *q.model.weight_format != WeightFormat::kFp32) {
    w.weights = q.model.weight_format;
    w.fused_dequant_kernels = q.model.fused_dequant_kernels;
    q.model.ingest_notes.push_back(std::string("weights assumed ") + to_string(*w.weights) + " (" +
                                   q.model.weight_format_note + "); --weights overrides");
  }
  // fp8 matrix products need fp8 operands: an fp8 inference of a 16-bit checkpoint quantizes its weights to fp8 when
  // it loads them (vLLM's --quantization fp8, TensorRT-LLM's FP8 recipes: W8A8), so they are stored and read in fp8.
  if (!o.weights && w.task == Task::kInfer && w.precision == Precision::kFp8 && !w.weights &&
      q.model.checkpoint_weight_bytes <= 0 && q.device->peak(Precision::kFp8) > 0) {
    w.weights = WeightFormat::kFp8;
    q.model.ingest_notes.push_back("weights assumed fp8 (--precision fp8: the engine quantizes the 16-bit weights to fp8 "
                                   "as it loads them, W8A8); --weights overrides");
  }
  // An integer-only accelerator (an Edge TPU, a phone NPU) runs only a model quantised to its integer format: the
  // weights it stores and reads are that format, as its compute is.
  if (!o.weights && w.task == Task::kInfer && !w.weights && q.model.checkpoint_weight_bytes <= 0) {
    const Precision runs = effective_precision(*q.device, w.precision).effective;
    if (runs == Precision::kInt8 || runs == Precision::kInt4) {
      w.weights = runs == Precision::kInt8 ? WeightFormat::kInt8 : WeightFormat::kInt4;
      // The Edge TPU takes no other format (below): --weights does not override there.
      q.model.ingest_notes.push_back(std::string("weights assumed ") + to_string(*w.weights) + " (" + q.device->id +
                                     " computes only in integers: the model is quantised to run on it)" +
                                     (npu_runtime_of(*q.device) == "tflite" ? "" : "; --weights overrides"));
    }
  }
  // The Edge TPU's compiler takes only full-integer 8-bit models: another weight format is priced as the int8 model it
  // becomes, and an fp32 request computes in int8 like any other (its tensors between layers are 8-bit too).
  if (w.task == Task::kInfer && npu_runtime_of(*q.device) == "tflite") {
    if (w.weights && *w.weights != WeightFormat::kInt8) {
      q.model.ingest_notes.push_back(std::string("--weights ") + to_string(*w.weights) + " priced as int8: " + q.device->id +
                                     " runs only full-integer 8-bit models (its compiler quantises every tensor to int8)");
      w.weights = WeightFormat::kInt8;
    }
    if (w.precision == Precision::kFp32) {
      q.model.ingest_notes.push_back("--precision fp32 computes as the int8 model " + q.device->id +
                                     " runs (its compiler quantises every tensor to int8)");
      w.precision = Precision::kBf16;
    }
  }
  if (!o.weights && w.task == Task::kInfer && q.model.checkpoint_weight_bytes > 0) {
    double params = count_parameters(q.model).total;
    if (params > 0) w.checkpoint_bytes_per_param = q.model.checkpoint_weight_bytes / params;
  }
  w.kv_cache = w.precision == Precision::kFp32 ? Precision::kFp32 : Precision::kBf16;
  if (o.kv_cache) {
    w.kv_cache = parse_choice<Precision>("--kv-cache", *o.kv_cache, parse_precision, "fp32, fp16, bf16, fp8, int8");
    // The cache formats engines offer (vLLM's kv_cache_dtype, llama.cpp's cache types, TensorRT-LLM's fp8/int8 KV).
    if (w.kv_cache != Precision::kFp32 && w.kv_cache != Precision::kFp16 && w.kv_cache != Precision::kBf16 &&
        w.kv_cache != Precision::kFp8 && w.kv_cache != Precision::kInt8)
      bad("--kv-cache", "'" + *o.kv_cache + "' is not one of: fp32, fp16, bf16, fp8, int8");
    w.kv_cache_set = true;
  }
  if (o.seq) check_range("--seq", *o.seq, 1, 100'000'000);
  w.seq = default_sequence_length(q.model, o);
  if (o.sample_tokens) {
    if (w.task == Task::kInfer) bad("--sample-tokens", "applies to training and fine-tuning (inference takes --prompt and --generate)");
    if (!q.model.is_transformer()) bad("--sample-tokens", "applies to language models (" + q.model.id + " takes fixed-size samples)");
    w.sample_tokens = sample_quantiles(*o.sample_tokens, w.seq);
  }
  // 1e16 tokens: hundreds of times the largest published training runs (a few times 1e13).
  if (o.tokens && (!std::isfinite(*o.tokens) || *o.tokens <= 0 || *o.tokens > 1e16)) bad("--tokens", "must be a positive number up to 1e16");
  w.tokens = o.tokens;
  w.stack = resolve_stack(o, w.task, q.model, *q.device);
  w.attention = parse_choice<Attention>("--attention", o.attention, parse_attention, "eager, flash");
  w.optimizer = parse_choice<Optimizer>("--optimizer", o.optimizer, parse_optimizer, "adamw, sgd, adafactor, adam8bit");
  check_range("--lora-rank", o.lora_rank, 1, 65536);
  w.lora_rank = static_cast<int>(o.lora_rank);
  if (o.lora_targets != "all-linear" && o.lora_targets != "qv") bad("--lora-targets", "must be all-linear or qv");
  w.lora_targets = o.lora_targets;
  w.lm_head = o.lm_head.value_or(true);
  if (o.gpu_layers && w.task == Task::kInfer) {
    const Device& d = *q.device;
    // auto on a device whose memory is the host's (or that has none), or for a generic network, leaves nothing to
    // place: all layers, as without it. A number there is an error.
    const bool placeable = q.model.is_transformer() && can_leave_layers_in_host(d);
    if (*o.gpu_layers == "auto") {
      q.device_layers_auto = placeable;
      if (!placeable)
        q.inert_device_layers = "no effect here: --gpu-layers auto (" +
                                (!q.model.is_transformer() ? q.model.id + " is a generic network: no layers to place"
                                 : d.streams_parameters() ? d.name + " has no memory of its own"
                                                          : d.name + " shares one memory with its CPU") + ")";
    } else {
      if (!q.model.is_transformer())
        bad("--gpu-layers", "places a transformer's layers; " + q.model.id + " is a generic network");
      if (d.host_link.type == "soc")
        bad("--gpu-layers", d.name + " shares one memory with its CPU: no layer can be left out of the device's memory");
      if (d.streams_parameters())
        bad("--gpu-layers", d.name + " has no memory of its own: its parameters stream from the host already");
      // A whole number, written as one or as a float with nothing after the point (40, 40.0: a sweep's numbers).
      long long n = -1;
      try {
        std::size_t used = 0;
        const double v = std::stod(*o.gpu_layers, &used);
        if (used == o.gpu_layers->size() && v >= 0 && v <= 1e6 && v == std::floor(v)) n = static_cast<long long>(v);
      } catch (const std::exception&) {
        n = -1;
      }
      if (n < 0) bad("--gpu-layers", "'" + *o.gpu_layers + "' is not a whole number of layers (0 or more) or auto");
      w.device_layers = n;
    }
  }
  // Inference lengths, cache formats and engine behaviour change nothing in training: said, not silently dropped
  // (a warning rather than an error: a batch file's defaults may give them to training and inference scenarios alike).
  std::string ignored;
  auto add = [&](bool given, const char* flag) {
    if (given) ignored += (ignored.empty() ? "" : ", ") + std::string(flag);
  };
  const WorkloadSpec defaults;
  if (w.task == Task::kInfer) {
    // And the other way: training lengths, budgets and optimizer state change nothing in an inference estimate.
    // (--tokens is read: estimate and recommend size an inference job by it.) A global batch has no meaning here:
    // replicas each take --batch, and there is no accumulation.
    add(o.seq.has_value(), "--seq");
    add(o.global_batch.has_value(), "--global-batch");
    add(o.autocast.has_value(), "--autocast");
    add(o.overlap_p2p.has_value(), "--overlap-p2p");
    add(o.optimizer != defaults.optimizer, "--optimizer");
    add(o.master_weights.has_value(), "--master-weights");
    add(o.lora_rank != defaults.lora_rank, "--lora-rank");
    add(o.lora_targets != defaults.lora_targets, "--lora-targets");
    // The training stack's gradient, optimizer and sharding behaviour: no backward pass, no optimizer step.
    add(o.chunked_loss.has_value(), "--chunked-loss");
    add(o.optimizer_in_backward.has_value(), "--optimizer-in-backward");
    add(o.activation_offload.has_value(), "--activation-offload");
    add(o.paged_optimizer.has_value(), "--paged-optimizer");
    add(o.persistent_grads.has_value(), "--persistent-grads");
    add(o.foreach_optimizer.has_value(), "--foreach-optimizer");
    add(o.fused_optimizer.has_value(), "--fused-optimizer");
    add(o.clip_grad_norm.has_value(), "--clip-grad-norm");
    add(o.fp8_head.has_value(), "--fp8-head");
    add(o.fp32_grads.has_value(), "--fp32-grads");
    add(o.fp32_reduce.has_value(), "--fp32-reduce");
    add(o.defer_grad_sync.has_value(), "--defer-grad-sync");
    add(o.loss_parallel.has_value(), "--loss-parallel");
    add(o.zero3_live_params.has_value(), "--zero3-live-params");
    add(o.gather_copy_out.has_value(), "--gather-copy-out");
    add(o.shard_group.has_value(), "--shard-group");
    add(o.no_overlap_grad_reduce, "--no-overlap-grad-reduce");
    if (!ignored.empty())
      q.ignored_inputs = Query::Ignored{"infer", ignored, "training inputs; inference reads --prompt, --generate and --engine"};
  } else if (w.task != Task::kLora && w.task != Task::kQlora) {
    add(o.lora_rank != defaults.lora_rank, "--lora-rank");
    add(o.lora_targets != defaults.lora_targets, "--lora-targets");
  }
  if (w.task != Task::kInfer) {
    add(o.prompt_given, "--prompt");
    add(o.generate_given, "--generate");
    add(o.kv_cache.has_value(), "--kv-cache");
    add(o.gpu_layers.has_value(), "--gpu-layers");
    add(o.host_memory_gbps.has_value(), "--host-memory-gbps");
    add(o.host_tflops.has_value(), "--host-tflops");
    add(o.cuda_graphs.has_value(), "--cuda-graphs");
    add(o.overlap_scheduling.has_value(), "--overlap-scheduling");
    add(o.quantized_head.has_value(), "--quantized-head");
    add(o.quantized_embedding.has_value(), "--quantized-embedding");
    add(o.embedding_on_host.has_value(), "--embedding-on-host");
    add(o.custom_allreduce.has_value(), "--custom-allreduce");
    if (!ignored.empty())
      q.ignored_inputs = Query::Ignored{o.task, ignored, w.task == Task::kLora || w.task == Task::kQlora
                                                     ? "inference inputs; training reads --seq and --framework"
                                                     : "inference and LoRA inputs; training reads --seq and --framework"};
  }
  check_range("--prompt", o.prompt, 0, 100'000'000);
  check_range("--generate", o.generate, 0, 100'000'000);
  w.prompt = o.prompt;
  w.generate = o.generate;
  if (w.task == Task::kInfer && q.model.is_transformer() && !q.model.generates()) {
    // An encoder reads its input in one forward pass: nothing to generate. Its input defaults to its whole context
    // when that is shorter than the default prompt (a ViT's 197 patches).
    if (o.generate_given && o.generate > 0)
      bad("--generate", q.model.id + " is an encoder: one forward pass over its input, no tokens generated; leave "
                                     "--generate out (--prompt is the input's length)");
    w.generate = 0;
    if (!o.prompt_given && o.prompt == WorkloadSpec{}.prompt && q.model.max_sequence_length > 0)
      w.prompt = std::min<long long>(w.prompt, q.model.max_sequence_length);
  }
  if (w.task == Task::kInfer && w.prompt + w.generate == 0)
    bad("--prompt", q.model.generates() ? "prompt and generate cannot both be 0"
                                        : q.model.id + " is an encoder: its input needs at least 1 token");
  if (!w.lm_head && w.task == Task::kInfer && w.generate > 0)
    bad("--lm-head", "off leaves nothing to generate tokens with: give --generate 0 (a forward pass over the prompt)");
}

// The system: devices, nodes, network (the device's reference system unless given), headroom.
void resolve_system(const WorkloadSpec& o, long long count, Query& q) {
  System& s = q.input.system;
  s.count = static_cast<int>(count);
  check_range("--devices-per-node", o.devices_per_node, 1, 1'000'000);
  s.devices_per_node = static_cast<int>(o.devices_per_node);
  if (o.network_gbps && (!(*o.network_gbps > 0) || !std::isfinite(*o.network_gbps)))
    bad("--network-gbps", "must be a positive number");
  if (o.network_gbps) {
    s.network_bytes_per_s = *o.network_gbps * 1e9 / 8;
  } else {
    const ReferenceNetwork net = reference_network(*q.device);
    s.network_bytes_per_s = net.gbps * 1e9 / 8;
    s.network_assumed = fmt::format("{:g} Gb/s per device ({})", net.gbps, net.system);
  }
  // The host's memory and CPU, for inference layers left in host memory: given, or typical of the device's class.
  for (const auto& [flag, v] : {std::pair{"--host-memory-gbps", o.host_memory_gbps}, std::pair{"--host-tflops", o.host_tflops}})
    if (v && (!(*v > 0) || !std::isfinite(*v))) bad(flag, "must be a positive number");
  const HostRates typical = typical_host(*q.device);
  // A memory's peak is what its buyer knows (channels x transfer rate x 8 bytes); a CPU reads host_memory_efficiency of it.
  s.host_memory_bytes_per_s =
      o.host_memory_gbps ? *o.host_memory_gbps * 1e9 * assumptions().host_memory_efficiency : typical.memory_bytes_per_s;
  s.host_matrix_flops = o.host_tflops ? *o.host_tflops * 1e12 : typical.matrix_flops;
  q.host_memory_given = o.host_memory_gbps.has_value();
  q.host_tflops_given = o.host_tflops.has_value();
  if (!o.host_memory_gbps && !o.host_tflops) s.host_assumed = typical.words();
  else if (!o.host_memory_gbps) s.host_assumed = "memory: " + typical.memory_words;
  else if (!o.host_tflops) s.host_assumed = typical.cpu_words + ", a typical host's";
  if (!(o.headroom >= 0 && o.headroom <= 0.9)) bad("--headroom", "must be a fraction between 0 and 0.9 (0.05 keeps 5% free)");
  s.memory_headroom_fraction = o.headroom;
  s.memory_headroom_given = o.headroom_given;
  s.overlap_grad_reduce = !o.no_overlap_grad_reduce;
}

// The plan, and the search space when some layout fields are left free; the checks that tie them to the task
// and the model.
void resolve_plan(const WorkloadSpec& o, long long count, Query& q) {
  const Workload& w = q.input.workload;
  Plan& p = q.input.plan;
  if (o.batch) check_range("--batch", *o.batch, 1, 1'000'000);
  if (o.grad_accum) check_range("--grad-accum", *o.grad_accum, 1, 1'000'000);
  if (o.global_batch) check_range("--global-batch", *o.global_batch, 1, 1'000'000'000);
  // A degree over the devices there are: said against the count (--count, or the count a search tried).
  auto degree = [&](const char* flag, const std::optional<long long>& v) {
    if (!v) return;
    check_range(flag, *v, 1, 1'000'000);
    if (*v > count)
      bad(flag, std::to_string(*v) + "-way needs at least " + std::to_string(*v) + " devices; the count is " + std::to_string(count));
  };
  degree("--tp", o.tp);
  degree("--cp", o.cp);
  degree("--pp", o.pp);
  degree("--dp", o.dp);
  degree("--ep", o.ep);
  if (o.zero) check_range("--zero", *o.zero, 0, 3);
  if (o.shard_group) check_range("--shard-group", *o.shard_group, 1, 1'000'000);
  if (o.shard_group && o.zero && *o.zero < 1) bad("--shard-group", "shards the ZeRO state: it needs --zero 1, 2 or 3");
  if (o.vp) check_range("--vp", *o.vp, 1, 1024);
  // Each of a device's vp chunks holds at least one layer (the search keeps a --vp only on pipelines it fits).
  if (o.vp && *o.vp > 1 && o.pp && *o.pp >= 2 && q.model.is_transformer() && !interleaving_fits(q.model, static_cast<int>(*o.pp), static_cast<int>(*o.vp)))
    bad("--vp", fmt::format("{} stages x {} chunks = {} chunks for {} layers: each chunk needs at least one layer", *o.pp,
                            *o.vp, *o.pp * *o.vp, q.model.total_layers()));
  p.vp = static_cast<int>(o.vp.value_or(1));
  p.micro_batch = o.batch.value_or(1);
  p.grad_accum = o.grad_accum.value_or(1);
  p.offload = parse_choice<Offload>("--offload", o.offload, parse_offload, "none, optimizer, params");
  p.sequence_parallel = !o.no_sequence_parallel;
  if (o.recompute) p.recompute = parse_choice<Recompute>("--recompute", *o.recompute, parse_recompute, "none, selective, full");
  if (o.recompute_layers) {
    check_range("--recompute-layers", *o.recompute_layers, 1, 1'000'000);
    if (o.recompute && p.recompute != Recompute::kFull)
      bad("--recompute-layers", "counts the layers of full recomputation: it needs --recompute full (or no --recompute)");
    if (!w.stack.partial_recompute)
      bad("--recompute-layers", w.stack.preset + " recomputes every layer or none (megatron and torchtitan recompute some)");
    p.recompute = Recompute::kFull;
    p.recompute_layers = static_cast<int>(*o.recompute_layers);
  }
  if (w.task == Task::kInfer && (o.zero || o.recompute || o.recompute_layers || o.grad_accum || (o.cp && *o.cp > 1)))
    bad(o.zero ? "--zero" : o.recompute ? "--recompute" : o.recompute_layers ? "--recompute-layers" : o.grad_accum ? "--grad-accum" : "--cp",
        "applies to training tasks, not --task infer");
  if (!q.model.is_transformer() && (w.task == Task::kLora || w.task == Task::kQlora))
    bad("--task", "LoRA adapts a transformer's linear layers; " + q.model.id + " is a generic network (use --task finetune)");
  if (w.task == Task::kInfer && o.offload != "none") bad("--offload", "applies to training tasks, not --task infer");
  check_layout_against_model(q.model, o);

  if (o.ep && *o.ep > 1) {
    // Inference prices a MoE's experts with the tensor-parallel split of every layer; expert parallelism is a
    // training layout here (carved out of the data-parallel ranks, which inference uses as independent replicas).
    if (w.task == Task::kInfer)
      bad("--ep", "expert parallelism is priced for training; inference splits a mixture-of-experts model with --tp / --pp");
    if (!q.model.moe) bad("--ep", "expert parallelism splits a mixture-of-experts model's experts; " + q.model.id + " has none");
    if (q.model.moe->experts % *o.ep != 0)
      bad("--ep", std::to_string(*o.ep) + "-way expert parallelism does not divide the " +
                      std::to_string(q.model.moe->experts) + " experts of " + q.model.id);
  }
  if (o.cp) {
    try {
      check_context_parallel(q.model, w, static_cast<int>(*o.cp));
    } catch (const InputError& e) {
      bad("--cp", e.detail());
    }
  }
  // Which layout fields are fixed? With one device, everything is; otherwise search what was not given.
  const bool layout_given = o.tp || o.pp || o.dp;
  const bool single_fixed = count == 1 && !(o.search_single_device && w.task != Task::kInfer && !o.recompute);
  if (single_fixed || (o.tp && o.pp && o.dp) || (layout_given && o.batch && (w.task == Task::kInfer || o.zero))) {
    p.tp = static_cast<int>(o.tp.value_or(1));
    p.cp = static_cast<int>(o.cp.value_or(1));
    p.pp = static_cast<int>(o.pp.value_or(1));
    p.dp = static_cast<int>(o.dp.value_or(count / (static_cast<long long>(p.tp) * p.cp * p.pp)));
    if (count > 1 && !(o.tp && o.pp && o.dp) && static_cast<long long>(p.tp) * p.cp * p.pp * p.dp != count)
      bad("--count", (p.cp > 1 ? "tp x cp x pp" : "tp x pp") + std::string(" does not divide --count ") + std::to_string(count));
    p.zero = static_cast<int>(o.zero.value_or(0));
    p.shard_group = static_cast<int>(o.shard_group.value_or(0));
    p.ep = static_cast<int>(o.ep.value_or(1));
    if (w.task == Task::kInfer) {
      p.grad_accum = 1;
    }
  } else {
    q.search = true;
    q.space.tp = o.tp ? std::optional<int>(static_cast<int>(*o.tp)) : std::nullopt;
    q.space.cp = o.cp ? std::optional<int>(static_cast<int>(*o.cp)) : std::nullopt;
    q.space.pp = o.pp ? std::optional<int>(static_cast<int>(*o.pp)) : std::nullopt;
    q.space.dp = o.dp ? std::optional<int>(static_cast<int>(*o.dp)) : std::nullopt;
    q.space.ep = o.ep ? std::optional<int>(static_cast<int>(*o.ep)) : std::nullopt;
    q.space.zero = o.zero ? std::optional<int>(static_cast<int>(*o.zero)) : std::nullopt;
    q.space.shard_group = o.shard_group ? std::optional<int>(static_cast<int>(*o.shard_group)) : std::nullopt;
    if (o.recompute || o.recompute_layers) q.space.recompute = p.recompute;
    if (o.recompute_layers) q.space.recompute_layers = p.recompute_layers;
    if (o.vp) q.space.vp = p.vp;
    // Search only what the user left free: a given micro-batch or accumulation is kept as given.
    if (w.task == Task::kInfer || o.batch) q.space.micro_batch = p.micro_batch;
    if (w.task != Task::kInfer && o.grad_accum) q.space.grad_accum = p.grad_accum;
    if (w.task != Task::kInfer && !o.global_batch && (o.batch || o.grad_accum)) {
      // The global batch follows from them: micro-batch x accumulation x dp of each layout.
      q.space.micro_batch = p.micro_batch;
      q.space.global_batch_fixed = false;
    }
    // Default (nothing given): micro-batch 1, no accumulation, one sequence per device; training over several devices
    // takes the global batch recommend compares devices at (about a million tokens a step), rounded to a multiple of
    // the count, so that estimate and recommend answer one question alike.
    q.space.global_batch = o.global_batch.value_or(p.micro_batch * p.grad_accum * count);
    if (w.task != Task::kInfer && count > 1 && !o.global_batch && !o.batch && !o.grad_accum) {
      // Where that batch does not split over the count (3, 6, 12 devices), one sequence per device as before: a
      // rounded batch would leave no power-of-two micro-batch and price an accumulation no one runs.
      const long long g = default_global_batch(q.model, o.task, w.seq);
      if (g % count == 0) {
        q.space.global_batch = g;
        q.global_batch_assumed = true;
      }
    }
    if (w.task != Task::kInfer && o.global_batch) check_batch_arithmetic(o, count, q.space);
  }
  if (o.global_batch && !q.search && w.task != Task::kInfer) {
    if (o.grad_accum && o.batch && p.micro_batch * p.grad_accum * p.dp != *o.global_batch)
      bad("--global-batch", std::to_string(*o.global_batch) + " != --batch " + std::to_string(p.micro_batch) +
                                " x --grad-accum " + std::to_string(p.grad_accum) + " x dp " + std::to_string(p.dp) + " = " +
                                std::to_string(p.micro_batch * p.grad_accum * p.dp) + "; give two of the three");
    if (o.grad_accum && !o.batch) {
      // The accumulation given, the micro-batch follows (as the layout search derives it): never replaced.
      if (*o.global_batch % (p.grad_accum * p.dp) != 0)
        bad("--global-batch", "is not a multiple of grad-accum x dp = " + std::to_string(p.grad_accum * p.dp));
      p.micro_batch = *o.global_batch / (p.grad_accum * p.dp);
    } else {
      if (*o.global_batch % (p.micro_batch * p.dp) != 0)
        bad("--global-batch", "is not a multiple of batch x dp = " + std::to_string(p.micro_batch * p.dp));
      p.grad_accum = *o.global_batch / (p.micro_batch * p.dp);
    }
  }
}

// The calibration profile, read once per file (io::load_profile_cached). A profile measures one device: asked for
// by name it applies with a warning (estimate.cpp); evaluating the catalog (recommend, serve over the devices) it
// applies only to the device it was measured on.
void resolve_profile(const WorkloadSpec& o, ProfileScope scope, Query& q) {
  if (!o.profile) return;
  q.profile = io::load_profile_cached(*o.profile);
  // A CPU's curves describe no accelerator: 30x slower GEMMs on an H100 are not an estimate of it.
  const bool gpu_stack = q.device->has_software("cuda") || q.device->has_software("rocm");
  if (q.profile->backend == "cpu" && gpu_stack && scope == ProfileScope::kNamedDevice)
    throw InputError({}, "--profile", *o.profile + " was measured on the CPU (" + q.profile->device_name + "): it does not describe " +
                                          q.device->id + "; calibrate on that device (hwplan calibrate --backend cuda) or drop --profile");
  // Over the catalog a profile applies to the device it measured only: one that matches no catalog device to none.
  if (scope == ProfileScope::kMeasuredDeviceOnly && q.profile->catalog_id != q.device->id) {
    q.profile.reset();
    q.profile_skipped = true;
  }
}

}  // namespace

long long default_sequence_length(const Model& model, const WorkloadSpec& w) {
  return w.seq.value_or(model.is_transformer() ? std::min<long long>(model.max_sequence_length, 2048) : 1);
}

Query resolve_query(const Model& model, const Device& device, const WorkloadSpec& o, long long count, ProfileScope scope) {
  Query q;
  q.model = model;
  q.device = &device;
  check_range("--count", count, 1, 10'000'000);
  // A standalone device (a phone, a laptop, a USB stick) has no link to split a model over or to reduce gradients
  // across; several of them only serve as independent inference replicas, each with its own copy (as serve and
  // recommend --task serve count them).
  WorkloadSpec replicas_spec;
  const WorkloadSpec* spec = &o;
  if (count > 1 && device.host_link.standalone()) {
    const bool replicas = o.task == "infer" && o.tp.value_or(1) == 1 && o.pp.value_or(1) == 1 && o.dp.value_or(count) == count &&
                          o.cp.value_or(1) == 1 && o.ep.value_or(1) == 1;
    if (!replicas)
      bad("--count", device.name + " is a standalone " + device.host_link.type +
                         " device: there is no link to split one model over several (inference on independent replicas: "
                         "--task infer --dp " + std::to_string(count) + ")");
    replicas_spec = o;
    replicas_spec.tp = 1;
    replicas_spec.pp = 1;
    replicas_spec.dp = count;
    spec = &replicas_spec;
  }

  resolve_workload(*spec, q);
  resolve_system(*spec, count, q);
  resolve_plan(*spec, count, q);
  resolve_profile(*spec, scope, q);
  q.input.model = &q.model;
  q.input.device = q.device;
  q.input.profile = q.profile.get();
  if (!q.search) validate_plan(q.input);
  return q;
}

namespace {
// The host's figures time only layers its CPU computes (llamacpp with layers left in host memory): given elsewhere,
// they change nothing, which is said.
void add_inert_host_warnings(const Query& q, Estimate& e) {
  if (e.training || (e.infer.offload_on_host && e.infer.offload_seconds_per_token > 0)) return;
  for (const auto& [flag, given] : {std::pair{"host-memory-gbps", q.host_memory_given}, std::pair{"host-tflops", q.host_tflops_given}})
    if (given)
      e.warnings.push_back(std::string("no effect here: --") + flag + " (no layer runs on the host's CPU: " +
                           (e.infer.offload_host_layers > 0 ? q.input.workload.stack.preset + " streams its offloaded layers to the device"
                                                            : std::string("every layer is on the device")) +
                           ")");
}

// ZeRO-3 switches given to a plan without ZeRO-3 change nothing, where the plan's stage is the user's (a plan given
// whole, or a --zero fixed): where the search chose the stage, the switch may have steered it off ZeRO-3.
void add_inert_zero3_warnings(const Query& q, Estimate& e) {
  if (e.plan.zero >= 3 || (q.search && !q.space.zero)) return;
  const Stack& stack = q.input.workload.stack;
  if (stack.overrides("gather-copy-out"))
    e.warnings.push_back("no effect here: --gather-copy-out (no ZeRO-3 / full sharding: nothing is gathered)");
  if (stack.overrides("zero3-live-params")) e.warnings.push_back("no effect here: --zero3-live-params (no ZeRO-3 / full sharding in the plan)");
}
}  // namespace

namespace {
// --gpu-layers auto: the most layers of the model the devices hold with the run still fitting (as llama.cpp users pick
// -ngl, and ollama does by itself): `fits(n)` says whether n layers on the device fit. Searched up to every layer with
// the output layer in host memory (n = layers, which llamacpp places apart from layers + 1); the whole model is known
// not to fit. -1 when not even 0 layers fit.
long long most_layers(long long total, const std::function<bool(long long)>& fits) {
  long long lo = -1, hi = total + 1;
  while (hi - lo > 1) {
    const long long mid = lo + (hi - lo) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

std::string placed_note(long long n, long long total, const Plan& plan) {
  const int spread = plan.tp * plan.pp;
  const std::string devices = spread > 1 ? std::to_string(spread) + " devices" : std::string("device");
  if (n < 0)
    return "--gpu-layers auto: not even 0 layers fit: what stays on the " + devices +
           " (the KV cache, activations, the runtime) is too large by itself";
  if (n > total) return "--gpu-layers auto: all " + std::to_string(total) + " layers fit on the " + devices;
  if (n == total)
    return "--gpu-layers auto: all " + std::to_string(total) + " layers fit on the " + devices +
           ", not the output layer (llama.cpp's -ngl " + std::to_string(total) + ")";
  return "--gpu-layers auto: " + std::to_string(n) + " of " + std::to_string(total) + " layers fit on the " + devices +
         " (the most that do)";
}
}  // namespace

Outcome run_query(Query& q) {
  Outcome out;
  q.input.model = &q.model;
  q.input.profile = q.profile.get();
  const long long total = q.model.total_layers();
  if (!q.search) {
    out.estimate = estimate(q.input);
    if (q.device_layers_auto) {
      long long n = total + 1;
      if (!out.estimate.fits) {
        EstimateInput in = q.input;
        n = most_layers(total, [&](long long k) {
          in.workload.device_layers = k;
          return estimate(in).fits;
        });
        q.input.workload.device_layers = std::max(0LL, n);
        out.estimate = estimate(q.input);
      }
      out.estimate.notes.push_back(placed_note(n, total, q.input.plan));
    }
    if (q.ignored_inputs) out.estimate.warnings.push_back(q.ignored_inputs->note("for --task " + q.ignored_inputs->task));
    add_inert_zero3_warnings(q, out.estimate);
    add_inert_host_warnings(q, out.estimate);
    if (!q.inert_device_layers.empty()) out.estimate.warnings.push_back(q.inert_device_layers);
    return out;
  }
  SearchResult r = search_layouts(q.input, q.space);
  if (q.device_layers_auto) {
    // Every layout at each count of layers: the most layers some layout fits, and that count's best layout.
    long long n = total + 1;
    if (!r.found) {
      EstimateInput in = q.input;
      n = most_layers(total, [&](long long k) {
        in.workload.device_layers = k;
        return search_layouts(in, q.space).found;
      });
      q.input.workload.device_layers = std::max(0LL, n);
      r = search_layouts(q.input, q.space);
    }
    if (r.layouts_evaluated > 0) r.estimate.notes.push_back(placed_note(n, total, r.best));
  }
  out.found = r.found;
  out.estimate = r.estimate;
  if (q.global_batch_assumed)
    out.estimate.warnings.push_back(
        q.model.is_transformer()
            ? fmt::format("global batch {} sequences assumed ({} tokens a step, the size recommend compares devices at): "
                          "set --global-batch",
                          q.space.global_batch, human_count(static_cast<double>(q.space.global_batch) * q.input.workload.seq))
            : fmt::format("global batch {} samples assumed (the size recommend compares devices at): set --global-batch",
                          q.space.global_batch));
  if (q.ignored_inputs) out.estimate.warnings.push_back(q.ignored_inputs->note("for --task " + q.ignored_inputs->task));
  if (r.found || r.layouts_evaluated > 0) q.input.plan = r.best;
  add_inert_zero3_warnings(q, out.estimate);
  add_inert_host_warnings(q, out.estimate);
  if (!q.inert_device_layers.empty()) out.estimate.warnings.push_back(q.inert_device_layers);
  out.search = std::move(r);
  return out;
}

bool no_layout(const Outcome& o) { return o.search && o.search->layouts_evaluated == 0; }

InputError no_layout_error(const Query& q, const std::string& key) {
  const SearchSpace& sp = q.space;
  const Workload& w = q.input.workload;
  std::string why;
  auto add = [&](const std::string& s) { why += (why.empty() ? ": " : "; ") + s; };
  if (sp.tp || sp.pp || sp.dp || sp.ep || sp.cp) add("the --tp/--pp/--dp/--ep/--cp given leave none");
  if (sp.ep && *sp.ep > 1) add("--ep " + std::to_string(*sp.ep) + " must divide the data-parallel ranks");
  if (sp.shard_group) add("--shard-group " + std::to_string(*sp.shard_group) + " must divide the data-parallel ranks");
  if (sp.vp && *sp.vp > 1)
    add("--vp " + std::to_string(*sp.vp) + " needs pipelines of at least 2 stages with a layer for each of its chunks");
  if (w.task != Task::kInfer && sp.global_batch_fixed)
    add("the global batch of " + std::to_string(sp.global_batch) + " sequences must split evenly over the data-parallel ranks" +
        (sp.micro_batch ? " in micro-batches of " + std::to_string(*sp.micro_batch) : ""));
  if (w.task != Task::kInfer && (!w.stack.tensor_parallel || !w.stack.pipeline_parallel))
    add(w.stack.preset + " builds no " + (!w.stack.tensor_parallel && !w.stack.pipeline_parallel ? "tensor- or pipeline-parallel"
                                          : !w.stack.tensor_parallel                            ? "tensor-parallel"
                                                                                                 : "pipeline-parallel") +
        " layouts (megatron and torchtitan do: --framework)");
  return InputError({}, key, "no parallel layout of " + std::to_string(q.input.system.count) + " x " + q.device->id + " for " +
                                 q.model.id + why);
}

}  // namespace hwplan
