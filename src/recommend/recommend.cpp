#include "recommend/recommend.hpp"
#include "io/profile_io.hpp"

#include <algorithm>
#include <string_view>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <future>
#include <map>

#include "core/power.hpp"
#include "estimators/estimate.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "estimators/training.hpp"
#include "estimators/search.hpp"
#include "tco/tco.hpp"
#include "recommend/query.hpp"
#include "estimators/inference.hpp"

namespace hwplan {
namespace {


bool listed(const std::vector<std::string>& list, const std::string& value) {
  if (list.empty()) return true;
  for (const auto& x : list)
    if (to_lower(x) == to_lower(value)) return true;
  return false;
}

// What buying one new costs today: the street price (a --prices quote replaces it) before the launch list price, as
// hwplan tco and the catalog price it.
std::optional<double> purchase_price(const Device& d) { return d.price.new_purchase_usd(); }

const char* basis_price_noun(const std::string& basis) {
  return basis == "rent" ? "rental" : "purchase";
}

// Owning `count` devices for `years` (hwplan tco's model and class defaults), busy for the job's hours, in hosts of
// `devices_per_host` (0: the class's default host).
double own_cost_usd(const Device& d, int count, double job_hours, double years, double power_fraction, int devices_per_host) {
  tco::Inputs in = tco::default_inputs(d, count, /*used=*/false, "on-demand");
  if (devices_per_host > 0) in.devices_per_host = devices_per_host;
  // A job longer than the horizon keeps the devices for the job's length (explain says so): never less electricity
  // and running cost than the job draws.
  in.years = std::max(years, job_hours / 8760);
  in.device_power_fraction = power_fraction;  // as the candidate's energy counts it
  in.utilization = std::clamp(job_hours / (in.years * 8760), 1e-9, 1.0);
  return tco::own_cost(d, in).total_usd;
}

bool needs_port(const Device& d) {
  return !d.has_software("cuda") && !d.has_software("rocm") && d.device_class != DeviceClass::kEdge;
}

struct DeviceResult {
  std::vector<Candidate> feasible;
  std::optional<Rejection> rejection;
  std::optional<Rejection> miss;
  long long configurations = 0;
  long long layouts = 0;
  // Every configuration of this device was refused as bad input (the first refusal kept): where every device's refusals
  // name the same flag, the input is at fault, not the hardware (recommend exits 2 naming the flag).
  std::optional<InputError> input_error;
  int input_error_count = 0;  // the count it was raised at
  bool only_input_errors = true;
};

// What every device of a recommend run is asked: the workload, the constraints and the job.
struct DeviceQuestion {
  const WorkloadSpec& workload;
  const RecommendSpec& spec;
  const Model& model;
  double job_tokens = 0;
  std::optional<double> deadline_s;
  const std::vector<int>& counts;
};

// Why a device is not ranked at all, before any count is tried: its role, or a budget its price cannot be
// checked against.
std::optional<Rejection> device_precheck(const Device& d, const DeviceQuestion& q, bool inference,
                                         const std::optional<double>& unit_price) {
  if (!inference && !d.training) {
    // The catalog's training flag says what the part is sold and supported for, not what its stack can run:
    // PyTorch for Jetson and CANN on an inference SKU train small models.
    return Rejection{d.id, "inference-oriented part (catalog training: false; its notes say why), not ranked for training", ""};
  }
  // One basis for the whole list (choose_cost_basis). Without a price on it the device is still ranked on time
  // and energy, unless a budget has to be checked.
  if (!unit_price && q.spec.budget_usd)
    return Rejection{d.id, fmt::format("no {} price in the catalog: the budget cannot be checked", basis_price_noun(q.spec.cost_basis)),
                     price_fix(d, q.spec.cost_basis)};
  return std::nullopt;
}

// A configuration that fits, as a candidate: its speed, the job's wall-clock time, energy and cost on the list's
// basis (-1 when the device has no price on it: never counted as free).
Candidate measure(const Device& d, int count, const Query& query, const Estimate& e, const DeviceQuestion& q,
                  bool inference, const std::optional<double>& unit_price) {
  const std::string& basis = q.spec.cost_basis;
  Candidate c;
  c.device = &d;
  c.count = count;
  c.estimate = e;
  c.stack = query.input.workload.stack.preset;
  c.stack_assumed = query.input.workload.stack.preset_assumed;
  c.cost_basis = basis;
  c.power_w = count * d.tdp_w;
  if (inference) {
    // The per-stream time: a token's, or where nothing is generated (an encoder, --generate 0) the forward pass's.
    c.step_seconds = one_forward_pass(q.model, query.input.workload.generate) ? e.infer.prefill_seconds
                                                                              : e.infer.time_per_output_token_seconds;
    // The job is batches of whole requests, prefill and decode, as hwplan tco and estimate --tokens count it
    // (InferenceTime::job). The lengths as resolved: an encoder generates nothing whatever the spec's default --generate.
    c.one_pass = one_forward_pass(q.model, query.input.workload.generate);
    c.tokens_per_second = e.infer.job.per_second;
    c.total_seconds = q.job_tokens / std::max(1e-9, c.tokens_per_second);
  } else {
    c.step_seconds = e.train.step_seconds;
    c.tokens_per_second = e.train.tokens_per_second;
    // Wall-clock, as estimate --tokens gives it: interruptions and checkpoints included.
    const double training = q.job_tokens / std::max(1e-9, c.tokens_per_second);
    c.total_seconds = training / training_goodput(count, training).fraction;
  }
  double hours = c.total_seconds / 3600;
  c.energy_kwh = c.power_w * (inference ? kInferencePowerFraction : kTrainingPowerFraction) * hours / 1000;
  c.cost_usd = !unit_price       ? -1
               : basis == "rent" ? count * *unit_price * hours
               : basis == "buy"  ? count * *unit_price
                                 : own_cost_usd(d, count, hours, q.spec.own_years,
                                                inference ? kInferencePowerFraction : kTrainingPowerFraction,
                                                q.workload.devices_per_node_given ? query.input.system.devices_per_node : 0);
  if (needs_port(d) && c.cost_usd >= 0) c.cost_usd += q.spec.porting_cost_usd;
  // The price the cost rests on, when it is old (hwplan tco and serve say the same of theirs).
  if (c.cost_usd >= 0) {
    std::string note = basis == "rent" ? stale_rental_price_note(d) : stale_purchase_price_note(d);
    if (!note.empty()) c.price_notes.push_back(note);
  }
  return c;
}

// The candidate's reasons, in words.
void explain(Candidate& c, const Device& d, const RecommendSpec& spec, bool inference, const std::optional<double>& unit_price) {
  const Estimate& e = c.estimate;
  const MemoryBreakdown& m = e.memory;
  c.reasons.push_back(fmt::format("fits with {} free per device", human_bytes(e.capacity_bytes - m.total())));
  if (inference && c.one_pass) {
    c.reasons.push_back(fmt::format("a forward pass of batch {} takes {}", e.plan.micro_batch, human_seconds(e.infer.prefill_seconds)));
  } else if (inference) {
    c.reasons.push_back(fmt::format("decode is {}-bound: {:.1f} tokens/s per stream", decode_bound(e.infer),
                                    e.infer.time_per_output_token_seconds > 0 ? 1.0 / e.infer.time_per_output_token_seconds : 0.0));
  } else {
    c.reasons.push_back(fmt::format("step is {}-bound, MFU {:.0f}%", e.bound, 100 * e.train.mfu));
  }
  const Plan& p = e.plan;
  if (c.count > 1) {
    std::string layout = fmt::format("tp {}{} pp {} dp {}", p.tp, p.cp > 1 ? fmt::format(" cp {}", p.cp) : "", p.pp, p.dp);
    if (!d.interconnect.pools_memory() && (p.tp > 1 || p.pp > 1))
      c.reasons.push_back("no NVLink-class link: " + layout + " over PCIe" + (p.pp > 1 ? " (layers split across cards)" : ""));
    else
      c.reasons.push_back("layout " + layout + (d.interconnect.pools_memory() ? " over " + d.interconnect.type : ""));
  }
  if (p.recompute != Recompute::kNone)
    c.reasons.push_back(std::string("uses ") + to_string(p.recompute) + " activation recomputation" +
                        (p.recompute == Recompute::kFull && p.recompute_layers > 0
                             ? fmt::format(" of {} layers per stage", p.recompute_layers)
                             : ""));
  if (p.zero > 0 && p.replica_ranks() > 1)
    c.reasons.push_back(p.shard_replicas() > 1 ? fmt::format("uses ZeRO-{} sharding in groups of {} ranks, replicated {} times",
                                                             p.zero, p.zero_ranks(), p.shard_replicas())
                                              : fmt::format("uses ZeRO-{} sharding", p.zero));
  if (spec.cost_basis == "own" && c.total_seconds / 3600 > spec.own_years * 8760)
    c.reasons.push_back(fmt::format("the job ({}) outlasts --own-years {:g}: owned for the job's length instead",
                                    human_seconds(c.total_seconds), spec.own_years));
  if (needs_port(d))
    c.reasons.push_back(fmt::format("non-CUDA stack ({}): porting effort counted as ${:.0f}", d.software.empty() ? "?" : d.software[0],
                                    spec.porting_cost_usd));
  if (d.device_class == DeviceClass::kConsumer)
    c.reasons.push_back("consumer card: no datacenter cooling needed");  // the link is named with the layout
  if (d.device_class == DeviceClass::kEdge && inference)
    c.reasons.push_back(fmt::format("{:.2f} {}/s per watt of its rated power", c.tokens_per_second / std::max(1.0, c.power_w),
                                    std::string_view(c.estimate.infer.job.counts) == "samples" ? "samples" : "tokens"));
  if (d.confidence == "low") c.reasons.push_back("catalog figures are low-confidence for this device");
  if (!unit_price)
    c.reasons.push_back(fmt::format("no {} price in the catalog: ranked on {} only ({})", basis_price_noun(spec.cost_basis),
                                    spec.optimize == "cost"       ? "nothing: listed after the priced devices"
                                    : spec.optimize == "balanced" ? "time and energy, after the priced devices"
                                                                  : "time and energy",
                                    price_fix(d, spec.cost_basis)));
}

// Every count of one device: the configurations that do the job within the limits, or why none does (the nearest
// miss, the cheapest configuration over the budget).
DeviceResult evaluate_device(const Device& d, const DeviceQuestion& q) {
  DeviceResult out;
  const WorkloadSpec& w = q.workload;
  const RecommendSpec& spec = q.spec;
  const bool inference = w.task == "infer";
  const std::optional<double> unit_price = price_on_basis(d, spec.cost_basis);
  const int class_host_devices = tco::host_defaults(tco::host_class_of(d)).devices_per_host;  // a desktop: two cards
  if (auto rejected = device_precheck(d, q, inference, unit_price)) {
    out.rejection = rejected;
    return out;
  }
  std::string last_reason;
  std::string last_fix;
  double best_miss_ratio = INFINITY;
  std::optional<OverBudget> cheapest_over;  // the cheapest configuration that does the work, over the budget
  const bool standalone = d.host_link.standalone();
  auto cost_cache = std::make_shared<CostCache>();  // same workload, same device: shared across counts
  const long long fixed_layout = fixed_layout_devices(w);  // --tp 3: three devices at least
  for (int count : q.counts) {
    // Phones, laptops, USB sticks: no link to split a model over or to train across; several serve only as
    // independent inference replicas (resolve_query gives them dp = count).
    // A limit that stops the search keeps the reason the smaller counts failed (the memory they lacked), and says why
    // no larger count was tried.
    auto stop = [&](const std::string& why) {
      last_reason = std::isfinite(best_miss_ratio) ? last_reason + "; " + why : why;
    };
    if (count > 1 && standalone && !inference) {
      stop(d.name + " is a standalone device: several of them do not train together");
      break;
    }
    if (count > 1 && spec.require_interconnect && !d.interconnect.pools_memory()) {
      stop("no scale-up interconnect (" + d.interconnect.type + ") for multi-device use");
      break;
    }
    if (spec.max_power_w && count * d.tdp_w > *spec.max_power_w) {
      if (count == 1) last_reason = fmt::format("draws {:.0f} W, over the {:.0f} W limit", d.tdp_w, *spec.max_power_w);
      else stop(fmt::format("{} of them draw {:.0f} W, over the {:.0f} W limit (--max-power-w)", count, count * d.tdp_w, *spec.max_power_w));
      break;
    }
    ++out.configurations;
    Query query;
    try {
      // A profile applies to the device the user named (--device, its catalog id by now) or the one it measured.
      query = resolve_query(q.model, d, w, count, w.device == d.id ? ProfileScope::kNamedDevice : ProfileScope::kMeasuredDeviceOnly);
    } catch (const InputError& e) {
      last_reason = e.detail();
      // The smallest count's: its words name no count the user did not give. A count below the layout the user fixed
      // only says it is too small for it, so the first count that holds the layout speaks instead (--tp 3 on a model
      // of 32 heads: 3 does not divide them, not "must be at most 1").
      // (Only an error about the same flag replaces it: a standalone device's --count error at three devices is not
      // a better word on --tp.)
      if (!out.input_error ||
          (out.input_error_count < fixed_layout && count >= fixed_layout && e.key() == out.input_error->key())) {
        out.input_error = e;
        out.input_error_count = count;
      }
      continue;
    }
    out.only_input_errors = false;
    query.space.cost_cache = cost_cache;
    Outcome o = run_query(query);
    if (o.search) out.layouts += o.search->layouts_evaluated;
    if (no_layout(o)) {
      // No layout of this count at all (the global batch does not split over it, or the stack cannot build one): not a
      // miss to rank, a count that does not apply.
      if (!std::isfinite(best_miss_ratio)) last_reason = no_layout_error(query, "--count").detail();
      continue;
    }
    const Estimate& e = o.estimate;
    if (!e.fits) {
      double ratio = e.memory.total() / std::max(1.0, e.usable_bytes);
      if (ratio < best_miss_ratio) {
        best_miss_ratio = ratio;
        last_reason = fmt::format("does not fit: needs {} per device, has {} usable of {} (x{})", human_bytes(e.memory.total()),
                                  human_bytes(e.usable_bytes), human_bytes(e.capacity_bytes), count);
        last_fix = e.fit_hint;
      }
      continue;
    }
    Candidate c = measure(d, count, query, e, q, inference, unit_price);
    if (inference && spec.min_decode_tokens_per_second && e.infer.time_per_output_token_seconds > 0 &&
        1.0 / e.infer.time_per_output_token_seconds < *spec.min_decode_tokens_per_second) {
      last_reason = fmt::format("decodes {:.1f} tokens/s per stream, below the {:.1f} asked", 1.0 / e.infer.time_per_output_token_seconds,
                                *spec.min_decode_tokens_per_second);
      continue;
    }
    if (q.deadline_s && c.total_seconds > *q.deadline_s) {
      last_reason = fmt::format("misses the deadline: {} with {} devices", human_seconds(c.total_seconds), count);
      last_fix = "more devices";
      continue;
    }
    if (spec.budget_usd && c.cost_usd > *spec.budget_usd) {
      if (!cheapest_over || c.cost_usd < cheapest_over->cost_usd)
        cheapest_over = OverBudget{count, c.cost_usd, *spec.budget_usd, needs_port(d) ? spec.porting_cost_usd : 0.0};
      continue;
    }
    explain(c, d, spec, inference, unit_price);
    // A purchase price is the cards alone: more consumer cards than a host holds (a two-card desktop, or the
    // --devices-per-node given) need the hosts or a multi-GPU chassis too.
    if (const int per_host = w.devices_per_node_given ? static_cast<int>(w.devices_per_node) : class_host_devices;
        d.device_class == DeviceClass::kConsumer && spec.cost_basis == "buy" && count > per_host)
      c.reasons.push_back(fmt::format("{} cards need {} hosts of {} (desktops, or a multi-GPU chassis), not in a --buy "
                                      "price (--own-years or hwplan tco count the hosts)",
                                      count, (count + per_host - 1) / per_host, per_host));
    // Owned hosts of fewer devices than the node the job is timed on (hwplan tco says the same).
    if (spec.cost_basis == "own" && !w.devices_per_node_given && class_host_devices < w.devices_per_node && count > class_host_devices)
      c.reasons.push_back(fmt::format("timed as nodes of {}, owned as hosts of {} (hwplan tco's {}): --devices-per-node {} "
                                      "times them as owned", w.devices_per_node, class_host_devices,
                                      tco::to_string(tco::host_class_of(d)), class_host_devices));
    out.feasible.push_back(std::move(c));
  }
  if (out.feasible.empty() && cheapest_over) {
    // Every other limit is met: the budget is what stops it, at the price of its cheapest working configuration.
    // Its words come from the configuration (report::rejection_reason), as the reports and the JSON give them.
    Rejection x{d.id, "over budget", "a budget of at least the cheapest configuration's cost", cheapest_over};
    out.rejection = x;
    out.miss = x;
  } else if (out.feasible.empty()) {
    out.rejection = Rejection{d.id, last_reason.empty() ? "no feasible configuration" : last_reason, last_fix};
    if (std::isfinite(best_miss_ratio)) out.miss = Rejection{d.id, last_reason, last_fix};
  }
  return out;
}

}  // namespace

std::optional<double> price_on_basis(const Device& d, const std::string& basis) {
  if (basis == "rent") return d.price.cloud_usd_per_hour;
  if (basis == "buy") return purchase_price(d);
  if (basis == "own") return d.price.new_purchase_usd();
  return std::nullopt;
}

std::string price_fix(const Device& d, const std::string& basis) {
  if (basis != "rent" && d.price.cloud_usd_per_hour) return "use --rent";
  if (basis == "rent" && purchase_price(d)) return "use --buy";
  return "give a quote with --prices FILE";
}

CostBasisChoice choose_cost_basis(const std::vector<const Device*>& devices, const std::string& requested) {
  CostBasisChoice c;
  c.devices = static_cast<int>(devices.size());
  for (const Device* d : devices) {
    if (d->price.cloud_usd_per_hour) ++c.with_rent_price;
    if (purchase_price(*d)) ++c.with_buy_price;
  }
  if (requested == "buy" || requested == "rent" || requested == "own") {
    c.basis = requested;
    return c;
  }
  if (requested != "auto") throw InputError({}, "cost basis", "'" + requested + "' is not one of: buy, rent, own, auto");
  c.automatic = true;
  c.basis = c.with_buy_price > c.with_rent_price ? "buy" : "rent";
  return c;
}

long long default_global_batch(const Model& model, const std::string& task, long long seq) {
  if (!model.is_transformer()) return 256;
  if (task != "train") return 16;
  const double sequences = 1048576.0 / static_cast<double>(std::max(1LL, seq));
  return std::max(1LL, 1LL << static_cast<int>(std::lround(std::log2(std::max(1.0, sequences)))));
}


std::optional<DeadlineAnswer> smallest_count_for_deadline(const Model& model, const Device& device,
                                                          const WorkloadSpec& workload, double deadline_seconds,
                                                          long long max_count) {
  if (!workload.tokens) throw InputError({}, "--deadline", "needs --tokens (the job the deadline is for)");
  std::vector<int> passed;
  // An input error at every count that holds the layout the user fixed is the input's fault, said as such (--tp 3 on
  // 32 heads), not "no count finishes in time".
  const long long fixed_layout = fixed_layout_devices(workload);
  check_layout_against_model(model, workload);
  check_layout_within_count(workload, max_count);
  std::optional<InputError> input_error;
  bool any_resolved = false;
  for (int count : candidate_counts(max_count)) {
    DeadlineAnswer a;
    a.count = count;
    a.no_layout = passed;
    a.workload = workload;
    a.workload.count = count;
    a.workload.device = device.id;
    a.workload.search_single_device = true;
    if (!a.workload.global_batch && workload.task != "infer")
      a.workload.global_batch = default_global_batch(model, workload.task, default_sequence_length(model, workload));
    Query q;
    try {
      q = resolve_query(model, device, a.workload, count);
    } catch (const InputError& e) {
      passed.push_back(count);  // no layout of this count for this workload (heads, layers or batch do not divide)
      if (!input_error && count >= fixed_layout) input_error = e;
      continue;
    }
    any_resolved = true;
    Outcome o = run_query(q);
    if (no_layout(o)) {
      passed.push_back(count);
      continue;
    }
    if (o.search && !o.search->found) continue;
    if (o.estimate.fits && o.estimate.total_seconds >= 0 && o.estimate.total_seconds <= deadline_seconds) return a;
  }
  if (!any_resolved && input_error) throw *input_error;
  return std::nullopt;
}

std::vector<const Device*> select_devices(const std::vector<Device>& catalog, const RecommendSpec& spec,
                                          const std::function<const Device*(const std::string&)>& find) {
  for (const auto& c : spec.classes)
    if (!parse_device_class(c)) throw InputError({}, "--class", "'" + c + "' is not one of: consumer, workstation, datacenter, npu, edge");
  std::vector<const Device*> excluded, only;
  // Unknown ids are errors, with a suggestion, naming the flag that gave them.
  auto lookup = [&](const std::string& id, const char* flag) {
    try {
      return find(id);
    } catch (const InputError& e) {
      throw InputError({}, flag, e.detail());
    }
  };
  for (const auto& x : spec.exclude) excluded.push_back(lookup(x, "--exclude"));
  for (const auto& x : spec.devices) only.push_back(lookup(x, "--devices"));
  // A vendor or class no catalog device has is a typo, not an empty answer.
  std::vector<std::string> vendors, classes;
  for (const auto& d : catalog) {
    vendors.push_back(d.vendor);
    classes.push_back(to_string(d.device_class));
  }
  for (const auto& v : spec.vendors)
    if (!listed(vendors, v)) {
      auto near = nearest(v, vendors);
      throw InputError({}, "--vendor", "no device in the catalog is from '" + v + "'" + (near ? " (did you mean '" + *near + "'?)" : ""));
    }
  for (const auto& c : spec.classes)
    if (!listed(classes, c)) throw InputError({}, "--class", "no device in the catalog has class '" + c + "'");
  std::vector<const Device*> devices;
  for (const auto& d : catalog) {
    if (!listed(spec.classes, to_string(d.device_class)) || !listed(spec.vendors, d.vendor)) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), &d) == only.end()) continue;
    if (std::find(excluded.begin(), excluded.end(), &d) == excluded.end()) devices.push_back(&d);
  }
  // The filters together leave nothing to rank: the question, not the hardware, is at fault (exit 2 naming a flag).
  if (devices.empty()) {
    std::vector<std::string> given;
    auto list = [](const std::vector<std::string>& v) {
      std::string out;
      for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
      return out;
    };
    if (!spec.devices.empty()) given.push_back("--devices " + list(spec.devices));
    if (!spec.classes.empty()) given.push_back("--class " + list(spec.classes));
    if (!spec.vendors.empty()) given.push_back("--vendor " + list(spec.vendors));
    if (!spec.exclude.empty()) given.push_back("--exclude " + list(spec.exclude));
    std::string words;
    for (const auto& g : given) words += (words.empty() ? "" : " with ") + g;
    const char* key = !spec.exclude.empty() ? "--exclude" : !spec.classes.empty() ? "--class" : !spec.vendors.empty() ? "--vendor" : "--devices";
    throw InputError({}, key, "no device passes the filters (" + words + "): nothing to rank");
  }
  return devices;
}

std::vector<int> candidate_counts(long long max_count) {
  std::vector<int> out;
  for (int c : {1, 2, 4})
    if (c <= max_count) out.push_back(c);
  for (int c = 8; c <= 64 && c <= max_count; c += 8) out.push_back(c);
  // Counts are ints: past a million devices (no cluster is that large) the powers of two stop.
  for (long long c = 128; c <= max_count && c <= (1LL << 20); c *= 2) out.push_back(static_cast<int>(c));
  if (max_count > 64 && out.back() != max_count && max_count <= 1'000'000) out.push_back(static_cast<int>(max_count));
  return out;
}

Recommendation recommend(const Model& model, const std::vector<const Device*>& devices, const WorkloadSpec& workload,
                         const RecommendSpec& spec, int threads) {
  WorkloadSpec w = workload;
  w.search_single_device = true;
  auto start = std::chrono::steady_clock::now();
  Recommendation r;
  r.model_id = model.id;
  r.counts_samples = !model.is_transformer();
  const bool one_pass = w.task == "infer" && one_forward_pass(model, w.generate);
  r.counts_input_tokens = one_pass && model.is_transformer();
  // Numbers the ranking compares against: finite and of the right sign, or the comparison silently passes.
  auto positive = [](const std::optional<double>& v, const char* flag) {
    if (v && !(std::isfinite(*v) && *v > 0)) throw InputError({}, flag, fmt::format("must be a positive number, got {:g}", *v));
  };
  positive(spec.budget_usd, "--budget-usd");
  positive(spec.min_decode_tokens_per_second, "--min-decode-tps");
  positive(spec.max_power_w, "--max-power-w");
  if (!(std::isfinite(spec.porting_cost_usd) && spec.porting_cost_usd >= 0))
    throw InputError({}, "--porting-cost-usd", fmt::format("must be zero or a positive number of dollars, got {:g}", spec.porting_cost_usd));
  if (spec.deadline && !w.tokens)
    throw InputError({}, "--deadline", "needs --tokens (the job the deadline is for), as estimate --deadline does");
  if (spec.min_decode_tokens_per_second && w.task != "infer")
    throw InputError({}, "--min-decode-tps", "applies to --task infer (a decode speed); training ranks on job time");
  if (spec.min_decode_tokens_per_second && one_pass)
    throw InputError({}, "--min-decode-tps", model.id + (model.generates() ? " generates nothing with --generate 0"
                                                                             : " generates nothing (one forward pass)") +
                                                 ": there is no decode speed to ask of it");
  if (w.profile) {
    auto profile = io::load_profile_cached(*w.profile);
    r.profile_device = profile->catalog_id.empty() ? profile->device_name : profile->catalog_id;
    r.profile_in_catalog = !profile->catalog_id.empty();
  }
  const bool inference = w.task == "infer";
  if (!model.is_transformer() && (w.task == "lora" || w.task == "qlora"))
    throw InputError({}, "--task", "LoRA adapts a transformer's linear layers; " + model.id + " is a generic network (use --task finetune)");
  if (w.tokens) {
    r.job_tokens = *w.tokens;
  } else {
    // Cost per million generated tokens / per billion trained tokens. A generic network (an image CNN) trains on
    // samples: 90 epochs of ImageNet-1k (1,281,167 images), the ResNet-50 reference schedule (Goyal et al. 2017).
    r.job_tokens = inference ? 1e6 : model.is_transformer() ? 1e9 : 90.0 * 1281167;
    r.job_tokens_assumed = true;
  }
  if (!inference) {
    if (!w.global_batch) {
      w.global_batch = default_global_batch(model, w.task, default_sequence_length(model, w));
      r.global_batch_assumed = true;
    }
    r.global_batch = *w.global_batch;
  }
  std::optional<double> deadline;
  if (spec.deadline) {
    deadline = parse_duration_seconds(*spec.deadline);
    if (!deadline) throw InputError({}, "--deadline", "'" + *spec.deadline + "' is not a duration such as 14d, 36h, 90m");
  }
  if (spec.optimize != "cost" && spec.optimize != "time" && spec.optimize != "energy" && spec.optimize != "balanced")
    throw InputError({}, "--optimize", "'" + spec.optimize + "' is not one of: cost, time, energy, balanced");
  if (spec.max_count < 1) throw InputError({}, "--max-count", "must be at least 1");
  if (spec.count && *spec.count > 1'000'000) throw InputError({}, "--count", "must be at most 1,000,000");
  if (spec.count && *spec.count < 1) throw InputError({}, "--count", "must be at least 1");
  check_layout_against_model(model, w);
  if (!spec.count) check_layout_within_count(w, spec.max_count);

  std::vector<int> counts = spec.count ? std::vector<int>{static_cast<int>(*spec.count)} : candidate_counts(spec.max_count);
  r.largest_count = counts.back();
  r.cost_basis = choose_cost_basis(devices, spec.cost_basis);
  RecommendSpec priced = spec;  // every device is costed on the one basis
  priced.cost_basis = r.cost_basis.basis;
  const DeviceQuestion question{w, priced, model, r.job_tokens, deadline, counts};
  // Devices are independent: evaluate them on `threads` workers, then merge in catalog order (results are
  // identical whatever the thread count).
  std::vector<DeviceResult> results(devices.size());
  auto work = [&](std::size_t begin, std::size_t step) {
    for (std::size_t i = begin; i < devices.size(); i += step)
      results[i] = evaluate_device(*devices[i], question);
  };
  threads = std::max(1, threads);
  std::vector<std::future<void>> workers;
  for (int t = 1; t < threads; ++t) workers.push_back(std::async(std::launch::async, work, t, threads));
  work(0, threads);
  for (auto& f : workers) f.get();

  // No device gets past its input, all for one flag: a flag or key the user gave is wrong whatever the hardware.
  {
    const InputError* common = nullptr;
    int common_count = 0;
    const long long fixed_layout = fixed_layout_devices(w);
    bool uniform = true;
    for (const auto& res : results) {
      if (!res.feasible.empty() || (res.configurations > 0 && !res.only_input_errors)) uniform = false;
      if (!res.input_error || !res.only_input_errors) continue;
      if (common && common->key() != res.input_error->key()) uniform = false;
      // Of the devices' words on that flag, one raised where the fixed layout fits (a GPU's "3 does not divide the
      // heads") over one that only says one device is too few (a standalone device's).
      if (!common || (common_count < fixed_layout && res.input_error_count >= fixed_layout)) {
        common = &*res.input_error;
        common_count = res.input_error_count;
      }
    }
    if (uniform && common) throw *common;
  }
  for (auto& res : results) {
    r.configurations += res.configurations;
    r.layouts_evaluated += res.layouts;
    for (auto& c : res.feasible) r.candidates.push_back(std::move(c));
    if (res.rejection) r.rejected.push_back(*res.rejection);
    if (res.miss) r.nearest_misses.push_back(*res.miss);
  }
  // Score (1 = best): the best value on the objective over this candidate's value. The time measure is the job
  // time for training and the per-stream time per output token for inference (replicas add throughput, not
  // speed for a user). Balanced: the geometric mean of the cost, time and energy ratios that are known.
  auto time_of = [&](const Candidate& c) { return inference ? c.step_seconds : c.total_seconds; };
  double best_cost = INFINITY, best_time = INFINITY, best_energy = INFINITY;
  for (const auto& c : r.candidates) {
    if (c.cost_usd >= 0) best_cost = std::min(best_cost, std::max(1e-9, c.cost_usd));
    best_time = std::min(best_time, std::max(1e-12, time_of(c)));
    best_energy = std::min(best_energy, std::max(1e-12, c.energy_kwh));
  }
  for (auto& c : r.candidates) {
    double cost_ratio = c.cost_usd >= 0 ? best_cost / std::max(1e-9, c.cost_usd) : -1;
    double time_ratio = best_time / std::max(1e-12, time_of(c));
    double energy_ratio = best_energy / std::max(1e-12, c.energy_kwh);
    if (spec.optimize == "cost") c.score = std::max(0.0, cost_ratio);
    else if (spec.optimize == "time") c.score = time_ratio;
    else if (spec.optimize == "energy") c.score = energy_ratio;
    else if (cost_ratio >= 0) c.score = std::cbrt(cost_ratio * time_ratio * energy_ratio);
    else c.score = std::sqrt(time_ratio * energy_ratio);
  }
  // One line per device. Training with a deadline: the fewest devices that meet it (more only cost more);
  // otherwise its best-scoring count (the others are variations of the same choice).
  // (--optimize time asks for the fastest that meets it.)
  const bool fewest = deadline && !inference && spec.optimize != "time";
  std::map<std::string, std::size_t> chosen;
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const Candidate& c = r.candidates[i];
    auto it = chosen.find(c.device->id);
    if (it == chosen.end()) {
      chosen.emplace(c.device->id, i);
      continue;
    }
    const Candidate& b = r.candidates[it->second];
    // Scores equal to rounding (inference replicas add throughput at the same cost per token and energy per token)
    // are a tie: the fewer devices win it.
    const bool tie = std::abs(c.score - b.score) <= 1e-9 * std::max(std::abs(c.score), std::abs(b.score));
    bool replace = fewest ? c.count < b.count : (tie ? c.count < b.count : c.score > b.score);
    if (replace) it->second = i;
  }
  std::vector<Candidate> best_per_device;
  for (auto& [id, i] : chosen) best_per_device.push_back(r.candidates[i]);
  // A device without a price on the list's basis cannot be compared on cost: when the objective weighs cost (cost,
  // balanced) it is listed after the priced ones, ranked among its kind on the criteria it has (time, energy).
  const bool cost_weighed = spec.optimize == "cost" || spec.optimize == "balanced";
  std::stable_sort(best_per_device.begin(), best_per_device.end(), [&](const Candidate& a, const Candidate& b) {
    if (cost_weighed && (a.cost_usd >= 0) != (b.cost_usd >= 0)) return a.cost_usd >= 0;
    if (a.score != b.score) return a.score > b.score;
    if ((a.cost_usd >= 0) != (b.cost_usd >= 0)) return a.cost_usd >= 0;  // on a tie the priced one first
    if (a.device->id != b.device->id) return a.device->id < b.device->id;
    return a.count < b.count;
  });
  for (auto& c : best_per_device) {
    if (c.cost_usd < 0) ++r.unpriced;
    c.at_search_limit = counts.size() > 1 && c.count == counts.back();
    if (c.at_search_limit)
      c.reasons.push_back(fmt::format("at the search limit ({} devices, --max-count): more devices may do better", c.count));
  }
  r.feasible_configurations = static_cast<long long>(r.candidates.size());
  r.candidates = std::move(best_per_device);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace hwplan
