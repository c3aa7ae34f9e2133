#include "report/estimate_report.hpp"

#include <fmt/format.h>
#include <cmath>
#include <optional>
#include <string_view>

#include "estimators/comm.hpp"
#include "estimators/memory.hpp"
#include "estimators/stack.hpp"
#include "estimators/uncertainty.hpp"
#include "serve/capacity.hpp"
#include "serve/engine.hpp"
#include "serve/step_model.hpp"

#include <cmath>
#include <optional>
#include <string_view>

#include "core/strings.hpp"
#include "core/units.hpp"

namespace hwplan::report {
using nlohmann::json;

namespace {
// The format the weights are stored and read in: --weights, else the compute format's (fp32 for fp32 and tf32; an fp8
// compute without fp8 weights keeps the 16-bit checkpoint, memory.cpp weight_bytes_per_param).
std::string stored_weights(const Workload& w) {
  if (w.weights) return to_string(*w.weights);
  if (w.precision == Precision::kFp32 || w.precision == Precision::kTf32) return "fp32";
  return w.precision == Precision::kFp16 ? "fp16" : "bf16";
}

// A lone request's time to first token through hwplan serve (concurrency 1) on this layout: the server's handling,
// then the engine's steps over the prompt with its own step model and chunk budget. Only where serve would run it:
// the engines it simulates, a transformer, a prompt and an output, and a KV cache, as the engine sizes it from its
// own memory fraction (capped by a --headroom given, as serve does), that holds the request (estimate's own fit keeps
// --headroom free and may say no where the engine runs); nothing otherwise.
std::optional<double> served_ttft_seconds(const EstimateInput& in) {
  if (!in.model->is_transformer() || in.workload.prompt <= 0 || in.workload.generate <= 0) return std::nullopt;
  // Layers left in host memory: serve does not simulate them.
  if (layer_placement(*in.model, in.workload).offloaded()) return std::nullopt;
  auto engine = parse_engine(in.workload.stack.preset);
  // An NPU runtime is served as serve serves it: its steps under llama-server's scheduler, on a device with memory
  // of its own (serve refuses one that streams its parameters).
  if (engine == Engine::kNpuRuntime) {
    if (in.device->streams_parameters()) return std::nullopt;
    engine = Engine::kLlamacpp;
  }
  if (!engine || !serve::engine_served(*engine)) return std::nullopt;
  serve::EngineConfig cfg =
      serve::engine_config(*engine, in.device->plan_memory_bytes(), in.device->name, host_time_ratio(*in.device));
  if (in.system.memory_headroom_given) cfg.memory_cap_fraction = 1 - in.system.memory_headroom_fraction;  // as serve: a given --headroom caps it
  const double request = static_cast<double>(in.workload.prompt + in.workload.generate);
  if (static_cast<double>(serve::kv_capacity(in, cfg, request).tokens) / std::max(1, in.plan.pp) < request) return std::nullopt;
  serve::StepModel steps(step_rates(in));
  return cfg.request_overhead_seconds + steps.lone_prefill_seconds(in.workload.prompt, cfg.max_batched_tokens, cfg.chunked_prefill);
}
json number_or_null(double v) { return std::isfinite(v) && v >= 0 ? json(v) : json(nullptr); }
}  // namespace

json plan_json(const Plan& p) {
  return json{{"tp", p.tp},
              {"cp", p.cp},
              {"pp", p.pp},
              {"dp", p.dp},
              {"ep", p.ep},
              {"vp", p.vp},
              {"zero", p.zero},
              {"shard_group", p.zero >= 1 ? p.zero_ranks() : 0},
              {"recompute", to_string(p.recompute)},
              {"recompute_layers", p.recompute == Recompute::kFull ? p.recompute_layers : 0},
              {"offload", to_string(p.offload)},
              {"sequence_parallel", p.sequence_parallel && p.tp > 1},
              {"micro_batch", p.micro_batch},
              {"grad_accum", p.grad_accum},
              {"global_batch", p.global_batch()}};
}

json estimate_json(const EstimateInput& in, const Estimate& e, const SearchResult* search) {
  const Workload& w = in.workload;
  const MemoryBreakdown& m = e.memory;
  json j;
  j["schema_version"] = kSchemaVersion;
  j["model"] = {{"id", in.model->id},
                {"name", in.model->name},
                {"parameters", e.params.total},
                {"active_parameters", e.params.active}};
  j["device"] = {{"id", in.device->id}, {"name", in.device->name}, {"count", in.system.count}};
  j["workload"] = {{"task", to_string(w.task)},
                   {"precision", to_string(w.precision)},
                   {"seq", w.seq},
                   {"attention", to_string(w.attention)},
                   {"optimizer", to_string(w.optimizer)},
                   {"lm_head", w.lm_head}};
  if (w.task == Task::kInfer) {
    j["workload"]["prompt"] = w.prompt;
    j["workload"]["generate"] = w.generate;
    j["workload"]["weights"] = stored_weights(w);
    j["workload"]["kv_cache"] = to_string(w.kv_cache);
  }
  if (w.task == Task::kLora || w.task == Task::kQlora) j["workload"]["lora_rank"] = w.lora_rank;
  j["plan"] = plan_json(e.plan);
  j["system"] = {{"devices_per_node", in.system.devices_per_node},
                 {"network_gbps_per_device", in.system.network_bytes_per_s * 8 / 1e9},
                 {"network_assumed", in.system.network_assumed.empty() ? nlohmann::json(nullptr)
                                                                        : nlohmann::json(in.system.network_assumed)}};
  j["plan"]["requested_precision"] = to_string(e.requested_precision);
  j["plan"]["effective_precision"] = to_string(e.effective_precision);
  j["plan"]["precision_passes"] = e.precision_passes;
  j["memory"] = {{"per_device_bytes", m.total()},
                 {"capacity_bytes", e.capacity_bytes},
                 {"headroom_bytes", e.capacity_bytes - m.total()},
                 {"usable_bytes", e.usable_bytes},
                 {"required_headroom_fraction", in.system.memory_headroom_fraction},
                 {"fits", e.fits},
                 {"host_memory_short", e.host_memory_short},
                 {"host_bytes", m.host_bytes},
                 {"streamed_bytes", m.streamed_bytes},
                 {"paged_out_bytes", m.paged_out_bytes},
                 {"breakdown",
                  {{"weights", m.weights},
                   {"gradients", m.gradients},
                   {"optimizer", m.optimizer},
                   {"activations", m.activations},
                   {"kv_cache", m.kv_cache},
                   {"runtime", m.runtime()}}},
                 {"runtime_detail",
                  {{"context", m.runtime_context},
                   {"workspace", m.runtime_workspace},
                   {"fragmentation", m.runtime_fragmentation}}}};
  if (e.training) {
    const TrainingTime& t = e.train;
    j["time"] = {{"forward_seconds", t.forward_seconds},
                 {"backward_seconds", t.backward_seconds},
                 {"recompute_seconds", t.recompute_seconds},
                 {"optimizer_seconds", t.optimizer_seconds},
                 {"offload_transfer_seconds", t.offload_seconds},  // host link traffic of --offload
                 {"paging_seconds", t.paging_seconds},             // a paged optimizer's evicted states, in and out
                 {"communication_seconds", t.communication_seconds()},
                 {"communication_detail",
                  {{"tensor_parallel_seconds", t.tp_comm_seconds},
                   {"context_parallel_seconds", t.cp_comm_seconds},
                   {"pipeline_p2p_seconds", t.pp_comm_seconds},
                   {"data_parallel_seconds", t.dp_comm_seconds},
                   {"data_parallel_exposed_seconds", t.dp_comm_exposed_seconds},
                   {"overlap_interference_seconds", t.dp_interference_seconds}}},
                 {"pipeline_bubble_seconds", t.bubble_seconds},
                 {"host_wait_seconds", t.host_wait_seconds},  // GPU idle on eager kernel issue, inside forward/backward
                 {"slowest_device_seconds", t.slowest_device_seconds},
                 {"padding_wait_seconds", t.padding_wait_seconds},  // ranks waiting on the longest padded batch
                 {"step_seconds", t.step_seconds},
                 {"tokens_per_step", t.tokens_per_step},
                 {"tokens_per_second", t.tokens_per_second},
                 {"tokens_per_second_per_device", t.tokens_per_second / in.system.count},
                 {"mfu", t.mfu},
                 {"hfu", t.hfu},
                 {"total_seconds", number_or_null(e.total_seconds)},
                 {"training_seconds", number_or_null(e.training_seconds)},
                 {"goodput",
                  e.total_seconds >= 0 ? json{{"fraction", e.goodput.fraction},
                                              {"expected_interruptions", e.goodput.expected_interruptions},
                                              {"checkpoint_interval_seconds", e.goodput.checkpoint_interval_seconds}}
                                       : json(nullptr)}};
    j["inference"] = nullptr;
    if (!in.model->is_transformer()) {
      j["time"]["samples_per_second"] = t.tokens_per_second;
      j["time"]["samples_per_second_per_device"] = t.tokens_per_second / in.system.count;
    }
  } else {
    j["time"] = nullptr;
    const std::optional<double> served = served_ttft_seconds(in);  // a KV-cache sizing: once
    j["inference"] = {{"prefill_seconds", e.infer.prefill_seconds},
                      // No prompt (a decode from an empty context), or a model that generates nothing: no first
                      // token to wait for.
                      {"time_to_first_token_seconds",
                       in.workload.prompt > 0 && in.model->generates() ? json(e.infer.prefill_seconds) : json(nullptr)},
                      {"served_time_to_first_token_seconds", served ? json(*served) : json(nullptr)},
                      {"replicas", e.infer.replicas},
                      {"decode_tokens_per_second", e.infer.total_decode_tokens_per_second()},
                      {"decode_tokens_per_second_per_replica", e.infer.decode_tokens_per_second},
                      {"time_per_output_token_seconds", e.infer.time_per_output_token_seconds},
                      {"total_seconds", e.infer.total_seconds},
                      {"decode_bytes_per_token", e.infer.decode_weight_bytes + e.infer.decode_kv_bytes}};
    // Layers left in host memory (--gpu-layers); null when the device holds them all.
    j["inference"]["offload"] = nullptr;
    if (const LayerPlacement place = layer_placement(*in.model, w); place.offloaded()) {
      const bool on_host = e.infer.offload_on_host;
      j["inference"]["offload"] = {
          {"device_layers", std::llround(place.device_layers)},
          {"host_layers", std::llround(place.host_layers())},
          {"output_layer_on_host", place.head_on_host},
          {"computed_by", on_host ? "host_cpu" : "device_streamed"},
          {"host_bytes", m.offloaded_bytes * in.plan.tp * in.plan.pp},
          {"seconds_per_token", e.infer.offload_seconds_per_token},
          {"prefill_seconds", e.infer.offload_prefill_seconds},
          {"host_memory_gb_per_s", on_host ? json(in.system.host_memory_bytes_per_s / 1e9) : json(nullptr)},
          {"host_tflops", on_host ? json(in.system.host_matrix_flops / 1e12) : json(nullptr)},
          {"host_assumed", on_host && !in.system.host_assumed.empty() ? json(in.system.host_assumed) : json(nullptr)}};
    }
    if (!in.model->generates()) {
      // One forward pass over the batch (a CNN, an encoder): the tokens fields above carry the same figures per
      // sample.
      j["inference"]["batch_seconds"] = e.infer.total_seconds;
      j["inference"]["samples_per_second"] = e.infer.total_decode_tokens_per_second();
    }
    // A job of --tokens: batches of whole requests back to back (as recommend and tco count it).
    j["inference"]["job"] = nullptr;
    if (in.workload.tokens && e.total_seconds >= 0) {
      const InferenceJobRate& rate = e.infer.job;
      j["inference"]["job"] = {{"tokens", *in.workload.tokens}, {"counts", rate.counts},
                               {"tokens_per_second", rate.per_second}, {"total_seconds", e.total_seconds}};
    }
  }
  const Stack& st = w.stack;
  j["stack"] = {{"preset", st.preset},
                {"preset_assumed", st.preset_assumed},
                {"overridden", st.overridden},
                {"master_weights", st.master_weights_fp32 ? "fp32" : "none"},
                {"fused_kernels", st.fused_kernels},
                {"cuda_graphs", st.cuda_graphs},
                {"invoke_seconds", st.invoke_seconds},
                {"on_chip_activations", st.on_chip_activations},
                {"overlap_scheduling", st.overlap_scheduling},
                {"overlap_p2p", st.overlap_p2p},
                {"quantized_head", st.quantized_head},
                {"quantized_embedding", st.quantized_embedding},
                {"embedding_on_host", st.embedding_on_host},
                {"custom_allreduce", st.custom_allreduce},
                {"gather_copy_out", st.gather_copy_out},
                {"layer_split", st.layer_split},
                {"kv_cache_concat", st.kv_cache_concat},
                {"chunked_loss", st.chunked_loss},
                {"optimizer_in_backward", st.optimizer_in_backward},
                {"activation_offload", st.activation_offload},
                {"paged_optimizer", st.paged_optimizer},
                {"native_attention", st.native_attention},
                {"autocast", st.autocast},
                {"persistent_grads", st.persistent_grads},
                {"foreach_optimizer", st.foreach_optimizer},
                {"fused_optimizer", st.fused_optimizer},
                {"clip_grad_norm", st.clip_grad_norm},
                {"zero3_live_parameters", st.zero3_live_parameters},
                {"fp8_head", st.fp8_head},
                {"fp32_grads", st.fp32_grads},
                {"fp32_reduce", st.fp32_reduce},
                {"defer_grad_sync", st.defer_grad_sync},
                {"loss_parallel", st.loss_parallel},
                {"memory_metric", to_string(st.memory_metric)},
                {"memory_format", st.channels_last ? "nhwc" : "nchw"},
                {"host_seconds_per_kernel", st.host_seconds_per_kernel},
                {"decode_step_overhead_seconds", st.decode_step_overhead_seconds},
                {"host", st.desktop_host ? "desktop" : "server"},
                {"eager_traffic_factor", st.eager_traffic_factor}};
  j["memory"]["reported_bytes"] = m.reported(st.memory_metric);
  // Typical error of each figure: the 80th percentile of |predicted/measured - 1| of its regime over the
  // recorded measurement sets (estimators/uncertainty.hpp).
  const Band& time_band = band(!in.model->is_transformer() ? Regime::kImage
                               : e.training                 ? Regime::kThroughput
                               : in.model->generates() && w.generate > 0 ? Regime::kDecode
                                                                         : Regime::kStep);
  j["uncertainty"] = {{"time_regime", time_band.name},
                      {"time_relative_p80", time_band.p80_relative_error},
                      {"prefill_relative_p80", band(Regime::kStep).p80_relative_error},
                      {"memory_relative_p80", band(Regime::kMemory).p80_relative_error}};
  j["bound"] = e.bound;
  j["notes"] = e.notes;
  j["warnings"] = e.warnings;
  if (search)
    j["search"] = {{"layouts_evaluated", search->layouts_evaluated},
                   {"layouts_feasible", search->layouts_feasible},
                   {"found", search->found}};
  return j;
}

// "fsdp (assumed; set --framework): unfused kernels, fp32 master weights, memory as reserved".
std::string stack_summary(const EstimateInput& in) {
  const Workload& w = in.workload;
  const Stack& st = w.stack;
  std::string out = st.preset;
  if (st.preset_assumed) out += w.task == Task::kInfer ? " (assumed; set --engine)" : " (assumed; set --framework)";
  out += st.fused_kernels ? ": fused kernels" : ": unfused eager kernels";
  if (w.task == Task::kInfer) {
    if (st.npu_graph)
      out += fmt::format(", one compiled graph ({:.2f} ms an invoke){}", st.invoke_seconds * 1e3,
                         st.on_chip_activations && !in.model->is_transformer() ? ", activations kept on chip" : "");
    else
      out += st.cuda_graphs ? ", CUDA graphs"
                          : fmt::format(", {:.0f} us host time per kernel{}", st.host_seconds_per_kernel * 1e6,
                                        st.desktop_host ? " (desktop CPU)" : "");
    // Quantized weights: whether the output projection is quantized with them (memory.cpp head_weight_bytes).
    if (head_in_compute_format(w))
      out += ", output projection unquantized";
    else if (st.quantized_head && w.weights && bytes_per_param(*w.weights) < 2 && !w.checkpoint_bytes_per_param)
      out += ", output projection quantized";
    // Where the token embedding table is and in which format (memory.cpp embedding_weight_bytes, embedding_on_device).
    const bool quantized = w.weights && bytes_per_param(*w.weights) < 2 && !w.checkpoint_bytes_per_param;
    if (!embedding_on_device(w, *in.device))
      out += ", embedding table in host memory";
    else if (quantized && embedding_weight_bytes(w) != head_weight_bytes(w))
      out += embedding_weight_bytes(w) < head_weight_bytes(w) ? ", embedding table quantized" : ", embedding table unquantized";
    // Tensor-parallel all-reduces as the engine's own kernel (comm.cpp engine_allreduce_seconds).
    if (st.custom_allreduce && in.plan.tp > 1 &&
        std::string_view(group_link(*in.device, in.system, in.plan.tp, 1).medium) == "scale-up fabric")
      out += ", engine all-reduce kernel";
  } else {
    out += st.master_weights_fp32 ? (st.autocast ? ", autocast over fp32 weights" : ", fp32 master weights")
                                  : ", pure 16-bit (no master copy)";
    // How the optimizer step runs, which sets its memory passes (estimators/training.cpp optimizer_step_bytes);
    // Adafactor and the 8-bit optimizers have their own.
    if (w.optimizer == Optimizer::kAdamW || w.optimizer == Optimizer::kSgd)
      out += !st.foreach_optimizer ? ", looped optimizer" : st.fused_optimizer ? ", fused optimizer" : ", foreach optimizer";
    if (st.clip_grad_norm) out += ", gradient clipping";
    if (st.gather_copy_out && in.plan.zero >= 3 && in.plan.zero_ranks() > 1) out += ", FSDP2 gather copy-out";
    if (st.overlap_p2p) out += ", overlapped pipeline sends";
    if (st.chunked_loss) out += ", chunked loss";
    if (st.optimizer_in_backward) out += ", optimizer in backward";
    if (st.activation_offload) out += ", activation offload";
    if (st.paged_optimizer) out += ", paged optimizer";
    if (fp32_gradients(w) && !st.autocast) out += ", fp32 gradients";
    else if (fp32_reduce_over_16_bits(w) && (in.plan.replica_ranks() > 1 || deferred_grad_sync(w, in.plan)))
      out += ", fp32 gradient reduction";
    if (deferred_grad_sync(w, in.plan)) out += ", unsharded gradients accumulated (no_sync)";
    if (!st.loss_parallel && in.plan.tp > 1 && w.lm_head) out += ", logits gathered on every tensor-parallel rank";
    if (w.precision == Precision::kFp8 && !st.fp8_head) out += ", vocabulary projection in 16 bits";
    if (st.desktop_host) out += ", desktop CPU";
    // What the layout search leaves out (estimators/search.cpp): shown where several devices make it matter and the
    // plan does without it (a degree given is priced as given).
    const bool no_tp = !st.tensor_parallel && in.plan.tp == 1, no_pp = !st.pipeline_parallel && in.plan.pp == 1;
    if (in.system.count > 1 && (no_tp || no_pp))
      out += no_tp && no_pp ? ", layouts without tensor or pipeline parallelism"
             : no_tp        ? ", layouts without tensor parallelism"
                            : ", layouts without pipeline parallelism";
  }
  out += fmt::format(", memory as {}", to_string(st.memory_metric));
  for (const auto& o : st.overridden) out += "; " + o + " (set)";
  return out;
}

Table estimate_summary_table(const EstimateInput& in, const Estimate& e) {
  Table t;
  t.header = {"quantity", "value"};
  auto row = [&](const std::string& k, const std::string& v) { t.rows.push_back({k, v}); };
  const Plan& p = e.plan;
  row("model", fmt::format("{} ({} parameters{})", in.model->id, human_count(e.params.total),
                           in.model->moe ? ", " + human_count(e.params.active) + " active" : ""));
  row("device", fmt::format("{} x {}", in.system.count, in.device->name));
  const Workload& w = in.workload;
  const bool generic = !in.model->is_transformer();
  const bool encoder_pass = !generic && !in.model->generates() && w.task == Task::kInfer;
  std::string task = generic ? fmt::format("{} {}{} (a sample: {})", to_string(w.task), to_string(w.precision),
                                           w.weights ? fmt::format(" weights {}", to_string(*w.weights)) : "", in.model->input)
                     : encoder_pass ? fmt::format("{} {} input {} tokens (one forward pass) weights {}", to_string(w.task),
                                                  to_string(w.precision), w.prompt,
                                                  stored_weights(w))
                     : w.task == Task::kInfer
                         ? fmt::format("{} {} prompt {} generate {} weights {} kv-cache {}", to_string(w.task),
                                       to_string(w.precision), w.prompt, w.generate,
                                       stored_weights(w), to_string(w.kv_cache))
                         : fmt::format("{} {} seq {}", to_string(w.task), to_string(w.precision), w.seq);
  if (e.effective_precision != e.requested_precision || e.precision_passes > 1)
    task += fmt::format(" (GEMMs run in {}{})", to_string(e.effective_precision),
                        e.precision_passes > 1 ? fmt::format(", {:.0f} passes", e.precision_passes) : "");
  if (!generic && !w.lm_head) task += ", no LM head (task head)";
  row("task", task);
  row("stack", stack_summary(in));
  const std::string hybrid = p.shard_replicas() > 1
                                 ? fmt::format(" (shards of {}, {} replicas)", p.zero_ranks(), p.shard_replicas())
                                 : std::string();
  row("plan", fmt::format("tp {}{} pp {}{} dp {}{} zero {}{} recompute {} micro-batch {} x {} accum (global {})", p.tp,
                          p.cp > 1 ? fmt::format(" cp {}", p.cp) : "", p.pp, p.vp > 1 ? fmt::format(" (interleaved, vp {})", p.vp) : "", p.dp,
                          p.ep > 1 ? fmt::format(" ep {}", p.ep) : "", p.zero, hybrid,
                          std::string(to_string(p.recompute)) +
                              (p.recompute == Recompute::kFull && p.recompute_layers > 0
                                   ? fmt::format(" ({} of {} layers per stage)", p.recompute_layers,
                                                 (in.model->total_layers() + p.pp - 1) / p.pp)
                                   : ""),
                          p.micro_batch, p.grad_accum, p.global_batch()));
  const MemoryBreakdown& m = e.memory;
  row("memory / device", fmt::format("{} of {} ({}; typically within +/-{:.0f}%)", human_bytes(m.total()),
                                     human_bytes(e.capacity_bytes),
                                     !e.fits ? "DOES NOT FIT" : e.host_memory_short ? "fits the device; host memory short: see warning" : "fits",
                                     100 * band(Regime::kMemory).p80_relative_error));
  if (std::fabs(m.reported(in.workload.stack.memory_metric) - m.total()) > 0.01 * m.total())
    row("  as reported", fmt::format("{} ({} by the stack)", human_bytes(m.reported(in.workload.stack.memory_metric)),
                                     to_string(in.workload.stack.memory_metric)));
  row("  weights", human_bytes(m.weights));
  if (e.training) {
    row("  gradients", human_bytes(m.gradients));
    row("  optimizer", human_bytes(m.optimizer));
  }
  row("  activations", human_bytes(m.activations));
  if (!e.training && in.model->generates()) row("  KV cache", human_bytes(m.kv_cache));
  row("  runtime", fmt::format("{} (context {}, workspace {}, fragmentation {})", human_bytes(m.runtime()),
                               human_bytes(m.runtime_context), human_bytes(m.runtime_workspace),
                               human_bytes(m.runtime_fragmentation)));
  if (m.host_bytes > 0) row("host memory", human_bytes(m.host_bytes));
  if (m.streamed_bytes > 0)
    row("  streamed", fmt::format("{} of parameters the on-chip cache cannot hold, over {} every forward pass",
                                  human_bytes(m.streamed_bytes), in.device->host_link.type));
  if (m.paged_out_bytes > 0) row("paged to host", human_bytes(m.paged_out_bytes) + " of the optimizer's managed memory");
  if (e.training) {
    const TrainingTime& tt = e.train;
    row("step time", fmt::format("{} (typically within +/-{:.0f}%){}", human_seconds(tt.step_seconds),
                                 100 * band(generic ? Regime::kImage : Regime::kThroughput).p80_relative_error,
                                 e.fits ? "" : "; would be, if it fit: it does not"));
    row("  forward", human_seconds(tt.forward_seconds));
    row("  backward", human_seconds(tt.backward_seconds) +
                          (tt.recompute_seconds > 0 ? " (recompute " + human_seconds(tt.recompute_seconds) + ")" : ""));
    row("  optimizer", human_seconds(tt.optimizer_seconds));
    if (in.plan.offload != Offload::kNone)
      row("  host transfers", fmt::format("{} (offload over {}: gradients down, weights up{})", human_seconds(tt.offload_seconds),
                                          in.device->host_link.type.empty() ? std::string("the host link") : in.device->host_link.type,
                                          in.plan.offload == Offload::kParams ? ", parameters streamed per micro-batch" : ""));
    if (tt.paging_seconds > 0)
      row("  paging", fmt::format("{} (evicted optimizer states over {}, in and out)", human_seconds(tt.paging_seconds),
                                  in.device->host_link.type.empty() ? std::string("the host link") : in.device->host_link.type));
    row("  communication", human_seconds(tt.communication_seconds()));
    if (tt.slowest_device_seconds > 0)
      row("  slowest device", fmt::format("{} (the {} devices step at the pace of the slowest)", human_seconds(tt.slowest_device_seconds),
                                          in.plan.count()));
    if (tt.padding_wait_seconds > 0)
      row("  padding wait", fmt::format("{} (the {} data-parallel ranks wait for the one whose batch is padded longest)",
                                        human_seconds(tt.padding_wait_seconds), in.plan.dp));
    if (tt.bubble_seconds > 0) row("  pipeline bubble", human_seconds(tt.bubble_seconds));
    row(generic ? "samples/s" : "tokens/s",
        fmt::format("{:.0f} ({:.0f} per device){}", tt.tokens_per_second, tt.tokens_per_second / in.system.count,
                    e.fits ? "" : "; would be, if it fit"));
    row("MFU", fmt::format("{:.1f}%", 100 * tt.mfu));
    if (e.total_seconds >= 0)
      row("total time", human_seconds(e.total_seconds) +
                            (e.fits ? fmt::format(" ({} of steps; {:.1f}% lost to ~{:.3g} interruptions and checkpoints)",
                                                  human_seconds(e.training_seconds), 100 * (1 - e.goodput.fraction),
                                                  e.goodput.expected_interruptions)
                                    : " (does not fit: not runnable as given)"));
  } else if (generic || encoder_pass) {
    row("batch latency", fmt::format("{} for a batch of {} (typically within +/-{:.0f}%){}", human_seconds(e.infer.total_seconds),
                                     p.micro_batch, 100 * band(generic ? Regime::kImage : Regime::kStep).p80_relative_error,
                                     e.fits ? "" : " (would be, if it fit: it does not)"));
    if (e.infer.replicas > 1)
      row("samples/s", fmt::format("{:.1f} total ({:.1f} per replica x {} replicas)", e.infer.total_decode_tokens_per_second(),
                                   e.infer.decode_tokens_per_second, e.infer.replicas));
    else
      row("samples/s", fmt::format("{:.1f}{}", e.infer.decode_tokens_per_second, e.fits ? "" : " (would be, if it fit)"));
  } else {
    // The engine's prefill; behind a server the first token also waits for the request's handling and comes from the
    // engine's steps (chunked prefill, per-step overhead): what hwplan serve gives a lone request, so that the two
    // commands' TTFTs read the same.
    std::string server;
    if (auto served = served_ttft_seconds(in))
      server = fmt::format("; a lone request through a server, {} (hwplan serve on this layout, one at a time)",
                           human_seconds(*served));
    if (in.workload.prompt <= 0)
      row("prefill (TTFT)", "none: no prompt (decode from an empty context, as llama-bench's tg test; hwplan serve needs "
                            "a prompt of at least 1 token)");
    else
      row("prefill (TTFT)", human_seconds(e.infer.prefill_seconds) +
                                (e.fits            ? server
                                 : server.empty() ? std::string(" (would be, if it fit: it does not)")
                                                  : " (it does not fit with --headroom kept free, but the engine fills memory to its own "
                                                    "fraction and runs it" + server + ")"));
    if (in.workload.generate > 0) {
      // A plan that does not fit runs nowhere: its decode figures are what it would do (the engine-fraction case, which
      // runs, is the prefill row's to explain).
      const char* if_fit = e.fits || !server.empty() ? "" : "; would be, if it fit: it does not";
      row("time per output token", fmt::format("{} (typically within +/-{:.0f}%{}{})",
                                               human_seconds(e.infer.time_per_output_token_seconds),
                                               100 * band(Regime::kDecode).p80_relative_error,
                                               e.infer.decode_host_bound ? "; host-bound: the engine issues kernels slower than the GPU runs them" : "",
                                               if_fit));
      if (e.infer.replicas > 1)
        row("decode tokens/s", fmt::format("{:.1f} total ({:.1f} per replica x {} replicas, batch {} each{})",
                                           e.infer.total_decode_tokens_per_second(), e.infer.decode_tokens_per_second,
                                           e.infer.replicas, p.micro_batch, if_fit));
      else
        row("decode tokens/s", fmt::format("{:.1f} (batch {}{})", e.infer.decode_tokens_per_second, p.micro_batch, if_fit));
      row("total", human_seconds(e.infer.total_seconds) + (e.fits || !server.empty() ? "" : " (would be, if it fit: it does not)"));
    }
  }
  if (!e.training && in.workload.tokens && e.total_seconds >= 0) {
    const InferenceJobRate& rate = e.infer.job;
    const std::string what = std::string(rate.counts) == "samples" ? "samples" : std::string(rate.counts) + " tokens";
    row("job (--tokens)", fmt::format("{} for {} {} at {:.0f}/s: batches of {} back to back{}", human_seconds(e.total_seconds),
                                      human_count(*in.workload.tokens), what, rate.per_second,
                                      p.micro_batch * std::max(1, e.infer.replicas),
                                      e.fits ? "" : " (would be, if it fit: it does not)"));
  }
  return t;
}

std::string estimate_text(const EstimateInput& in, const Estimate& e, const SearchResult* search, Format format) {
  if (format == Format::kJson) return estimate_json(in, e, search).dump(2) + "\n";
  Table t = estimate_summary_table(in, e);
  if (search)
    t.rows.push_back({"layout search", fmt::format("{} layouts ({} fit)", search->layouts_evaluated,
                                                   search->layouts_feasible)});
  // A CSV keeps its warnings and notes as rows of its own (a program reading it gets them with the figures).
  if (format == Format::kCsv) {
    for (const auto& w : e.warnings) t.rows.push_back({"warning", w});
    for (const auto& n : e.notes) t.rows.push_back({"note", n});
  }
  std::string out = render(t, format);
  if (format == Format::kTable || format == Format::kMarkdown) {
    out += "\n";
    for (const auto& n : e.notes) out += "- " + n + "\n";
    for (const auto& w : e.warnings) out += (format == Format::kMarkdown ? "\n**warning:** " : "warning: ") + w + "\n";
  }
  return out;
}

}  // namespace hwplan::report
