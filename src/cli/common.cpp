#include "cli/common.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "io/atomic_file.hpp"
#include "io/profile_io.hpp"

namespace hwplan::cli {

void add_global_options(CLI::App& app, GlobalOptions& g) {
  app.add_option("--catalog", g.catalog_dirs, "Extra catalog directory or file (adds/overrides devices); also HWPLAN_CATALOG")
      ->type_name("DIR");
  app.add_option("--models", g.model_dirs, "Extra model directory or file (adds/overrides models); also HWPLAN_MODELS")
      ->type_name("DIR");
  app.add_option("--prices", g.price_files,
                 "YAML of your own price quotes (device id -> street_usd/used_usd/cloud_usd_per_hour ... with dates); "
                 "overrides the catalog; also HWPLAN_PRICES")
      ->type_name("FILE");
  app.add_option("--assumptions", g.assumption_files,
                 "YAML of physics constants to override (name: value; `hwplan assumptions` lists them); also HWPLAN_ASSUMPTIONS")
      ->type_name("FILE");
}

void add_format_option(CLI::App& app, GlobalOptions& g, bool html) {
  std::vector<std::string> formats = {"table", "json", "csv", "markdown"};
  if (html) formats.push_back("html");
  app.add_option("--format", g.format, html ? "Output format (html: a self-contained report, with -o FILE.html)" : "Output format")
      ->check(CLI::IsMember(formats))
      ->capture_default_str();
  app.add_option("-o,--output", g.output, "Write the output to FILE (atomically) instead of stdout")->type_name("FILE");
  group_options(app, "Output", {"--format", "--output"});
}

void group_options(CLI::App& app, const std::string& heading, std::initializer_list<const char*> names) {
  for (const char* name : names) app.get_option(name)->group(heading);
}

std::string expand_count_suffix(std::string value) {
  char* end = nullptr;
  std::strtod(value.c_str(), &end);
  if (end && *end == '\0' && !value.empty()) return value;  // a plain number
  if (auto v = parse_param_count(value)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", *v);
    return buf;
  }
  return value;  // CLI11 reports it as not a number
}

io::Registry make_registry(const GlobalOptions& g) {
  io::RegistryOptions options;
  io::add_environment(options);
  options.catalog_dirs.insert(options.catalog_dirs.end(), g.catalog_dirs.begin(), g.catalog_dirs.end());
  options.model_dirs.insert(options.model_dirs.end(), g.model_dirs.begin(), g.model_dirs.end());
  options.price_files.insert(options.price_files.end(), g.price_files.begin(), g.price_files.end());
  return io::Registry(options);
}

const io::Registry& registry_of(GlobalOptions& g) {
  if (!g.registry) g.registry = std::make_shared<const io::Registry>(make_registry(g));
  return *g.registry;
}

report::HtmlContext html_context(const GlobalOptions& g) {
  return {g.command_line.empty() ? std::string("hwplan") : g.command_line, HWPLAN_VERSION};
}

report::Format format_of(const GlobalOptions& g) { return report::parse_format(g.format).value_or(report::Format::kTable); }

void emit(const GlobalOptions& g, const std::string& text) {
  if (g.output.empty()) {
    std::cout << text;
    std::cout.flush();
  } else {
    io::write_file_atomically(g.output, text);
  }
}

namespace {

// --fused-kernels on|off style switches (a plain flag could not say "off" to a preset that turns it on).
void add_switch(CLI::App& app, const std::string& name, std::optional<bool>& into, const std::string& help,
                const std::string& default_text = "the preset's") {
  app.add_option_function<std::string>(
         name,
         [&into, name](const std::string& v) {
           auto b = parse_on_off(v);
           if (!b) throw InputError({}, name, "'" + v + "' is not one of: on, off");
           into = *b;
         },
         help + " (on | off; default: " + default_text + ")")
      ->type_name("on|off");
}

void add_stack_options(CLI::App& app, WorkloadOptions& w) {
  app.add_option("--framework", w.framework,
                 "Training stack preset: hf-trainer | deepspeed | fsdp | torchtune | torchtitan | megatron | litgpt");
  app.add_option("--engine", w.engine, "Inference engine preset: hf | vllm | sglang | trtllm | llamacpp | exllama | mlc (tensorrt: trtllm's preset, for a CNN through TensorRT; tflite | coreml | qnn (npu-runtime: the device's own): an NPU's compiled-graph runtime, the default where the catalog's software for the device leads with it: the Coral Edge TPU, Apple's Neural Engines, Qualcomm's NPU)");
  app.add_option("--master-weights", w.master_weights, "fp32 master weights in mixed precision, or none (pure bf16)");
  add_switch(app, "--fused-kernels", w.fused_kernels, "Fused norm / activation / RoPE / loss kernels");
  add_switch(app, "--cuda-graphs", w.cuda_graphs, "Decode steps replayed as CUDA graphs (no per-kernel host cost)");
  add_switch(app, "--chunked-loss", w.chunked_loss, "Cross-entropy over vocabulary chunks");
  add_switch(app, "--optimizer-in-backward", w.optimizer_in_backward, "Optimizer step fused into the backward pass");
  add_switch(app, "--activation-offload", w.activation_offload, "Activations offloaded to host memory");
  add_switch(app, "--paged-optimizer", w.paged_optimizer, "Optimizer state in CUDA managed (paged) memory");
  add_switch(app, "--native-attention", w.native_attention,
             "The GPU architecture's own attention kernels (cuDNN, FlashAttention-3) instead of FlashAttention-2-class ones");
  add_switch(app, "--autocast", w.autocast,
             "Mixed precision as torch.amp autocast over fp32 parameters (fp32 gradients, residual stream and norms)");
  add_switch(app, "--persistent-grads", w.persistent_grads,
             "Gradient buffers kept across steps (Megatron, DeepSpeed); off: freed between steps (zero_grad set_to_none)");
  add_switch(app, "--overlap-scheduling", w.overlap_scheduling,
             "Serving engine prepares step n+1 while the GPU runs step n (vLLM async scheduling, SGLang, TensorRT-LLM)");
  add_switch(app, "--overlap-p2p", w.overlap_p2p,
             "Interleaved pipeline: sends and receives overlapped with the next chunk's compute (Megatron-LM's default "
             "since 2023, torchtitan); off: each transfer waits");
  add_switch(app, "--quantized-head", w.quantized_head,
             "Quantized weights (--weights int8|int4|nf4|fp8): the quantization covers the output projection too (on for "
             "llamacpp, mlc, exllama, the NPU runtimes and, with no --engine, edge devices; gpt-fast, torchao); off: it stays in the compute "
             "format (GPTQ, AWQ, bitsandbytes, FP8 checkpoints). A checkpoint read from its files prices its own");
  add_switch(app, "--quantized-embedding", w.quantized_embedding,
             "Quantized weights: the token embedding table is quantized too (on for llamacpp, mlc, the NPU runtimes and, "
             "with no --engine, edge devices); off: it stays in the compute format (gpt-fast, torchao, GPTQ, AWQ, bitsandbytes quantize "
             "Linear layers only). Memory only: a decode step reads one row of it");
  add_switch(app, "--custom-allreduce", w.custom_allreduce,
             "Inference with --tp inside an NVLink-class fabric: all-reduces as the engine's own one-kernel all-reduce, a "
             "few microseconds whatever the group size but a slow data path, or NCCL's where that is faster (on for "
             "vllm, sglang, trtllm; PyTorch's ENABLE_INTRA_NODE_COMM); off: NCCL's, whose latency grows with the group");
  add_switch(app, "--gather-copy-out", w.gather_copy_out,
             "ZeRO-3 as PyTorch's FSDP2 (fully_shard): each all-gather lands in a flat buffer that a copy kernel splits "
             "into the layer's parameters on the compute stream, a read and a write of them per gather (on for torchtune "
             "and torchtitan); off: FSDP1's flat parameters and DeepSpeed gather in place");
  add_switch(app, "--embedding-on-host", w.embedding_on_host,
             "Inference: the token embedding table is kept in host memory, off the device (on for llamacpp and exllama); "
             "a tied table stays on the device as the output projection; unified-memory devices hold it either way");
  add_switch(app, "--fp32-grads", w.fp32_grads,
             "Gradients kept and reduced in fp32 under 16-bit parameters (Megatron's main_grad buffer for bf16, torchtitan's "
             "mixed_precision_reduce float32); off: in 16 bits");
  add_switch(app, "--fp32-reduce", w.fp32_reduce,
             "Gradients reduced in fp32 but kept in the parameters' 16 bits (FSDP2's reduce_dtype float32 over bf16 "
             "parameters): 4 bytes a parameter on the data-parallel link; off: reduced in their own type");
  add_switch(app, "--defer-grad-sync", w.defer_grad_sync,
             "With gradient accumulation under --zero 2/3: the micro-batches before the last skip the reduction and "
             "accumulate unsharded gradients (FSDP no_sync; on for hf-trainer and litgpt), held whole on each rank "
             "and reduce-scattered once a step; off: a reduce-scatter every micro-batch (fsdp, deepspeed, torchtitan, torchtune)");
  add_switch(app, "--loss-parallel", w.loss_parallel,
             "Training with --tp: the cross-entropy on each rank's vocabulary shard of the logits (Megatron, torchtitan); "
             "off: the logits gathered whole on every rank and the loss computed on each (PyTorch ColwiseParallel with "
             "output_layouts=Replicate(): on for megatron and torchtitan, off for fsdp and torchtune)");
  add_switch(app, "--fp8-head", w.fp8_head,
             "With --precision fp8, the vocabulary projection in fp8 too (torchao float8 converts every Linear); off: in 16 bits (Megatron's output layer)");
  add_switch(app, "--foreach-optimizer", w.foreach_optimizer,
             "Optimizer step as multi-tensor kernels (torch.optim foreach, fused Adam); off: a loop over the parameter tensors");
  add_switch(app, "--fused-optimizer", w.fused_optimizer,
             "Optimizer update as one fused pass (torch fused=True, apex / DeepSpeed / Transformer Engine FusedAdam); off: "
             "torch.optim's foreach or for-loop elementwise passes (AdamW: eight over whole tensors)");
  add_switch(app, "--clip-grad-norm", w.clip_grad_norm,
             "Gradient clipping by global norm every step (a read of the gradients for the norm, and a scaling pass)");
  app.add_option("--zero3-live-params", w.zero3_live_params,
                 "ZeRO-3: full parameters kept gathered on each device (DeepSpeed's stage3_max_live_parameters, 1e9 in the "
                 "deepspeed preset); 0: the layer being computed and the prefetched next one (FSDP)");
  app.add_option("--host-kernel-us", w.host_kernel_us,
                 "Host time to issue one kernel, us (eager PyTorch: 27 by default, 0.65 of it on a consumer card's desktop host; 15-25 measured on H200 hosts)");
  app.add_option("--memory-metric", w.memory_metric, "Which peak to report: allocated | reserved | device (nvidia-smi)");
  app.add_option("--memory-format", w.memory_format,
                 "A CNN's activation layout: nchw (PyTorch's default; tensor-core convolutions transpose in and out) | nhwc "
                 "(channels_last); default: nchw in eager stacks, nhwc in fused engines");
}

}  // namespace

void add_workload_options(CLI::App& app, WorkloadOptions& w, bool device_required) {
  app.add_option("--model", w.model, "Model: zoo id (hwplan models list), a YAML path, or a size such as 7B")
      ->required();
  auto* device = app.add_option("--device", w.device, "Device: catalog id, alias or driver name (case-insensitive)");
  if (device_required) device->required();
  app.add_option("--count", w.count, "Number of devices")->capture_default_str();
  app.add_option("--task", w.task, "train | finetune | lora | qlora | infer")->capture_default_str();
  app.add_option("--precision", w.precision, "Compute precision: fp32 | tf32 | fp16 | bf16 | fp8")->capture_default_str();
  app.add_option("--weights", w.weights, "Inference weight format: fp32 | fp16 | bf16 | fp8 | int8 | int4 | nf4 | q4_0 | q4_k_m");
  app.add_option("--batch", w.batch, "Sequences per device per micro-step (inference: concurrent sequences)");
  app.add_option("--seq", w.seq, "Sequence length in tokens (training)");
  app.add_option("--sample-tokens", w.sample_tokens,
                 "Training on unpacked samples of these lengths (uniform:MIN:MAX | lognormal:MEAN:SIGMA | file:PATH), "
                 "cut at --seq: each micro-batch is padded to its longest; tokens/s counts the samples' tokens")
      ->type_name("DIST");
  app.add_option("--grad-accum", w.grad_accum, "Micro-steps per optimizer step");
  app.add_option("--global-batch", w.global_batch, "Sequences per optimizer step (for the layout search)");
  app.add_option("--tokens", w.tokens, "Total tokens of the job (gives total time): training tokens; with --task infer its output tokens (an encoder's input tokens), e.g. 2e10 or 20B")
      ->transform(expand_count_suffix, "", "");
  app.add_option("--tp", w.tp, "Tensor-parallel degree");
  app.add_option("--pp", w.pp, "Pipeline-parallel degree");
  app.add_option("--dp", w.dp, "Data-parallel degree");
  app.add_option("--ep", w.ep, "Expert-parallel degree (MoE)");
  app.add_option("--vp", w.vp, "Virtual pipeline stages per device (interleaved schedule)");
  app.add_option("--cp", w.cp,
                 "Context-parallel degree: each sequence split over this many devices (ring attention; megatron, torchtitan)");
  app.add_option("--zero", w.zero, "ZeRO stage 0-3 (3 = FSDP full sharding)");
  app.add_option("--shard-group", w.shard_group,
                 "ZeRO/FSDP shards span this many data-parallel ranks and are replicated across the rest "
                 "(FSDP HYBRID_SHARD, ZeRO++ hpZ; e.g. 8 = shard inside a node); default: all of dp");
  app.add_option("--recompute", w.recompute, "Activation recomputation: none | selective | full");
  app.add_option("--recompute-layers", w.recompute_layers,
                 "With --recompute full: layers per device that recompute, the rest keep their activations (megatron, torchtitan)");
  app.add_option("--offload", w.offload, "none | optimizer | params")->capture_default_str();
  app.add_option("--attention", w.attention, "eager | flash")->capture_default_str();
  app.add_option("--optimizer", w.optimizer, "adamw | sgd | adafactor | adam8bit")->capture_default_str();
  app.add_option("--lora-rank", w.lora_rank, "LoRA rank")->capture_default_str();
  app.add_option("--lora-targets", w.lora_targets, "all-linear | qv")->capture_default_str();
  add_switch(app, "--lm-head", w.lm_head,
             "The vocabulary projection and its loss; off: a task head of a few outputs (SQuAD spans, classification)",
             "on");
  app.add_option("--prompt", w.prompt, "Inference prompt length")
      ->capture_default_str()
      ->each([&w](const std::string&) { w.prompt_given = true; });
  app.add_option("--generate", w.generate, "Inference output tokens")
      ->capture_default_str()
      ->each([&w](const std::string&) { w.generate_given = true; });
  app.add_option("--kv-cache", w.kv_cache, "KV cache format: fp16 | bf16 | fp8 | int8");
  app.add_option("--gpu-layers", w.gpu_layers,
                 "Inference: transformer layers the device holds, counted as llama.cpp's -ngl (the output layer is one more: "
                 "layers + 1 or above is all), or auto (as many as fit); the rest stay in host memory: llamacpp runs them "
                 "on the host's CPU, other engines stream their weights to the device every pass")
      ->type_name("N|auto");
  app.add_option("--host-memory-gbps", w.host_memory_gbps,
                 "The host memory's peak, GB/s (channels x MT/s x 8 bytes: 89.6 for dual-channel DDR5-5600), for layers "
                 "in host memory; its CPU reads 0.68 of it (default: dual-channel DDR5-5600 for consumer cards, one "
                 "8-channel DDR5-4800 server socket otherwise)");
  app.add_option("--host-tflops", w.host_tflops,
                 "The host CPU's matrix rate on quantized weights, TFLOP/s, for layers in host memory");
  app.add_option("--profile", w.profile, "Calibration profile (hwplan calibrate -o FILE)");
  app.add_option("--devices-per-node", w.devices_per_node, "Devices per node (scale-up domain)")
      ->capture_default_str()
      ->each([&w](const std::string&) { w.devices_per_node_given = true; });
  app.add_option("--network-gbps", w.network_gbps,
                 "Inter-node network per device, Gb/s (default: the device's reference system, e.g. DGX A100 200, DGX H100 400)");
  app.add_option("--headroom", w.headroom,
                 "Fraction of device memory every plan leaves free (allocator variance); 0 plans to the last byte. serve: the "
                 "engine's memory fraction decides, and a --headroom given caps it")
      ->capture_default_str()
      ->each([&w](const std::string&) { w.headroom_given = true; });
  add_stack_options(app, w);
  app.add_flag("--no-sequence-parallel", w.no_sequence_parallel, "Disable sequence parallelism with tp > 1");
  app.add_flag("--no-overlap-grad-reduce", w.no_overlap_grad_reduce,
               "The framework reduces gradients after backward instead of overlapping (Megatron-LM before 2023)");
  // The model, the system and the execution plan are separate inputs (STYLE.md); --help shows them apart.
  group_options(app, "Model and workload",
                {"--model", "--task", "--precision", "--weights", "--batch", "--seq", "--sample-tokens", "--grad-accum", "--global-batch",
                 "--tokens", "--optimizer", "--lora-rank", "--lora-targets", "--lm-head", "--prompt", "--generate", "--kv-cache"});
  group_options(app, "System", {"--device", "--count", "--devices-per-node", "--network-gbps", "--profile", "--headroom",
                                "--host-memory-gbps", "--host-tflops"});
  group_options(app, "Parallelism and memory savings",
                {"--tp", "--cp", "--pp", "--dp", "--ep", "--vp", "--zero", "--recompute", "--recompute-layers", "--offload", "--gpu-layers", "--no-sequence-parallel",
                 "--no-overlap-grad-reduce"});
  group_options(app, "Software stack",
                {"--attention", "--framework", "--engine", "--master-weights", "--fused-kernels", "--cuda-graphs",
                 "--chunked-loss", "--optimizer-in-backward", "--activation-offload", "--paged-optimizer", "--native-attention",
                 "--autocast", "--persistent-grads", "--fp32-grads", "--fp32-reduce", "--defer-grad-sync", "--loss-parallel", "--fp8-head", "--foreach-optimizer", "--fused-optimizer", "--clip-grad-norm", "--zero3-live-params", "--overlap-scheduling", "--overlap-p2p", "--host-kernel-us", "--memory-metric", "--memory-format"});
}

}  // namespace hwplan::cli
