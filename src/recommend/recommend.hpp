// `hwplan recommend`: every catalog device at every sensible count, with its best layout, filtered by the
// constraints and ranked by the objective, each with the reasons in words; and the devices rejected, with why.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/model.hpp"
#include "core/workload_spec.hpp"
#include "estimators/estimate_types.hpp"

namespace hwplan {

struct Candidate {
  const Device* device = nullptr;
  int count = 1;
  Estimate estimate;
  double step_seconds = 0;         // training step, or time per output token (inference)
  double tokens_per_second = 0;    // training tokens/s, or output tokens/s of whole requests over all replicas
  double total_seconds = 0;        // for the job's tokens
  double cost_usd = 0;             // on the list's cost basis; -1 when the device has no price for it (unpriced)
  std::string cost_basis;          // the list's basis: "buy", "rent" or "own" (the same for every candidate)
  double energy_kwh = 0;
  double power_w = 0;
  double score = 0;                // 0..1, 1 = best on the objective
  bool one_pass = false;           // inference that generates nothing (a CNN, an encoder, --generate 0)
  std::string stack;               // the engine or framework preset the device was priced with (Stack::preset)
  bool stack_assumed = true;       // the user named none: the device's default (it differs between devices)
  std::vector<std::string> reasons;
  std::vector<std::string> price_notes;  // a price on the list's basis over two years old (as hwplan tco says it)
  bool at_search_limit = false;    // the chosen count is the largest tried: more devices might do better
};

// The cheapest configuration of a device that does the work (fits, meets the deadline and the other limits) but
// costs more than --budget-usd.
struct OverBudget {
  int count = 0;
  double cost_usd = 0;
  double budget_usd = 0;
  double porting_usd = 0;  // the part of cost_usd that is --porting-cost-usd (a non-CUDA stack), 0 otherwise
};

struct Rejection {
  std::string device;
  std::string reason;
  std::string fix;  // what would make it feasible, when known
  std::optional<OverBudget> over_budget;  // set when the budget is the only limit it misses
};

// The one cost basis a list is ranked on. Asked for (--buy, --rent, --own-years): that one. Otherwise (auto): the
// basis under which more of the candidate devices have a price, a tie going to rent (the cost of this job rather
// than of the hardware's life). A device without a price on it is listed unpriced, never priced on another basis.
struct CostBasisChoice {
  std::string basis;        // buy | rent | own
  bool automatic = false;   // chosen by the rule above, not by the user
  int devices = 0;          // candidate devices counted
  int with_rent_price = 0;  // of them, with an on-demand cloud price
  int with_buy_price = 0;   // of them, with a purchase price (launch list or street)
};
CostBasisChoice choose_cost_basis(const std::vector<const Device*>& devices, const std::string& requested);
// The device's price on `basis` (per device-hour for rent, per device for buy and own); empty when it has none.
std::optional<double> price_on_basis(const Device& d, const std::string& basis);
// What would price an unpriced device: "use --rent" / "use --buy" only when that price exists, else a quote file.
std::string price_fix(const Device& d, const std::string& basis);

struct Recommendation {
  std::string model_id;
  bool counts_samples = false;       // a generic network (a CNN): its unit is the sample (an image), not the token
  bool counts_input_tokens = false;  // inference that generates nothing (an encoder, --generate 0): input tokens
  CostBasisChoice cost_basis;        // the one basis every candidate's cost is on
  int unpriced = 0;                  // feasible devices listed without a price on that basis
  double job_tokens = 0;
  bool job_tokens_assumed = false;
  long long global_batch = 0;        // training: sequences per optimizer step, the same for every candidate
  bool global_batch_assumed = false; // the documented default (default_global_batch), not the user's
  // --profile: the device it was measured on (it applies to that device only; the others use the catalog).
  std::string profile_device;
  bool profile_in_catalog = true;  // false: measured on a device the catalog lacks, so applied to every device
  long long largest_count = 0;       // the largest count tried (a candidate there sits at the search limit)
  std::vector<Candidate> candidates;  // feasible, best first, one per device (its best count); the report shows the top K
  long long feasible_configurations = 0;  // (device, count) pairs that meet every constraint
  std::vector<Rejection> rejected;
  std::vector<Rejection> nearest_misses;  // when nothing is feasible: the closest ones and what they lack
  long long configurations = 0;           // (device, count) pairs evaluated
  long long layouts_evaluated = 0;
  double seconds = 0;
};

// Device counts tried: 1, 2, 4, multiples of 8 up to 64, then powers of two up to max_count.
std::vector<int> candidate_counts(long long max_count);

// The global batch every candidate of a training recommendation is compared at, when the user gives none:
// pretraining about one million tokens per optimizer step (GPT-3 used 0.5-3.2M, Llama 2 4M; 1M keeps small
// models' recipes sane), rounded to a power of two in sequences; fine-tuning 16 sequences (the common
// per-device batch x accumulation of the Alpaca / PEFT recipes); non-transformer networks 256 samples
// (ResNet-50's reference batch, Goyal et al. 2017).
long long default_global_batch(const Model& model, const std::string& task, long long seq);

// Training: the smallest count in candidate_counts(max_count) at which `device` finishes the job within
// `deadline_seconds` (global batch as recommend uses it). Empty when even max_count is too slow or none fits.
struct DeadlineAnswer {
  int count = 0;
  WorkloadSpec workload;  // the workload with count and global batch set, ready for resolve_query
  std::vector<int> no_layout;  // smaller counts passed over: no layout of them runs the workload at that global batch
};
std::optional<DeadlineAnswer> smallest_count_for_deadline(const Model& model, const Device& device, const WorkloadSpec& w,
                                                          double deadline_seconds, long long max_count);

// The devices a recommend run ranks: the catalog filtered by --class, --vendor, --devices and --exclude. `find`
// resolves a device name (an unknown one throws, with a suggestion); a class or vendor no device has is an error.
std::vector<const Device*> select_devices(const std::vector<Device>& catalog, const RecommendSpec& spec,
                                          const std::function<const Device*(const std::string&)>& find);

// Ranks `devices` for the workload under the constraints (the model and the device list resolved by the front
// end, front_end.hpp). Devices are evaluated on `threads` workers; the answer does not depend on their number.
Recommendation recommend(const Model& model, const std::vector<const Device*>& devices, const WorkloadSpec& workload,
                         const RecommendSpec& spec, int threads = 1);

}  // namespace hwplan
