#include "estimators/estimate.hpp"
#include "core/assumptions.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "estimators/inference.hpp"
#include "estimators/comm.hpp"
#include "estimators/stack.hpp"
#include "estimators/training.hpp"

namespace hwplan {
namespace {

// A rate to three significant figures at most, as the table shows it ("2.9", "18.6", "3337").
std::string three_figures(double x) {
  char buf[32];
  if (x >= 100) std::snprintf(buf, sizeof buf, "%.0f", x);
  else if (x >= 10) std::snprintf(buf, sizeof buf, "%.1f", x);
  else std::snprintf(buf, sizeof buf, "%.2g", x);
  return buf;
}

std::string pct(double x, int decimals = 0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f%%", decimals, 100 * x);
  return buf;
}

bool is_training(Task t) { return t != Task::kInfer; }

}  // namespace

void validate_plan(const EstimateInput& in) {
  const Model& m = *in.model;
  const Plan& p = in.plan;
  const Workload& w = in.workload;
  auto bad = [](const std::string& key, const std::string& msg) { throw InputError({}, key, msg); };
  if (p.tp < 1 || p.cp < 1 || p.pp < 1 || p.dp < 1) bad("tp", "parallel degrees must be at least 1");
  if (p.micro_batch < 1) bad("batch", "must be at least 1");
  if (p.grad_accum < 1) bad("grad-accum", "must be at least 1");
  if (w.seq < 1) bad("seq", "must be at least 1");
  if (p.zero < 0 || p.zero > 3) bad("zero", "must be 0, 1, 2 or 3");
  if (p.shard_group < 0) bad("shard-group", "must be at least 1");
  if (p.shard_group > 0 && p.zero < 1) bad("shard-group", "shards the ZeRO state: it needs --zero 1, 2 or 3");
  if (p.shard_group > 0 && p.replica_ranks() % p.shard_group != 0)
    bad("shard-group", std::to_string(p.shard_group) + " ranks per shard do not divide the " +
                           std::to_string(p.replica_ranks()) + (p.cp > 1 ? " data- and context-parallel ranks" : " data-parallel ranks"));
  if (static_cast<long long>(p.tp) * p.cp * p.pp * p.dp != in.system.count)
    bad("count", std::string(p.cp > 1 ? "tp x cp x pp x dp = " : "tp x pp x dp = ") +
                     std::to_string(static_cast<long long>(p.tp) * p.cp * p.pp * p.dp) + " does not equal --count " +
                     std::to_string(in.system.count));
  check_context_parallel(m, w, p.cp);
  if (p.recompute_layers < 0) bad("recompute-layers", "must be at least 1");
  if (p.recompute_layers > 0) {
    if (p.recompute != Recompute::kFull) bad("recompute-layers", "counts the layers of full recomputation (--recompute full)");
    if (!w.stack.partial_recompute)
      bad("recompute-layers", w.stack.preset + " recomputes every layer or none (megatron and torchtitan recompute some)");
    const long long stage = (m.total_layers() + p.pp - 1) / p.pp;
    if (m.is_transformer() && p.recompute_layers > stage)
      bad("recompute-layers", std::to_string(p.recompute_layers) + " layers is more than the " + std::to_string(stage) +
                                  " of a pipeline stage");
  }
  if (m.is_transformer()) {
    if (m.attention_heads % p.tp != 0)
      bad("tp", std::to_string(p.tp) + "-way tensor parallelism does not divide the " +
                    std::to_string(m.attention_heads) + " attention heads of " + m.id);
    if (p.pp > m.total_layers())
      bad("pp", std::to_string(p.pp) + " pipeline stages exceed the " + std::to_string(m.total_layers()) + " layers");
    // Interleaved pipelines give each device vp chunks of at least one layer (Megatron: layers divisible by pp x vp).
    if (p.vp > 1 && p.pp < 2) bad("vp", "virtual pipeline stages need --pp of at least 2");
    if (!interleaving_fits(m, p.pp, p.vp))
      bad("vp", std::to_string(p.pp) + " stages x " + std::to_string(p.vp) + " chunks = " + std::to_string(p.pp * p.vp) +
                    " chunks for " + std::to_string(m.total_layers()) + " layers: each chunk needs at least one layer");
    if (m.moe && p.ep > 1 && (m.moe->experts % p.ep != 0 || p.dp % p.ep != 0))
      bad("ep", "expert parallelism must divide both the experts and dp");
  } else if (p.tp > 1 || p.pp > 1) {
    bad("tp", "tensor and pipeline parallelism need a transformer model; " + m.id + " is a generic network");
  }
  if (w.task == Task::kInfer && p.zero > 0) bad("zero", "ZeRO applies to training only");
  if (!m.is_transformer() && (w.task == Task::kLora || w.task == Task::kQlora))
    bad("task", "LoRA adapts a transformer's linear layers; " + m.id + " is a generic network (use --task finetune)");
  if ((w.task == Task::kLora || w.task == Task::kQlora) && w.lora_rank < 1) bad("lora-rank", "must be at least 1");
}

void check_context_parallel(const Model& m, const Workload& w, int cp) {
  if (cp <= 1) return;
  auto bad = [](const std::string& msg) { throw InputError({}, "cp", msg); };
  // Ring attention as Megatron / Transformer Engine and torchtitan implement it: flash attention over chunks,
  // each sequence cut into 2 x cp chunks so that every rank gets an equal share of the causal scores.
  if (w.task == Task::kInfer) bad("context parallelism applies to training, not --task infer");
  if (!m.is_transformer()) bad("context parallelism splits a transformer's sequences; " + m.id + " is a generic network");
  if (w.attention != Attention::kFlash) bad("ring attention runs on flash attention kernels (--attention flash)");
  if (!w.stack.context_parallel) bad(w.stack.preset + " has no context parallelism (megatron and torchtitan do: --framework)");
  if (w.seq % (2 * cp) != 0)
    bad("the sequence of " + std::to_string(w.seq) + " tokens does not split into 2 x cp = " + std::to_string(2 * cp) +
        " equal chunks");
}

bool interleaving_fits(const Model& m, int pp, int vp) {
  return vp <= 1 || (pp >= 2 && static_cast<long long>(pp) * vp <= m.total_layers());
}

MemoryBreakdown estimate_memory(const EstimateInput& in, const ParameterCounts& params) {
  if (is_training(in.workload.task)) return training_memory(*in.model, params, *in.device, in.workload, in.plan);
  MemoryBreakdown m = inference_memory(*in.model, params, *in.device, in.workload, in.plan);
  // What the on-chip cache of a device without memory of its own cannot hold streams from the host.
  if (in.device->streams_parameters()) stream_parameters(m, in.system.usable_bytes(in.device->plan_memory_bytes()));
  return m;
}

std::string gpu_memory_share_note(const Device& d) {
  if (d.reported_memory_bytes && *d.reported_memory_bytes < d.memory_bytes &&
      !(d.gpu_memory_limit_bytes && *d.gpu_memory_limit_bytes <= *d.reported_memory_bytes))
    return d.name + " reports " + human_bytes(*d.reported_memory_bytes) + " of its " + human_bytes(d.memory_bytes) +
           " (nvidia-smi, ECC on as the board ships: GDDR memory keeps its check bits in-band): plans fit "
           "within that";
  if (!d.gpu_memory_limit_bytes || !(*d.gpu_memory_limit_bytes < d.memory_bytes)) return "";
  return d.name + " shares " + human_bytes(d.memory_bytes) + " with its CPU, and by default lets the GPU use " +
         human_bytes(*d.gpu_memory_limit_bytes) + " of it (macOS's Metal working-set limit): plans fit within that "
         "(sudo sysctl iogpu.wired_limit_mb raises it)";
}

const char* decode_bound(const InferenceTime& t) {
  // Layers left in host memory whose part of each step is the larger: the host's memory (its CPU computing them) or
  // the host link (their weights crossing it) sets the pace.
  if (t.offload_seconds_per_token > 0 && t.offload_seconds_per_token >= t.decode_gpu_seconds)
    return t.offload_decode_on_host ? "host-memory" : "host-link";
  if (t.decode_host_bound) return "host";
  // Parameters streamed over the host link every step, and as long as the step: the link sets the pace.
  if (t.streamed_seconds > 0 && t.streamed_seconds >= t.decode_gpu_seconds) return "host-link";
  // All-reduces (and sends) that take half the step or more: the link, not the memory, sets the pace.
  if (t.decode_gpu_seconds > 0 && t.decode_comm_seconds >= 0.5 * t.decode_gpu_seconds) return "communication";
  return t.decode_memory_bound ? "memory" : "compute";
}

Estimate estimate(const EstimateInput& in) {
  Estimate e;
  const Model& m = *in.model;
  const Device& d = *in.device;
  const Workload& w = in.workload;
  e.plan = in.plan;
  e.params = count_parameters(m);
  e.training = is_training(w.task);
  e.memory = estimate_memory(in, e.params);
  e.capacity_bytes = d.plan_memory_bytes();
  e.usable_bytes = in.system.usable_bytes(e.capacity_bytes);
  if (std::string share = gpu_memory_share_note(d); !share.empty()) e.notes.push_back(share);
  e.memory.page_out(e.usable_bytes);
  e.fits = e.memory.total() <= e.usable_bytes;

  // Offloaded state lives in the host's memory, shared by the devices of a node: checked against the memory a host
  // of this class typically has (a desktop or workstation board holds 128-192 GiB; a DGX-class server 1-2 TiB for 8
  // GPUs), as a warning: the host is not in the catalog.
  // On one memory (Apple silicon, Jetson) what is offloaded stays in it: counted in the fit and in its notes below.
  const double needed = e.memory.total() + (d.host_link.type == "soc" ? e.memory.host_bytes : 0.0);
  if (e.memory.host_bytes > 0 && d.host_link.type == "soc") {
    e.fits = needed <= e.usable_bytes;
    e.warnings.push_back(d.name + " shares one memory with its CPU: the " + human_bytes(e.memory.host_bytes) +
                         " offloaded stay in the same " + human_bytes(e.capacity_bytes) + " (offload saves nothing here)" +
                         (e.fits ? "" : ": it does not fit"));
  } else if (e.memory.host_bytes > 0) {
    const int devices_on_host = std::min(in.system.count, std::max(1, in.system.devices_per_node));
    const double need = e.memory.host_bytes * devices_on_host;
    const bool desktop = d.device_class == DeviceClass::kConsumer || d.device_class == DeviceClass::kWorkstation;
    const double typical = desktop ? 192.0 * kGiB : 2048.0 * kGiB;  // the top of each range
    e.host_memory_short = need > typical;
    if (e.host_memory_short)
      e.warnings.push_back("the host needs " + human_bytes(need) + " of memory for what is offloaded (" +
                           human_bytes(e.memory.host_bytes) + " per device x " + std::to_string(devices_on_host) +
                           "): more than a typical " + (desktop ? "desktop or workstation" : "8-GPU server") + " has (" +
                           (desktop ? "128-192 GiB" : "1-2 TiB") + ")");
  }
  if (!assumptions_note().empty()) e.warnings.push_back(assumptions_note());
  // A power figure the vendor does not publish (the catalog's derived entry says ESTIMATE): whatever rests on it is
  // as rough as it is.
  if (auto it = d.derived.find("tdp_w"); it != d.derived.end() && it->second.rfind("ESTIMATE", 0) == 0)
    e.warnings.push_back(d.id + "'s power (" + std::to_string(static_cast<int>(d.tdp_w + 0.5)) +
                         " W) is an estimate, not a vendor figure: energy, power limits and the clock the power budget "
                         "holds rest on it");
  // Across nodes, the network decides the data-parallel and pipeline traffic: say which one was assumed.
  if (const long long span = scale_up_span(d, in.system); in.system.count > span && !in.system.network_assumed.empty())
    e.warnings.push_back("network assumed: " + in.system.network_assumed + " across " +
                         std::to_string((in.system.count + span - 1) / span) +
                         (span > in.system.devices_per_node ? " " + d.interconnect.type + " domains" : std::string(" nodes")) +
                         "; --network-gbps to give yours");
  // Assumptions made reading a foreign model format (config.json, GGUF, safetensors) travel with every estimate.
  for (const auto& note : m.ingest_notes) e.warnings.push_back(m.id + ": " + note);
  if (!m.is_transformer() && m.forward_kernels <= 0)
    e.warnings.push_back(m.id + " gives no forward_kernels: assumed " +
                         std::to_string(std::llround(assumptions().default_forward_kernels)) +
                         " kernels per forward pass (default_forward_kernels; it sets the host and launch floor of "
                         "small batches)");
  if (!m.is_transformer() && !e.training && m.inference_activation_bytes_per_sample <= 0)
    e.warnings.push_back(m.id + " gives no inference_activation_mib_per_sample: inference activations assumed a "
                                "quarter of its training activations per sample");
  // The precision the GEMMs are asked for and the device's rates in it (the notes and warnings below read them).
  const Precision compute = e.training ? w.precision : inference_compute_precision(w);
  const DeviceRates r = device_rates(d, compute, in.profile);
  // The layout changes a CNN's time on tensor cores: say which one was assumed when the user did not.
  const bool format_set = w.stack.overrides("memory-format");
  if (m.is_transformer() && format_set)
    e.warnings.push_back("--memory-format is the layout of a CNN's activations; " + m.id + " is a transformer: ignored");
  // Stack switches given where they change nothing: said, so that a flag the user set is never silently inert. (The
  // ZeRO-3 switches are said by the query, which knows whether the user fixed the stage: run_query.)
  const bool quantized = w.weights && *w.weights != WeightFormat::kFp32 && *w.weights != WeightFormat::kFp16 &&
                         *w.weights != WeightFormat::kBf16;
  if (!e.training && !quantized)
    for (const char* flag : {"quantized-head", "quantized-embedding"})
      if (w.stack.overrides(flag)) e.warnings.push_back(std::string("no effect here: --") + flag + " (the weights are not quantized)");
  const bool tensor_convolutions = compute != Precision::kFp32 && r.tensor_cores && r.nhwc_convolutions;
  if (!m.is_transformer() && !m.convolutions.empty() && !format_set && tensor_convolutions && !w.stack.channels_last)
    e.notes.push_back("activations in NCHW (PyTorch's default): cuDNN transposes them around every tensor-core "
                      "convolution; --memory-format nhwc (channels_last) is faster");
  if (!w.stack.platform_warning.empty()) e.warnings.push_back(w.stack.platform_warning);
  if (e.training && !d.training)
    e.warnings.push_back(d.name + " has no training software stack (" + (d.software.empty() ? "none" : d.software[0]) +
                         "): treat the training figures as theoretical");
  if (m.is_transformer()) {
    std::int64_t context = e.training ? w.seq : w.prompt + w.generate;
    if (context > m.max_sequence_length)
      e.warnings.push_back(std::to_string(context) + " tokens is beyond " + m.id + "'s trained context of " +
                           std::to_string(m.max_sequence_length) + " (needs context extension)");
  }
  if (in.profile && !in.profile->catalog_id.empty() && in.profile->catalog_id != d.id)
    e.warnings.push_back("the profile was measured on " + in.profile->device_name + " (" + in.profile->catalog_id +
                         "), not on " + d.id + ": its curves may not apply");
  else if (in.profile && in.profile->catalog_id.empty())
    e.warnings.push_back("the profile was measured on " + in.profile->device_name +
                         ", which matches no catalog device: its curves replace " + d.id + "'s figures");
  else if (in.profile)
    e.notes.push_back("calibration profile of " + in.profile->device_name + " applied: its measured GEMM, bandwidth and "
                      "launch figures replace the catalog's");
  const PrecisionChoice choice = effective_precision(d, compute);
  e.requested_precision = compute;
  e.effective_precision = choice.effective;
  e.precision_passes = choice.passes;
  if (choice.substituted()) e.warnings.push_back(choice.reason);
  std::string attention_note;
  {
    auto percent = [](double fraction) { return std::to_string(static_cast<int>(100 * fraction + 0.5)) + "%"; };
    if (r.gemm_efficiency_assumed && !in.profile)
      e.warnings.push_back("no published GEMM measurement for " + d.id + " in " + to_string(choice.effective) +
                           ": large GEMMs assumed to reach " + percent(r.gemm_efficiency) +
                           " of the dense peak (below every measured device; a calibration profile replaces it)");
    if (!r.gemm_sibling.empty() && !in.profile) {
      e.warnings.push_back("no published GEMM measurement for " + d.id + " in " + to_string(choice.effective) +
                           ": large GEMMs taken to reach " + percent(r.gemm_efficiency) + " of the dense peak" +
                           (d.sibling_matmul_capped
                                ? ", as measured on its sibling " + r.gemm_sibling + ", which has no more power per compute unit"
                                : ", its sibling " + r.gemm_sibling + "'s measured fraction at " + d.id +
                                      "'s power budget (held clock ~ cube root of TDP per compute unit)") +
                           "; a calibration profile replaces it");
    }
    if (!r.gemm_format_sibling.empty() && !in.profile)
      e.warnings.push_back("no published GEMM measurement for " + d.id + " in " + to_string(choice.effective) +
                           ": large GEMMs taken to reach " + percent(r.gemm_efficiency) + " of the dense peak, its 16-bit "
                           "fraction times " + to_string(choice.effective) + "'s ratio to 16 bits as measured on its sibling " +
                           r.gemm_format_sibling + "; a calibration profile replaces it");
    if (r.tensor_clock_fraction < 0.995 && !in.profile)
      e.warnings.push_back(d.id + "'s tensor cores hold about " + percent(r.tensor_clock_fraction) + " of the clock of its sibling " +
                           r.tensor_clock_reference + " under dense 16-bit GEMMs (the ratio of their large-GEMM fractions, "
                           "a power budget): applied to " + to_string(choice.effective) + ", which has no measurement");
    if (r.clock_fraction < 0.995)
      e.warnings.push_back(d.id + " holds about " + percent(r.clock_fraction) +
                           " of its boost clock under dense GEMMs (power limit; from a published measurement)");
    // Fused attention runs at all: a transformer with flash attention that trains or reads a prompt.
    const bool fused_attention = m.is_transformer() && w.attention == Attention::kFlash && (e.training || w.prompt > 0);
    if (fused_attention && !w.stack.native_attention && r.portable_attention_fraction < 1)
      attention_note = "attention runs as FlashAttention-2-class kernels (" + w.stack.preset + "), at " +
                         std::to_string(static_cast<int>(100 * r.portable_attention_fraction + 0.5)) + "% of the rate of " +
                         d.architecture + "'s native kernels (cuDNN, FlashAttention-3): --native-attention on if the stack uses them "
                         "(PyTorch's SDPA picks cuDNN first on sm90 / sm100 in recent releases: 2.11 did on an H200)";
    if (fused_attention && r.fused_attention_fraction < 1)
      attention_note = "FlashAttention needs an Ampere or newer GPU: on " + d.architecture +
                       " fused attention is PyTorch SDPA's / xFormers' memory-efficient kernel (no s x s scores in memory "
                       "either), priced at " + std::to_string(static_cast<int>(100 * r.fused_attention_fraction + 0.5)) +
                       "% of FlashAttention-2's rate";
  }

  if (e.training) {
    e.train = training_time(in, e.params, micro_batch_cost(in, r), e.memory.paged_out_bytes);  // r: in w.precision
    double peak = r.matrix_flops;
    double cluster_peak = peak * in.plan.count();
    if (e.train.step_seconds > 0 && cluster_peak > 0) {
      e.train.mfu = e.train.model_flops_per_step / (e.train.step_seconds * cluster_peak);
      e.train.hfu = e.train.hardware_flops_per_step / (e.train.step_seconds * cluster_peak);
    }
    if (w.tokens) {
      double steps = *w.tokens / std::max(1.0, e.train.tokens_per_step);
      e.training_seconds = steps * e.train.step_seconds;
      e.goodput = training_goodput(in.plan.count(), e.training_seconds);
      e.total_seconds = e.training_seconds / e.goodput.fraction;
    }
    if (!w.sample_tokens.empty()) {
      const double mean = sample_sequence(w), padded = computed_sequence(w, in.plan.micro_batch);
      e.notes.push_back("unpacked samples of " + std::to_string(std::llround(mean)) + " tokens on average: a micro-batch of " +
                        std::to_string(in.plan.micro_batch) + " is padded to its longest, about " +
                        std::to_string(std::llround(padded)) + " tokens, so " + pct(padded > 0 ? 1 - mean / padded : 0) +
                        " of the tokens computed are padding; tokens/s counts the samples' own tokens (packing them "
                        "into --seq would not pad)");
      const double pace = padded_rank_pace(w, in.plan);
      if (pace > 1)
        e.notes.push_back("each of the " + std::to_string(in.plan.dp) + " data-parallel ranks pads its own micro-batch, and " +
                          (in.plan.zero >= 2 || in.plan.grad_accum <= 1 ? std::string("every micro-batch") : std::string("every step")) +
                          " waits for the rank whose batch is longest: about " + pct(pace - 1) +
                          " more compute time than an average rank's (packing, or batches of similar lengths on every rank, "
                          "avoids it)");
    }
    double comm = e.train.communication_seconds() + e.train.bubble_seconds;
    double compute_part = e.train.gemm_seconds, memory_part = e.train.memory_bound_seconds + e.train.optimizer_seconds;
    // An eager stack at small micro-batches: the GPU waits on the CPU issuing its kernels longer than it works
    // (its forward, backward with any recomputation, and optimizer time less the wait).
    const double host_part = e.train.host_wait_seconds;
    const double busy = e.train.forward_seconds + e.train.backward_seconds + e.train.optimizer_seconds - host_part;
    if (host_part > busy && host_part > comm) e.bound = "host";
    else if (comm > compute_part && comm > memory_part) e.bound = "communication";
    else if (memory_part > compute_part) e.bound = "memory";
    else e.bound = "compute";
  } else {
    e.infer = inference_time(in);
    e.bound = w.generate > 0 ? decode_bound(e.infer) : "compute";
    // A job of --tokens: batches of whole requests back to back, as recommend and tco count it (no goodput model:
    // a server's interruptions are its operator's to count).
    if (w.tokens && e.infer.job.per_second > 0) e.total_seconds = *w.tokens / e.infer.job.per_second;
  }

  // The explanation, in words.
  const MemoryBreakdown& mem = e.memory;
  struct Part {
    const char* name;
    double bytes;
  };
  Part parts[] = {{"weights", mem.weights},         {"gradients", mem.gradients}, {"optimizer state", mem.optimizer},
                  {"activations", mem.activations}, {"KV cache", mem.kv_cache},   {"runtime overhead", mem.runtime()}};
  const Part* top = std::max_element(std::begin(parts), std::end(parts),
                                     [](const Part& a, const Part& b) { return a.bytes < b.bytes; });
  const bool plural = top->name == std::string("weights") || top->name == std::string("gradients") ||
                      top->name == std::string("activations");
  e.notes.push_back(std::string(top->name) + (plural ? " dominate" : " dominates") + " memory: " + human_bytes(top->bytes) + " of " +
                    human_bytes(mem.total()) + " per device");
  // Gradients held whole by no_sync accumulation: the stack's way out is to reduce them in every micro-batch.
  if (in.workload.task != Task::kInfer && deferred_grad_sync(in.workload, in.plan) && top == &parts[1])
    e.notes.push_back("the gradients are held unsharded until the last of the " + std::to_string(in.plan.grad_accum) +
                      " micro-batches (no_sync accumulation); reduced in every micro-batch (--defer-grad-sync off, "
                      "accelerate's sync_each_batch) they would be sharded over the " + std::to_string(in.plan.zero_ranks()) +
                      " ranks");
  if (mem.paged_out_bytes > 0)
    e.notes.push_back("the paged optimizer's states do not all fit: " + human_bytes(mem.paged_out_bytes) +
                      " live in host memory and cross the host link in and out every step (" +
                      human_seconds(e.train.paging_seconds) + ")");
  if (mem.streamed_bytes > 0 && !e.training)
    e.notes.push_back(human_bytes(mem.streamed_bytes) + " of parameters do not fit beside the activations in the " +
                      human_bytes(e.capacity_bytes) + " on chip: they stream over " + d.host_link.type +
                      " on every forward pass (" + human_seconds(e.infer.streamed_seconds) +
                      ", overlapped with the layers computing)");
  if (const LayerPlacement place = layer_placement(m, w); !e.training && place.offloaded()) {
    const long long on_device = std::llround(place.device_layers), total = std::llround(place.total_layers);
    const long long on_host = total - on_device;
    const std::string layers_word = on_host == 1 ? " layer" : " layers";
    const std::string left = (place.head_on_host ? (on_host > 0 ? "the output layer and " + std::to_string(on_host) + layers_word
                                                                : std::string("the output layer"))
                                                 : std::to_string(on_host) + layers_word);
    const bool one = on_host + (place.head_on_host ? 1 : 0) == 1;
    const int spread = in.plan.tp * in.plan.pp;  // the devices of one replica share its layers
    const bool cache = e.infer.offload_on_host && on_host > 0 && m.generates();
    const std::string held = std::to_string(on_device) + " of " + m.id + "'s " + std::to_string(total) + " layers on the " +
                             (spread > 1 ? std::to_string(spread) + " devices, " : std::string("device, ")) + left +
                             " in host memory (" + human_bytes(mem.offloaded_bytes * spread) + " of weights" +
                             (cache ? " and KV cache" : "") + ")";
    const std::string link = d.host_link.type;
    const long long threshold = std::llround(w.stack.offload_min_batch);
    const bool per_token = w.generate > 0 && m.generates();
    std::string how;
    if (e.infer.offload_on_host) {
      how = ": " + w.stack.preset + " runs " + (one ? "it" : "them") + " on the host's CPU";
      if (per_token)
        how += e.infer.offload_decode_on_host
                   ? ", " + human_seconds(e.infer.offload_seconds_per_token) + " of each token"
                   : "; a decode step of " + std::to_string(threshold) + " sequences or more runs " + (one ? "it" : "them") +
                         " on the device, the weights crossing " + link + " every step (" +
                         human_seconds(e.infer.offload_seconds_per_token) + " a step)";
      const double tokens = static_cast<double>(in.plan.micro_batch * w.prompt);
      if (on_host > 0 && w.prompt > 0)
        how += tokens >= w.stack.offload_min_batch
                   ? "; a prompt of " + std::to_string(threshold) + " tokens or more runs on the device, the weights crossing " +
                         link + " once per " + std::to_string(std::llround(w.stack.offload_ubatch)) + " tokens (" +
                         human_seconds(e.infer.offload_prefill_seconds) + " of the prefill)"
                   : "; the host reads the " + std::to_string(std::llround(tokens)) + "-token prompt through " +
                         (one ? "it" : "them") + " too (" + human_seconds(e.infer.offload_prefill_seconds) + ")";
    } else {
      how = ": " + w.stack.preset + " streams the weights over " + link + " for every forward pass" +
            (per_token ? " and every token (" + human_seconds(e.infer.offload_seconds_per_token) + " a token)" : std::string()) +
            "; the device computes every layer";
    }
    e.notes.push_back(held + how);
    // The host's figures, where the user did not give them (the query says which; an estimate built without one
    // takes the typical host whole).
    const bool given = in.system.host_memory_bytes_per_s > 0 && in.system.host_matrix_flops > 0;
    if (e.infer.offload_on_host && (!given || !in.system.host_assumed.empty()))
      e.warnings.push_back("host assumed: " + (given ? in.system.host_assumed : typical_host(d).words()) +
                           " (--host-memory-gbps and --host-tflops give yours): it sets the speed of the layers in host memory");
  }
  if (e.fits) {
    e.notes.push_back("fits with " + human_bytes(e.capacity_bytes - needed) + " free of " +
                      human_bytes(e.capacity_bytes) + " (plans keep at least " + pct(in.system.memory_headroom_fraction) +
                      " free: --headroom)");
  } else {
    std::string hint;
    if (e.training) {
      if (mem.activations > 0.3 * mem.total() && in.plan.recompute != Recompute::kFull)
        hint = "activation recomputation or a smaller micro-batch with gradient accumulation";
      else if (mem.optimizer > 0.3 * mem.total() && in.plan.zero < 1)
        hint = "ZeRO/FSDP sharding across more devices, an 8-bit optimizer, or LoRA";
      else if (w.task == Task::kLora)
        hint = "QLoRA (4-bit base weights)";
      else
        hint = "more devices with ZeRO-3 / tensor parallelism, or LoRA/QLoRA";
    } else {
      // Quantisation is offered only as far as the weights are not already that small.
      const double per_param = weight_bytes_per_param(w);
      const std::string quantise = per_param > 1.5    ? "quantised weights (int8 / int4) or "
                                   : per_param > 0.75 ? "4-bit weights (int4) or "
                                                     : "";
      hint = mem.kv_cache > mem.weights ? "a smaller batch or context, or an 8-bit KV cache"
                                        : quantise + "more devices with tensor parallelism";
      // A device with memory of its own can leave layers in host memory (llama.cpp's -ngl): slower, but it runs.
      if (m.is_transformer() && can_leave_layers_in_host(d) && !w.device_layers)
        hint += std::string(", or fewer layers on the device (") +
                (w.stack.offload_runs_on_host ? "" : "--engine llamacpp ") + "--gpu-layers auto: llama.cpp runs the rest on the host's CPU)";
      // Its parameters already stream from the host: what does not fit is what must stay on chip.
      if (d.streams_parameters()) hint = "a smaller batch or context (the parameters already stream from the host)";
    }
    const bool only_headroom = needed <= e.capacity_bytes;
    e.notes.push_back("does not fit: needs " + human_bytes(needed) +
                      (needed > mem.total() ? " (" + human_bytes(mem.host_bytes) + " of it offloaded into the same memory)" : std::string()) +
                      ", device has " + human_bytes(e.capacity_bytes) +
                      (in.system.memory_headroom_fraction > 0
                           ? " of which " + human_bytes(e.usable_bytes) + " are usable (" + pct(in.system.memory_headroom_fraction) +
                                 " kept free: --headroom)"
                           : std::string()) +
                      (only_headroom ? "; it would fill the device to " + pct(needed / e.capacity_bytes) +
                                           ", where allocator variance makes runs fail"
                                     : std::string()) +
                      "; try " + hint);
    e.fit_hint = e.notes.back();
  }
  if (e.training) {
    const TrainingTime& t = e.train;
    e.notes.push_back("step is " + e.bound + "-bound: GEMMs " + human_seconds(t.gemm_seconds) + ", memory-bound ops " +
                      human_seconds(t.memory_bound_seconds) + ", exposed communication " +
                      human_seconds(t.communication_seconds()) + ", pipeline bubble " + human_seconds(t.bubble_seconds) +
                      ", optimizer " + human_seconds(t.optimizer_seconds) +
                      (t.host_wait_seconds > 0.01 * t.step_seconds
                           ? ", GPU waiting on the host's kernel issue " + human_seconds(t.host_wait_seconds)
                           : std::string()));
    if (!e.fits)
      ;  // speed-up hints are for a configuration that runs; the memory hint above comes first
    else if (e.bound == "host")
      e.notes.push_back("to speed it up: a larger micro-batch (more work per kernel), a compiled or fused stack "
                        "(torch.compile, fused kernels: fewer kernels to issue), or a host CPU with faster cores; more "
                        "devices or a faster GPU would wait as long");
    else if (e.bound == "communication")
      e.notes.push_back("to speed it up: keep tensor parallelism inside one NVLink domain, raise gradient accumulation "
                        "so the reduction is amortised, or use a faster network (--network-gbps)");
    else if (e.bound == "memory" && !m.is_transformer())
      e.notes.push_back(std::string("to speed it up: ") + (w.stack.channels_last ? "" : "channels_last (--memory-format nhwc), ") +
                        "fused BatchNorm and activation kernels (torch.compile, XLA) cut the memory-bound passes");
    else if (e.bound == "memory")
      e.notes.push_back("to speed it up: larger micro-batches, fused kernels and flash attention raise arithmetic intensity");
    else if (w.precision == Precision::kBf16 || w.precision == Precision::kFp16)
      e.notes.push_back(d.supports(Precision::kFp8) ? "to speed it up: fp8 GEMMs (--precision fp8) or more devices"
                                                    : "to speed it up: more devices, or a device with more matrix throughput");
    if (w.attention == Attention::kEager && m.is_transformer())
      e.notes.push_back("eager attention materialises the s x s scores; flash attention would cut memory and time");
    if (e.bound == "memory" && (w.precision == Precision::kFp32))
      e.notes.push_back("fp32 runs on the non-tensor units; bf16 mixed precision uses the tensor cores");
    if (t.mfu > 0)
      e.notes.push_back("MFU " + pct(t.mfu) + " of " + to_string(e.effective_precision) +
                        (e.precision_passes > 1 ? " dense peak / " + std::to_string(static_cast<int>(e.precision_passes)) + " passes"
                                                : std::string(" dense peak")));
    if (t.slowest_device_seconds > 0)
      e.notes.push_back(std::to_string(in.plan.count()) + " devices step together: each step waits for the slowest, about " +
                        pct(slowest_device_slowdown(in.plan.count()), 1) + " slower than a median device (GPUs of one model differ by ~" +
                        pct(assumptions().device_speed_spread) + " in speed: Sinha et al., SC22)");
    if (w.stack.interleaved_pipeline && in.plan.pp > 1 && in.plan.vp == 1 && interleaving_fits(m, in.plan.pp, 2))
      e.notes.push_back("the pipeline runs without interleaving (vp 1) though " + w.stack.preset +
                        " can interleave: --vp N sets it, or leave --dp free and the layout search chooses it");
  } else if (!m.is_transformer()) {
    e.notes.push_back("a forward pass of batch " + std::to_string(in.plan.micro_batch) + " takes " +
                      human_seconds(e.infer.prefill_seconds) + " (" + three_figures(e.infer.decode_tokens_per_second) +
                      " samples/s)");
    if (!w.stack.fused_kernels)
      e.notes.push_back("eager inference runs BatchNorm and the activations as their own kernels; an engine that folds "
                        "them into the convolutions (--engine tensorrt) runs faster" +
                        std::string(d.supports(Precision::kInt8) ? ", and in int8 (--weights int8) faster still" : ""));
  } else if (w.generate > 0) {
    if (w.stack.layer_split && in.plan.pp > 1 && in.plan.tp == 1)
      e.notes.push_back(w.stack.preset + " splits the model by layers over " + std::to_string(in.plan.pp) +
                        " devices, which take turns on each token: no faster than one device with all the memory "
                        "(--tp N asks for tensor parallelism, where the engine has it)");
    else if (in.plan.pp > 1)
      e.notes.push_back(std::to_string(in.plan.pp) + " pipeline stages take turns on each token of one batch: they add "
                        "memory, not speed, to a single stream (tensor parallelism divides the step" +
                        (m.is_transformer() && m.attention_heads % (in.plan.tp * in.plan.pp) != 0
                             ? "; " + std::to_string(in.plan.tp * in.plan.pp) + "-way does not divide the " +
                                   std::to_string(m.attention_heads) + " heads"
                             : std::string()) +
                        ")");
    const std::string bound = decode_bound(e.infer);
    // What twice the sequences per step would cost, as the estimators time it.
    const double doubling = e.infer.decode_doubling_ratio;
    const std::string larger_batch =
        "; twice the batch would take " + std::to_string(std::lround(100 * (doubling - 1))) + "% longer a step" +
        (doubling < 1.25 ? ": a larger batch raises throughput almost for free"
         : e.infer.decode_kv_bytes >= 0.5 * e.infer.decode_weight_bytes ? " (the KV cache's reads grow with it)"
                                                                         : "");
    const InferenceTime& t = e.infer;
    if (t.offload_seconds_per_token > 0 && (bound == "host-memory" || bound == "host-link"))
      e.notes.push_back(std::string("decode is ") + bound + "-bound: the " + std::to_string(std::llround(t.offload_host_layers)) +
                        (std::llround(t.offload_host_layers) == 1 ? " layer" : " layers") +
                        " left in host memory take " + human_seconds(t.offload_seconds_per_token) + " of each " +
                        human_seconds(t.time_per_output_token_seconds) + " token, the device's layers " +
                        human_seconds(t.decode_gpu_seconds) + "; every layer moved onto the device speeds it up "
                        "(smaller weights, a KV cache that fits, a device with more memory)" + larger_batch);
    else if (bound == "host-link")
      e.notes.push_back("decode is host-link-bound: each token streams " + human_bytes(mem.streamed_bytes) +
                        " of parameters the on-chip cache cannot hold over " + d.host_link.type + " (" +
                        human_seconds(e.infer.streamed_seconds) + " a step)" + larger_batch);
    else if (bound == "communication")
      e.notes.push_back("decode is communication-bound: " + human_seconds(e.infer.decode_comm_seconds) + " of each " +
                        human_seconds(e.infer.decode_gpu_seconds) + " step are " +
                        (in.plan.tp > 1 ? "tensor-parallel all-reduces" : "pipeline sends") + " over " +
                        e.infer.decode_comm_medium + " (fewer devices, or one node's fabric, run it faster)");
    else if (bound == "host")
      // The time row says host-bound: the note names the two sides and what removes the host's.
      e.notes.push_back("decode is host-bound: the host issues each token's kernels and runs the engine's step (" +
                        human_seconds(e.infer.host_seconds_per_token) + " a token) while the device's work takes " +
                        human_seconds(e.infer.decode_gpu_seconds) + " (reading " + human_bytes(e.infer.decode_weight_bytes) +
                        " of weights and " + human_bytes(e.infer.decode_kv_bytes) + " of KV cache per device); " +
                        (d.has_software("cuda") ? "CUDA graphs (--cuda-graphs on) or a compiled engine (--engine vllm, trtllm, llamacpp) remove "
                                "most of it"
                              : "an engine that replays or compiles its step removes most of it") +
                        larger_batch);
    else
      e.notes.push_back("decode is " + bound + "-bound: each token reads " + human_bytes(e.infer.decode_weight_bytes) +
                        " of weights and " + human_bytes(e.infer.decode_kv_bytes) + " of KV cache per device" + larger_batch);
  }
  if (!attention_note.empty()) e.notes.push_back(attention_note);
  return e;
}

}  // namespace hwplan
