#include "recommend/serve_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/strings.hpp"
#include "estimators/comm.hpp"
#include "estimators/estimate.hpp"
#include "estimators/stack.hpp"
#include "io/trace_io.hpp"

namespace hwplan {
namespace {

constexpr long long kDefaultRequests = 2000;
constexpr long long kMaxDefaultTraceRequests = 20000;

[[noreturn]] void bad(const std::string& flag, const std::string& message) { throw InputError({}, flag, message); }

// One of a flag's named values, or an exit-2 error listing them.
template <typename T>
T pick(const std::string& flag, const std::string& value, std::initializer_list<std::pair<const char*, T>> choices) {
  std::string names;
  for (const auto& [name, v] : choices) {
    if (value == name) return v;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  bad(flag, "'" + value + "' is not one of: " + names);
}

void positive(const std::string& flag, const std::optional<double>& v, double hi) {
  if (v && (!std::isfinite(*v) || *v <= 0 || *v > hi)) bad(flag, fmt::format("must be a positive number up to {:g}", hi));
}


serve::EngineConfig engine_config(const ServeSpec& o, Engine engine, const Device& device) {
  serve::EngineConfig e = serve::engine_config(engine, device.plan_memory_bytes(), device.name, host_time_ratio(device));
  if (o.block_size) {
    if (*o.block_size < 1 || *o.block_size > 4096) bad("--block-size", "must be 1 to 4096 tokens");
    e.block_tokens = static_cast<int>(*o.block_size);
  }
  if (o.kv_memory_fraction) {
    if (!(*o.kv_memory_fraction > 0 && *o.kv_memory_fraction <= 1)) bad("--kv-memory-fraction", "must be in (0, 1]");
    e.kv_memory_fraction = *o.kv_memory_fraction;
    e.kv_fraction_by_tp = false;
  }
  if (o.max_batched_tokens) {
    if (*o.max_batched_tokens < 1 || *o.max_batched_tokens > 10'000'000) bad("--max-batched-tokens", "must be 1 to 10,000,000");
    e.max_batched_tokens = *o.max_batched_tokens;
  }
  if (o.scheduler_steps) {
    if (*o.scheduler_steps < 1 || *o.scheduler_steps > 1024) bad("--scheduler-steps", "must be 1 to 1024");
    e.scheduler_steps = static_cast<int>(*o.scheduler_steps);
  }
  if (o.max_sequences) {
    if (*o.max_sequences < 1 || *o.max_sequences > 1'000'000) bad("--max-sequences", "must be 1 to 1,000,000");
    e.max_sequences = *o.max_sequences;
  }
  if (o.request_overhead_ms) {
    if (!std::isfinite(*o.request_overhead_ms) || *o.request_overhead_ms < 0 || *o.request_overhead_ms > 100000)
      bad("--request-overhead-ms", "must be between 0 and 100,000 ms");
    e.request_overhead_seconds = *o.request_overhead_ms / 1000;
  }
  using serve::KvAdmission, serve::KvProfile;
  // On/off switches take what the other switches take (parse_on_off: Python's booleans too).
  auto on_off = [](const std::string& flag, const std::string& v) {
    if (auto b = parse_on_off(v)) return *b;
    bad(flag, "'" + v + "' is not one of: on, off");
  };
  if (o.chunked_prefill) e.chunked_prefill = on_off("--chunked-prefill", *o.chunked_prefill);
  if (o.separate_prefill) e.separate_prefill = on_off("--separate-prefill", *o.separate_prefill);
  if (o.preempted_kv) e.keep_preempted_kv = pick<bool>("--preempted-kv", *o.preempted_kv, {{"cached", true}, {"freed", false}});
  if (o.kv_profile) {
    e.kv_profile = pick<KvProfile>("--kv-profile", *o.kv_profile,
                                   {{"allocated-peak", KvProfile::kAllocatedPeak}, {"device-used", KvProfile::kDeviceUsed}});
    // Only a cache sized as a share of the whole device (vLLM's) depends on how its profiling pass counts memory.
    if (e.kv_budget != serve::KvBudget::kShareOfDevice)
      bad("--kv-profile", "applies to vLLM's cache sizing (a share of the whole device); " + e.preset +
                              " sizes its cache from " + serve::to_string(e.kv_budget) + " memory");
  }
  if (o.kv_admission)
    e.kv_admission = pick<KvAdmission>("--kv-admission", *o.kv_admission,
                                       {{"on-demand", KvAdmission::kOnDemand}, {"estimate", KvAdmission::kEstimate},
                                        {"reserve", KvAdmission::kReserve}});
  return e;
}

// Layouts to try, (tp, pp): the ones given, or tensor-parallel powers of two within a node that divide the heads
// (and the given device count when there are no targets to search with); then pipelines of 2, 4 and 8 stages of
// the largest of them, for models that need more than a node (vLLM's pipeline parallelism across nodes). An engine
// that splits models by layers (llama.cpp) gets pipelines only, unless --tp is given.
std::vector<std::pair<int, int>> layout_candidates(const ServeSpec& o, const Model& m, const Device& d, bool search,
                                                   bool layer_split) {
  if (o.workload.tp && o.workload.pp) return {{static_cast<int>(*o.workload.tp), static_cast<int>(*o.workload.pp)}};
  if (d.host_link.standalone()) return {{1, 1}};
  std::vector<int> tps;
  if (o.workload.tp) {
    tps.push_back(static_cast<int>(*o.workload.tp));
  } else if (layer_split) {
    tps.push_back(1);
  } else {
    // Within a node, or within a scale-up fabric that spans hosts (a TPU pod's ICI), as the training search places it.
    System span_of;
    span_of.devices_per_node = static_cast<int>(o.workload.devices_per_node);
    for (int tp = 1; tp <= std::min<long long>(scale_up_span(d, span_of), 64); tp *= 2) {
      if (m.is_transformer() && m.attention_heads % tp != 0) break;
      if (!search && o.workload.count % tp != 0) continue;
      tps.push_back(tp);
    }
  }
  std::vector<std::pair<int, int>> out;
  if (o.workload.pp) {
    for (int tp : tps) out.push_back({tp, static_cast<int>(*o.workload.pp)});
    return out;
  }
  for (int tp : tps) out.push_back({tp, 1});
  if (!tps.empty() && m.is_transformer()) {
    if (search) {
      const int tp = tps.back();
      for (int pp = 2; pp <= 8 && pp <= m.total_layers(); pp *= 2) out.push_back({tp, pp});
    } else {
      // The devices given: every pipeline depth that splits them into whole replicas, not only powers of two (three
      // devices serve a model too large for one as a pipeline of three when its heads do not split three ways).
      for (int tp : tps)
        for (long long pp = 2; pp <= std::min<long long>(o.workload.count / tp, 64) && pp <= m.total_layers(); ++pp)
          if (o.workload.count % (tp * pp) == 0) out.push_back({tp, static_cast<int>(pp)});
    }
  }
  return out;
}

}  // namespace

serve::LengthDist read_length_dist(const std::string& flag, const std::optional<std::string>& spec, long long fixed) {
  serve::LengthDist d;
  if (!spec) {
    d.fixed = fixed;
    return d;
  }
  if (spec->rfind("file:", 0) == 0) {
    d.kind = serve::LengthKind::kEmpirical;
    const std::string path = spec->substr(5);
    try {
      d.values = io::load_lengths(path);
    } catch (const InputError& e) {
      // A file that cannot be read at all: name the flag that gave it (errors inside the file name its line).
      if (e.key() == "file") throw InputError({}, flag, "'" + path + "': " + e.detail());
      throw;
    }
    return d;
  }
  return serve::parse_length_dist(flag, *spec);
}

ServeSetup prepare_serve(const Model& named_model, const Device& named_device, ServeSpec& o, ProfileScope scope) {
  ServeSetup out;
  WorkloadSpec& w = o.workload;
  if (w.task != "infer") bad("--task", "serve is inference: leave --task out (or give infer)");
  if (w.devices_per_node < 1 || w.devices_per_node > 1'000'000) bad("--devices-per-node", "must be 1 to 1,000,000");
  if (w.tp && (*w.tp < 1 || *w.tp > 1024)) bad("--tp", "must be 1 to 1024 tensor-parallel ranks");
  if (w.pp && (*w.pp < 1 || *w.pp > 64)) bad("--pp", "must be 1 to 64 pipeline stages");
  if (w.dp) bad("--dp", "serve finds the replicas itself; give --tp for the layout of one replica");
  if (w.batch) bad("--batch", "serve batches continuously; use --max-sequences to cap the batch");
  // The simulated engines hold the whole model in device memory; layers left in host memory are estimate's.
  for (const auto& [flag, given] : {std::pair{"--gpu-layers", w.gpu_layers.has_value()},
                                    std::pair{"--host-memory-gbps", w.host_memory_gbps.has_value()},
                                    std::pair{"--host-tflops", w.host_tflops.has_value()}})
    if (given)
      bad(flag, "serve simulates engines that hold the whole model in device memory; layers left in host memory are "
                "timed by hwplan estimate --task infer --gpu-layers");
  if (w.prompt < 1 && !o.prompt_dist && !o.trace) bad("--prompt", "must be at least 1 token for serving");
  if (w.generate < 1 && !o.generate_dist && !o.trace) bad("--generate", "must be at least 1 token for serving");
  out.model = named_model;
  const Model& model = out.model;
  out.device = &named_device;
  const Device& device = *out.device;
  if (!model.is_transformer()) bad("--model", model.id + " is not a transformer language model: nothing to serve token by token");
  if (!model.generates())
    bad("--model", model.id + " is an encoder: one forward pass over its input, nothing to serve token by token "
                              "(hwplan estimate --task infer gives its batch latency)");

  // Traffic.
  serve::ServeQuestion& q = out.question;
  if (!(o.own_years > 0 && o.own_years <= 20)) bad("--own-years", "must be in (0, 20]");
  q.own_years = o.own_years;
  serve::Traffic& t = q.traffic;
  std::string& traffic_words = out.traffic;
  if (o.rate && o.concurrency) bad("--concurrency", "give --rate (open loop) or --concurrency (closed loop), not both");
  positive("--rate", o.rate, 1e7);
  if (o.concurrency && (*o.concurrency < 1 || *o.concurrency > 1'000'000)) bad("--concurrency", "must be 1 to 1,000,000");
  if (o.arrival != "poisson" && o.arrival != "gamma") bad("--arrival", "'" + o.arrival + "' is not one of: poisson, gamma");
  if (o.burstiness && (!std::isfinite(*o.burstiness) || *o.burstiness < 0.05 || *o.burstiness > 20))
    bad("--burstiness", "must be a coefficient of variation between 0.05 and 20");
  if (!std::isfinite(o.prefix_cache_hit) || o.prefix_cache_hit < 0 || o.prefix_cache_hit > 1) bad("--prefix-cache-hit", "must be in [0, 1]");
  if (o.seed < 0) bad("--seed", "must be a non-negative integer");
  t.prefix_cache_hit = o.prefix_cache_hit;
  t.seed = static_cast<std::uint64_t>(o.seed);
  // A distribution gives the lengths: a --prompt or --generate beside it would be ignored.
  if (o.prompt_dist && (w.prompt_given || w.prompt != WorkloadSpec{}.prompt))
    bad("--prompt", "--prompt-dist gives the prompt lengths: leave --prompt out");
  if (o.generate_dist && (w.generate_given || w.generate != WorkloadSpec{}.generate))
    bad("--generate", "--generate-dist gives the output lengths: leave --generate out");
  t.prompt = read_length_dist("--prompt-dist", o.prompt_dist, w.prompt);
  t.output = read_length_dist("--generate-dist", o.generate_dist, w.generate);
  if (o.trace) {
    if (o.prompt_dist || o.generate_dist) bad("--trace", "the trace gives the lengths: leave --prompt-dist / --generate-dist out");
    // A --prompt or --generate other than the defaults would be ignored: say so rather than drop it.
    const bool prompt_set = w.prompt_given || w.prompt != WorkloadSpec{}.prompt;
    if (prompt_set || w.generate_given || w.generate != WorkloadSpec{}.generate)
      bad(prompt_set ? "--prompt" : "--generate", "the --trace gives the lengths: leave it out");
    t.arrival = serve::ArrivalKind::kTrace;
    long long failed = 0;
    t.trace = io::load_trace(*o.trace, &failed);
    if (failed > 0)
      out.warnings.push_back(fmt::format("{} of {}'s {} requests failed in the benchmark (output 0) and are left out, as its "
                                         "own metrics leave them", failed, *o.trace, failed + static_cast<long long>(t.trace.size())));
    t.prompt.kind = t.output.kind = serve::LengthKind::kEmpirical;
    for (const auto& r : t.trace) {
      t.prompt.values.push_back(r.prompt_tokens);
      t.output.values.push_back(r.output_tokens);
    }
    if (!o.rate && !o.concurrency && !(t.trace_rate() > 0))
      bad("--trace", *o.trace + " has no arrival times: give --rate or --concurrency");
    if (!o.rate && !o.concurrency) o.rate = t.trace_rate();
  } else {
    if (!o.rate && !o.concurrency) bad("--rate", "give the traffic: --rate R (requests/s), --concurrency C or --trace FILE");
    t.arrival = o.burstiness || o.arrival == "gamma" ? serve::ArrivalKind::kGamma : serve::ArrivalKind::kPoisson;
    t.burstiness_cv = o.burstiness.value_or(1);
  }
  if (o.concurrency && (o.burstiness || o.arrival == "gamma"))
    bad(o.burstiness ? "--burstiness" : "--arrival", "applies to open-loop --rate traffic (a closed loop's clients send on "
                                                     "completion)");
  if (o.arrival_given && o.arrival == "poisson" && o.burstiness)
    bad("--burstiness", "Poisson arrivals have a coefficient of variation of 1: --burstiness is for --arrival gamma");
  if (o.trace && (o.burstiness || o.arrival != "poisson"))
    bad(o.burstiness ? "--burstiness" : "--arrival", "the --trace gives the arrivals (or --rate / --concurrency replays its lengths)");
  // Lengths from a distribution or a trace: the longest beyond the model's trained context is said, as estimate says
  // it of a fixed --prompt and --generate (a lognormal's 99th percentile stands for its longest).
  if (o.prompt_dist || o.generate_dist || o.trace) {
    const double context = t.prompt.longest() + t.output.longest();
    if (context > static_cast<double>(named_model.max_sequence_length))
      out.warnings.push_back(fmt::format("the longest prompt and output together reach {:.0f} tokens, beyond {}'s trained context "
                                         "of {} (quality degrades, or the engine refuses them)",
                                         context, named_model.id, named_model.max_sequence_length));
  }
  // A trace's rows, up to 20,000 (a week of Azure traffic has millions: give --requests to simulate more). A closed
  // loop not given --requests simulates more where its clients need it (Traffic::requests_given).
  long long requests = o.requests.value_or(o.trace ? std::min<long long>(static_cast<long long>(t.trace.size()), kMaxDefaultTraceRequests)
                                                   : kDefaultRequests);
  t.requests_given = o.requests.has_value() && !o.requests_assumed;
  // Each simulated request holds about 150 bytes: a million is the most one run may ask for.
  if (o.trace && !o.requests && requests < 10)
    bad("--trace", fmt::format("{} has {} request row(s): a simulation needs at least 10", *o.trace, requests));
  if (requests < 10 || requests > 1'000'000) bad("--requests", "must be 10 to 1,000,000");
  t.requests = requests;
  if (o.warmup) {
    if (!std::isfinite(*o.warmup) || *o.warmup < 0 || *o.warmup > 0.9) bad("--warmup", "must be in [0, 0.9]");
    t.warmup_fraction = *o.warmup;
  }
  q.load = o.concurrency ? serve::Load{true, static_cast<double>(*o.concurrency)} : serve::Load{false, *o.rate};
  if (o.trace) traffic_words = "trace " + *o.trace + (o.concurrency ? "" : ",");
  if (o.concurrency) traffic_words += fmt::format("{}closed loop of {} client(s)", o.trace ? ", " : "", *o.concurrency);
  else traffic_words += fmt::format(" {} {:.4g} requests/s", t.arrival == serve::ArrivalKind::kGamma ? fmt::format("gamma (CV {:g})", t.burstiness_cv) : o.trace ? "at" : "Poisson", *o.rate);
  if (!o.trace) traffic_words += fmt::format(", prompt {} / output {} tokens", o.prompt_dist.value_or(std::to_string(w.prompt)),
                                             o.generate_dist.value_or(std::to_string(w.generate)));
  if (traffic_words.front() == ' ') traffic_words.erase(0, 1);

  // Targets.
  positive("--ttft-p95", o.targets.ttft_p95, 1e6);
  positive("--ttft-p99", o.targets.ttft_p99, 1e6);
  positive("--tpot-p95", o.targets.tpot_p95, 1e6);
  positive("--tpot-p99", o.targets.tpot_p99, 1e6);
  positive("--e2e-p95", o.targets.e2e_p95, 1e6);
  positive("--e2e-p99", o.targets.e2e_p99, 1e6);
  q.targets = o.targets;
  const bool search = q.targets.any();
  std::vector<std::string>& warnings = out.warnings;
  if (search && w.count != 1) warnings.push_back("--count is not used with latency targets: the devices needed are what is searched");
  if (w.count < 1) bad("--count", fmt::format("{} devices: must be at least 1", w.count));
  if (device.streams_parameters())
    bad("--device", device.name + " has no memory of its own: its parameters stream from the host on every pass and a "
                    "serving engine's KV cache has nowhere to live (hwplan estimate --task infer times one request)");
  if (device.host_link.standalone() && (w.tp.value_or(1) > 1 || w.pp.value_or(1) > 1))
    bad(w.tp.value_or(1) > 1 ? "--tp" : "--pp",
        device.name + " is a standalone device: a replica is one device (--count N gives N replicas)");
  if (!search) {
    // The devices given are whole replicas of the layout asked (tp x pp devices each).
    const long long group = w.tp.value_or(1) * w.pp.value_or(1);
    if (group > 0 && w.count % group != 0) {
      const long long below = w.count / group * group, above = below + group;
      bad("--count", below > 0 ? fmt::format("{} device(s) are not whole replicas of tp x pp = {} devices (--count {} or {})",
                                             w.count, group, below, above)
                               : fmt::format("{} device(s) are not whole replicas of tp x pp = {} devices (--count {})",
                                             w.count, group, above));
    }
    q.devices = w.count;
  }

  // Engine.
  Engine engine = default_engine(model, device);
  // An NPU's runtime (Core ML, QNN) times the steps but has no serving scheduler of its own: an app on the device runs
  // a request loop of a few slots, as llama-server does.
  std::string npu_name = npu_runtime_named(w.engine, device);
  if (npu_name.empty()) npu_name = to_string(Engine::kNpuRuntime);  // named on a device that has none
  if (w.engine) {
    auto e = parse_engine(*w.engine);
    if (!e || (!serve::engine_served(*e) && *e != Engine::kNpuRuntime))
      bad("--engine", "'" + *w.engine + "' is not one of: vllm, sglang, trtllm, llamacpp, or an NPU's runtime (tflite, coreml, qnn)");
    engine = *e;
  }
  const bool npu = engine == Engine::kNpuRuntime;
  if (!w.engine || npu) {
    warnings.push_back(npu ? std::string(w.engine ? "" : "no --engine given: ") + npu_name +
                                 " times the steps under llama-server's scheduler defaults (an NPU runtime has no "
                                 "serving scheduler of its own)"
                       : engine == Engine::kLlamacpp ? "no --engine given: llama-server's defaults assumed (what runs on this device)"
                                                     : "no --engine given: vLLM's scheduler defaults assumed");
  }
  q.engine = engine_config(o, npu ? Engine::kLlamacpp : engine, device);
  if (npu) q.engine.preset = npu_name + " (llama-server's scheduler)";
  if (std::string share = gpu_memory_share_note(device); !share.empty()) warnings.push_back(share);
  if (!(w.headroom >= 0 && w.headroom <= 0.9)) bad("--headroom", "must be a fraction between 0 and 0.9 (0.05 keeps 5% free)");
  // The engine fills memory to its own fraction (--kv-memory-fraction); a --headroom given keeps that much free too.
  if (w.headroom_given) q.engine.memory_cap_fraction = 1 - w.headroom;
  if (o.step_overhead_ms) {
    if (!std::isfinite(*o.step_overhead_ms) || *o.step_overhead_ms < 0 || *o.step_overhead_ms > 10000)
      bad("--step-overhead-ms", "must be 0 to 10000 ms");
    q.overhead_seconds = *o.step_overhead_ms / 1000;
  }

  // Layouts: one query per tensor-parallel size (each validated the way estimate validates it).
  std::deque<Query>& queries = out.queries;
  std::vector<const EstimateInput*>& layouts = out.layouts;
  std::vector<InputError> refusals;
  for (auto [tp, pp] : layout_candidates(o, model, device, search, engine_preset(engine).layer_split)) {
    WorkloadSpec s = w;
    s.task = "infer";
    s.count = static_cast<long long>(tp) * pp;
    s.tp = tp;
    s.pp = pp;
    s.dp = 1;
    s.batch = 1;
    // The engine as the user gave it: with none, the stack is the one estimate assumes for the device (the same
    // default engine; on an edge device its runtime's quantized output projection and embedding).
    s.engine = w.engine;
    s.prompt = std::max(1LL, w.prompt);
    s.generate = std::max(1LL, w.generate);
    try {
      queries.push_back(resolve_query(model, device, s, s.count, scope));
    } catch (const InputError& e) {
      if (w.tp && w.pp) throw;  // the layout the user asked for is invalid: say why
      if (w.tp && !w.pp && pp == 1) throw;
      refusals.push_back(e);
      continue;
    }
    Query& qq = queries.back();
    qq.input.model = &qq.model;
    qq.input.profile = qq.profile.get();
    layouts.push_back(&qq.input);
  }
  if (layouts.empty()) {
    // Every layout refused for the same input (--weights int3, --kv-cache int3, an --ep serving does not price) or
    // for the same reason without a key (a --profile file that cannot be read): that is the error, not the count.
    const bool same = !refusals.empty() && std::all_of(refusals.begin(), refusals.end(), [&](const InputError& e) {
      const InputError& first = refusals.front();
      return e.key() == first.key() && (!e.key().empty() || std::string(e.what()) == first.what());
    });
    if (same) throw refusals.front();
    bad("--count", fmt::format("no tensor-parallel layout of {} fits {} devices", model.id, w.count));
  }
  // Inputs serving does not read (--seq, a global batch, an optimizer), said once, as estimate says them; and those
  // an inference estimate reads but a simulation of traffic does not.
  if (queries.front().ignored_inputs) out.warnings.push_back(queries.front().ignored_inputs->note("by serve"));
  // An engine that does not run on the device (trtllm on an MI300X), said as estimate says it.
  if (const std::string& p = layouts.front()->workload.stack.platform_warning; !p.empty() && w.engine) out.warnings.push_back(p);
  std::string unread;
  if (w.tokens) unread += "--tokens";
  if (w.memory_metric) unread += std::string(unread.empty() ? "" : ", ") + "--memory-metric";
  if (!unread.empty())
    out.warnings.push_back("ignored by serve: " + unread +
                           " (the traffic is --rate, --concurrency or --trace with --requests; the KV cache is sized from "
                           "the device's memory)");
  if (q.overhead_seconds < 0) q.overhead_seconds = layouts.front()->workload.stack.decode_step_overhead_seconds;
  q.engine.overlap_scheduling = layouts.front()->workload.stack.overlap_scheduling;
  return out;
}

}  // namespace hwplan
