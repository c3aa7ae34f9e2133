#include "recommend/fit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "recommend/query.hpp"

namespace hwplan {
namespace {

// What every change is tried on: the model and device the user named, resolved once.
struct Target {
  const Model& model;
  const Device& device;
};

struct Tried {
  bool ok = false;  // the combination is valid at all
  Estimate estimate;
  double seconds = 0;
};

// The time fit compares: step time (training), time per output token (inference with output), else prefill.
double compared_seconds(const Estimate& e, long long generate) {
  return e.training ? e.train.step_seconds
                    : (generate > 0 ? e.infer.time_per_output_token_seconds : e.infer.prefill_seconds);
}

Tried try_spec(const Target& target, const WorkloadSpec& w) {
  Tried t;
  try {
    Query q = resolve_query(target.model, target.device, w, w.count);
    Outcome o = run_query(q);
    if (no_layout(o)) return t;  // no layout of this variant: not a configuration
    t.ok = true;
    t.estimate = o.estimate;
    t.seconds = compared_seconds(t.estimate, w.generate);
  } catch (const InputError&) {
  }
  return t;
}

// Largest value in [1, hi] for which `fits(v)` holds, assuming monotonicity; nullopt when even 1 fails.
std::optional<long long> largest(long long hi, const std::function<bool(long long)>& fits) {
  if (!fits(1)) return std::nullopt;
  long long lo = 1;
  long long probe = 2;
  while (probe <= hi && fits(probe)) {
    lo = probe;
    probe *= 2;
  }
  long long top = std::min(probe, hi + 1);  // fits(lo) true, fits(top) false or out of range
  while (top - lo > 1) {
    long long mid = lo + (top - lo) / 2;
    if (fits(mid)) lo = mid;
    else top = mid;
  }
  return lo;
}

struct Change {
  std::string words;
  std::string flags;
  bool quality;
  std::function<bool(WorkloadSpec&)> apply;  // false when not applicable
  // Tried only in combination with others: alone, add_batch_change offers the largest micro-batch that fits.
  bool combination_only = false;
};

double slowdown_of(double seconds, double baseline_seconds) {
  return baseline_seconds > 0 ? seconds / baseline_seconds - 1 : 0;
}

// The changes that save memory in training, cheapest in spirit first. `device` must outlive the result.
std::vector<Change> training_changes(const Device& device, long long count, const WorkloadSpec& base) {
  std::vector<Change> changes;
  changes.push_back({"bf16 mixed precision instead of fp32", "--precision bf16", false, [&device](WorkloadSpec& w) {
                       if (w.precision != "fp32" && w.precision != "tf32") return false;
                       w.precision = device.supports(Precision::kBf16) ? "bf16" : "fp16";
                       return true;
                     }});
  changes.push_back({"flash attention instead of eager", "--attention flash", false, [](WorkloadSpec& w) {
                       if (w.attention == "flash") return false;
                       w.attention = "flash";
                       return true;
                     }});
  changes.push_back({"selective activation recomputation", "--recompute selective", false, [](WorkloadSpec& w) {
                       if (w.recompute && *w.recompute != "none") return false;
                       w.recompute = "selective";
                       return true;
                     }});
  changes.push_back({"full activation recomputation (gradient checkpointing)", "--recompute full", false, [](WorkloadSpec& w) {
                       if (w.recompute && *w.recompute == "full") return false;
                       w.recompute = "full";
                       return true;
                     }});
  changes.push_back({"8-bit Adam optimizer", "--optimizer adam8bit", false, [](WorkloadSpec& w) {
                       if (w.optimizer == "adam8bit" || w.task == "lora" || w.task == "qlora") return false;
                       w.optimizer = "adam8bit";
                       return true;
                     }});
  // Accumulation that reduces the gradients in every micro-batch instead of holding them unsharded until the last
  // (accelerate's sync_each_batch=True; a loop without no_sync()): same numerics, more reductions.
  changes.push_back({"gradients reduced every micro-batch (no no_sync accumulation)", "--defer-grad-sync off", false,
                     [](WorkloadSpec& w) {
                       if (w.task == "infer" || (w.defer_grad_sync && !*w.defer_grad_sync)) return false;
                       w.defer_grad_sync = false;
                       return true;
                     }});
  for (int z = 1; z <= 3; ++z)
    changes.push_back({"ZeRO-" + std::to_string(z) + " sharding across the " + std::to_string(count) + " devices",
                       "--zero " + std::to_string(z), false, [z](WorkloadSpec& w) {
                         if (w.count < 2 || w.zero.value_or(0) >= z) return false;
                         w.zero = z;
                         return true;
                       }});
  // Long sequences: split each one over the devices, its activations with it. Megatron and torchtitan have
  // context parallelism; from another stack the change is to torchtitan, the PyTorch-native one that has it.
  auto context_parallel = [count](bool switch_stack) {
    return [count, switch_stack](WorkloadSpec& w) {
      const bool has_it = w.framework && (*w.framework == "megatron" || *w.framework == "torchtitan");
      if (count < 2 || w.count < 2 || w.task == "infer" || w.cp.value_or(1) > 1 || has_it == switch_stack) return false;
      if (switch_stack) w.framework = "torchtitan";
      w.cp = count;
      w.tp.reset();
      w.dp.reset();
      return true;
    };
  };
  const std::string cp_words = "context parallelism: each sequence split over the " + std::to_string(count) + " devices";
  changes.push_back({cp_words, "--cp " + std::to_string(count), false, context_parallel(false)});
  changes.push_back({cp_words + " (torchtitan)", "--framework torchtitan --cp " + std::to_string(count), false,
                     context_parallel(true)});
  changes.push_back({"LoRA fine-tuning instead of full training", "--task lora", true, [](WorkloadSpec& w) {
                       if (w.task == "lora" || w.task == "qlora") return false;
                       w.task = "lora";
                       w.optimizer = "adamw";
                       return true;
                     }});
  changes.push_back({"QLoRA (4-bit NF4 base weights)", "--task qlora", true, [](WorkloadSpec& w) {
                       if (w.task == "qlora") return false;
                       w.task = "qlora";
                       w.optimizer = "adamw";
                       return true;
                     }});
  changes.push_back({"offload optimizer state to host memory", "--offload optimizer", false, [](WorkloadSpec& w) {
                       if (w.offload != "none") return false;
                       w.offload = "optimizer";
                       return true;
                     }});
  changes.push_back({"offload parameters and optimizer to host memory", "--offload params", false, [](WorkloadSpec& w) {
                       if (w.offload == "params") return false;
                       w.offload = "params";
                       return true;
                     }});
  // One sequence per micro-step, the same global batch by accumulation: with the others, where a smaller micro-batch
  // alone does not fit (add_batch_change) but beside recomputation or QLoRA does.
  const long long batch = base.batch.value_or(1);
  const long long accum = base.grad_accum.value_or(1) * batch;
  changes.push_back({"micro-batch 1 with gradient accumulation (same global batch)",
                     base.global_batch ? std::string("--batch 1") : "--batch 1 --grad-accum " + std::to_string(accum), false,
                     [](WorkloadSpec& w) {
                       const long long b = w.batch.value_or(1);
                       // With both the global batch and the accumulation given, the micro-batch is theirs to set.
                       if (b <= 1 || (w.global_batch && w.grad_accum)) return false;
                       if (w.global_batch) w.grad_accum.reset();
                       else w.grad_accum = w.grad_accum.value_or(1) * b;
                       w.batch = 1;
                       return true;
                     },
                     true});
  return changes;
}

// The changes that save memory in inference: lower-precision weights and KV cache.
std::vector<Change> inference_changes() {
  std::vector<Change> changes;
  changes.push_back({"int8 weights", "--weights int8", true, [](WorkloadSpec& w) {
                       if (w.weights && (*w.weights == "int8" || *w.weights == "int4" || *w.weights == "q4_0" || *w.weights == "q4_k_m" || *w.weights == "nf4")) return false;
                       w.weights = "int8";
                       return true;
                     }});
  changes.push_back({"int4 weights (GPTQ/AWQ-style)", "--weights int4", true, [](WorkloadSpec& w) {
                       if (w.weights && (*w.weights == "int4" || *w.weights == "q4_0" || *w.weights == "q4_k_m" || *w.weights == "nf4")) return false;
                       w.weights = "int4";
                       return true;
                     }});
  changes.push_back({"fp8 KV cache", "--kv-cache fp8", true, [](WorkloadSpec& w) {
                       if (w.kv_cache && (*w.kv_cache == "fp8" || *w.kv_cache == "int8")) return false;
                       w.kv_cache = "fp8";
                       return true;
                     }});
  return changes;
}

// Each change alone; a change that neither saves memory nor time is no advice (selective recomputation under
// flash attention, which already recomputes the attention scores).
void add_single_changes(const Target& target, const WorkloadSpec& base, const std::vector<Change>& changes,
                        FitReport& report) {
  for (const auto& c : changes) {
    if (c.combination_only) continue;
    WorkloadSpec w = base;
    if (!c.apply(w)) continue;
    Tried t = try_spec(target, w);
    if (!t.ok) continue;
    if (t.estimate.memory.total() > 0.99 * report.baseline.memory.total() && t.seconds >= report.baseline_seconds * 0.999 &&
        t.estimate.fits == report.baseline.fits)
      continue;
    // Offloading more than a host of the class holds is no way to fit (estimate warns of it).
    const bool host_short = t.estimate.fits && t.estimate.host_memory_short;
    FitChange fc{c.words + (host_short ? " (more host memory than a typical host has)" : ""), c.flags,
                 t.estimate.fits && !host_short, t.estimate.memory.total(), t.seconds,
                 slowdown_of(t.seconds, report.baseline_seconds), c.quality};
    report.changes.push_back(fc);
  }
}

// Whether the largest micro-batch that fits is a change worth offering: a smaller one than asked; a larger one only
// where the one asked does not fit (with gradients held unsharded until the last micro-batch, the one that needs no
// accumulation can fit where smaller ones do not).
bool offer_micro_batch(const std::optional<long long>& largest_fitting, long long asked, const FitReport& report) {
  return largest_fitting && *largest_fitting != asked && (*largest_fitting < asked || !report.baseline.fits);
}

// Smaller micro-batch with gradient accumulation keeps the global batch (training), smaller batch (inference).
void add_batch_change(const Target& target, const WorkloadSpec& base, bool inference, FitReport& report) {
  const long long batch = base.batch.value_or(1);
  if (!inference && base.global_batch) {
    // With a --global-batch the accumulation follows from it: the micro-batches are its divisors (those the layout's
    // data-parallel ranks also divide), and the largest that fits is the largest of them that runs and fits.
    std::optional<Tried> best;
    for (long long b = std::min<long long>(*base.global_batch, std::max<long long>(batch * 64, 1LL << 20)); b >= 1; --b) {
      if (*base.global_batch % b != 0) continue;
      WorkloadSpec w = base;
      w.batch = b;
      w.grad_accum.reset();
      Tried t = try_spec(target, w);
      if (t.ok && t.estimate.fits) {
        report.max_micro_batch = b;
        best = std::move(t);
        break;
      }
    }
    if (!best || !offer_micro_batch(report.max_micro_batch, batch, report)) return;
    const long long b = *report.max_micro_batch;
    report.changes.push_back({"micro-batch " + std::to_string(b) + " with gradient accumulation x" +
                                  std::to_string(best->estimate.plan.grad_accum) + " (same global batch)",
                              "--batch " + std::to_string(b), true, best->estimate.memory.total(), best->seconds,
                              slowdown_of(best->seconds, report.baseline_seconds), false});
    return;
  }
  auto with_batch = [&](long long b) {
    WorkloadSpec w = base;
    w.batch = b;
    if (!inference) w.grad_accum = std::max<long long>(1, base.grad_accum.value_or(1) * batch / b);
    return w;
  };
  auto fits_with_batch = [&](long long b) {
    Tried t = try_spec(target, with_batch(b));
    return t.ok && t.estimate.fits;
  };
  // Searched far beyond any batch a device holds, so that the answer is never the search's own limit.
  report.max_micro_batch = largest(std::max<long long>(batch * 64, 1LL << 20), fits_with_batch);
  // The search assumes memory grows with the micro-batch; under deferred gradient sync the micro-batch that needs no
  // accumulation holds no unsharded gradients and can fit beyond it.
  const long long unaccumulated = batch * base.grad_accum.value_or(1);
  if (!inference && unaccumulated > batch && (!report.max_micro_batch || *report.max_micro_batch < unaccumulated) &&
      fits_with_batch(unaccumulated))
    report.max_micro_batch = unaccumulated;
  if (!offer_micro_batch(report.max_micro_batch, batch, report)) return;
  const WorkloadSpec w = with_batch(*report.max_micro_batch);
  Tried t = try_spec(target, w);
  std::string words = inference ? "batch " + std::to_string(*report.max_micro_batch) + " instead of " + std::to_string(batch)
                                : "micro-batch " + std::to_string(*report.max_micro_batch) + " with gradient accumulation x" +
                                      std::to_string(*w.grad_accum) + " (same global batch)";
  report.changes.push_back({words, "--batch " + std::to_string(*w.batch) + (inference ? "" : " --grad-accum " + std::to_string(*w.grad_accum)),
                            t.estimate.fits, t.estimate.memory.total(), t.seconds,
                            slowdown_of(t.seconds, report.baseline_seconds), false});
}

// Inference that nothing else makes fit: as many layers on the device as fit, the rest in host memory (llama.cpp's
// -ngl, which runs them on the host's CPU; the engine the user named where it was another, which streams them to the
// device; the most that fit where the user's own count does not). The numerics stay; the speed falls with every layer
// left out. Only on a device with memory of its own.
void add_offload_change(const Target& target, const WorkloadSpec& base, FitReport& report) {
  const Device& d = target.device;
  if (report.baseline.fits || !target.model.is_transformer() || !can_leave_layers_in_host(d) ||
      (base.gpu_layers && *base.gpu_layers == "auto"))
    return;
  WorkloadSpec w = base;
  const bool llamacpp = !base.engine || *base.engine == "llamacpp";
  if (llamacpp) w.engine = "llamacpp";
  w.gpu_layers = "auto";
  Tried t = try_spec(target, w);
  if (!t.ok || !t.estimate.fits) return;
  const long long total = target.model.total_layers();
  const std::string engine = llamacpp && base.engine != w.engine ? "--engine llamacpp " : "";
  const bool short_host = t.estimate.host_memory_short;
  const std::string host_note = short_host ? " (more host memory than a typical host has)" : "";
  FitChange c{"", "", !short_host, t.estimate.memory.total(), t.seconds, slowdown_of(t.seconds, report.baseline_seconds), false};
  if (t.estimate.memory.offloaded_bytes <= 0) {
    // The engine's own footprint made the difference: every layer fits under llama.cpp.
    c.change = "llama.cpp's footprint (every layer fits on the device)" + host_note;
    c.flags = "--engine llamacpp";
  } else {
    const long long n = total - std::llround(t.estimate.infer.offload_host_layers);
    c.change = std::to_string(n) + " of " + std::to_string(total) + " layers on the device, the rest in host memory" +
               (llamacpp ? " run by the CPU (llama.cpp)" : " streamed over " + d.host_link.type) + host_note;
    c.flags = engine + "--gpu-layers " + std::to_string(n);
  }
  // Offered only where no other single change fits: first.
  report.changes.insert(report.changes.begin(), c);
}

// The workload at sequence (training) or context (inference, prompt and output in the same proportion) `s`.
WorkloadSpec with_length(const WorkloadSpec& base, bool inference, long long s) {
  WorkloadSpec w = base;
  if (inference) {
    long long total = base.prompt + base.generate;
    w.prompt = std::max<long long>(0, s * base.prompt / std::max<long long>(1, total));
    w.generate = s - w.prompt;
  } else {
    w.seq = s;
  }
  return w;
}

// Longest sequence / context that fits as configured.
void add_length_change(const Target& target, const WorkloadSpec& base, const Model& model, bool inference,
                       long long current, FitReport& report) {
  report.model_context = model.max_sequence_length;
  long long limit = std::max<long long>(std::max<long long>(model.max_sequence_length, 1) * 8, 1LL << 24);
  report.max_seq = largest(limit, [&](long long s) {
    Tried t = try_spec(target, with_length(base, inference, s));
    return t.ok && t.estimate.fits;
  });
  if (!report.max_seq || *report.max_seq >= current) return;
  WorkloadSpec w = with_length(base, inference, *report.max_seq);
  Tried t = try_spec(target, w);
  report.changes.push_back({(inference ? "context of " : "sequence length ") + std::to_string(*report.max_seq) + " tokens instead of " +
                                std::to_string(current),
                            inference ? "--prompt " + std::to_string(w.prompt) + " --generate " + std::to_string(w.generate)
                                      : "--seq " + std::to_string(*report.max_seq),
                            t.ok && t.estimate.fits, t.ok ? t.estimate.memory.total() : 0, t.ok ? t.seconds : 0,
                            t.ok ? slowdown_of(t.seconds, report.baseline_seconds) : 0, true});
}

// When no single change fits: every pair (then triple) of changes is tried (numerics-changing ones too, marked),
// and the one that fits at the lowest time wins; at equal time (within 2%) the one that keeps the model's
// numerics. The standard fix for 8 GB cards, QLoRA with gradient checkpointing, is such a pair.
void add_combinations(const Target& target, const WorkloadSpec& base, const std::vector<Change>& changes,
                      FitReport& report) {
  const int n = static_cast<int>(changes.size());
  std::optional<FitChange> best;
  auto consider = [&](const std::vector<int>& picks) {
    WorkloadSpec w = base;
    std::string flags, words;
    bool quality = false;
    for (int i : picks) {
      if (!changes[i].apply(w)) return;  // superseded by another in the set: the smaller set covers it
      quality = quality || changes[i].quality;
      flags += (flags.empty() ? "" : " ") + changes[i].flags;
      words += (words.empty() ? "" : " + ") + changes[i].words;
    }
    Tried t = try_spec(target, w);
    if (!t.ok || !t.estimate.fits || t.estimate.host_memory_short) return;
    FitChange c{words, flags, true, t.estimate.memory.total(), t.seconds, slowdown_of(t.seconds, report.baseline_seconds),
                quality};
    report.combinations.push_back(c);
    if (!best) {
      best = c;
      return;
    }
    const bool similar = std::fabs(c.seconds - best->seconds) <= 0.02 * best->seconds;
    if (similar ? (!c.quality_change && best->quality_change) || (c.quality_change == best->quality_change && picks.size() < 3 &&
                                                                  c.seconds < best->seconds)
                : c.seconds < best->seconds)
      best = c;
  };
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) consider({i, j});
  if (!best)
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j)
        for (int k = j + 1; k < n; ++k) consider({i, j, k});
  report.combined = best;
  std::stable_sort(report.combinations.begin(), report.combinations.end(),
                   [](const FitChange& a, const FitChange& b) { return a.seconds < b.seconds; });
  if (report.combinations.size() > 5) report.combinations.resize(5);
}

}  // namespace

FitReport fit_advice(const Model& model, const Device& device, const WorkloadSpec& given) {
  FitReport report;
  const Target target{model, device};
  Query q0 = resolve_query(model, device, given, given.count);  // validates the flags (throws on bad input)
  // The lengths as resolved (an encoder generates nothing and reads its whole context): every variant starts there.
  WorkloadSpec base = given;
  if (base.task == "infer") {
    base.prompt = q0.input.workload.prompt;
    base.generate = q0.input.workload.generate;
  }
  Outcome o0 = run_query(q0);
  if (no_layout(o0)) throw no_layout_error(q0, "--count");
  report.baseline = o0.estimate;
  const bool inference = base.task == "infer";
  report.baseline_seconds = compared_seconds(o0.estimate, base.generate);

  const std::vector<Change> changes = inference ? inference_changes() : training_changes(*q0.device, base.count, base);
  add_single_changes(target, base, changes, report);
  add_batch_change(target, base, inference, report);
  if (q0.model.is_transformer())
    add_length_change(target, base, q0.model, inference,
                      inference ? base.prompt + base.generate : q0.input.workload.seq, report);
  std::stable_sort(report.changes.begin(), report.changes.end(), [](const FitChange& a, const FitChange& b) {
    if (a.fits != b.fits) return a.fits;
    if (a.quality_change != b.quality_change) return !a.quality_change;  // prefer changes that keep the model's numerics
    return a.slowdown < b.slowdown;
  });
  auto any_fits = [&] { return std::any_of(report.changes.begin(), report.changes.end(), [](const FitChange& c) { return c.fits; }); };
  if (inference && !any_fits()) add_offload_change(target, base, report);
  if (!report.baseline.fits && !any_fits()) add_combinations(target, base, changes, report);
  return report;
}

}  // namespace hwplan
