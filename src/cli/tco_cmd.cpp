// hwplan tco: owning the devices a workload needs (purchase, host, network, electricity, space, operations,
// resale) against renting them, over a horizon, with break-even points and the input that flips the answer.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/power.hpp"
#include "core/strings.hpp"
#include "io/atomic_file.hpp"
#include "report/html_report.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"
#include "report/tco_report.hpp"
#include "tco/tco.hpp"
#include "recommend/front_end.hpp"

namespace hwplan::cli {
namespace {

struct TcoOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  CLI::App* plot = nullptr;  // hwplan plot tco
  std::string plot_output;
  WorkloadOptions workload;
  double years = 3;
  double utilization = 0.5;
  std::optional<double> jobs;  // the work as a number of jobs over the horizon: sets the utilisation
  bool used = false;
  std::string rent_basis = "on-demand";
  std::optional<double> usd_per_kwh, pue, usd_per_kw_month, operations, resale, rent_usd_per_hour;
  std::optional<double> host_usd, host_watts, network_usd_per_host;
  std::optional<int> devices_per_host;
};

void positive(const char* flag, double v, bool zero_ok = false) {
  if (!std::isfinite(v) || v < 0 || (!zero_ok && v == 0))
    throw InputError({}, flag, fmt::format("{} is not {}", v, zero_ok ? "zero or positive" : "positive"));
}

std::vector<std::string> stale_notes(const Device& d, const tco::Inputs& in) {
  std::vector<std::string> notes;
  auto check = [&](const std::string& what, const std::string& date) {
    if (std::string note = stale_price_note(what, d.id, date); !note.empty()) notes.push_back(note);
  };
  // The words recommend and serve use; a --prices quote is still the street (or launch) price, given by the user.
  const std::string& kind = in.device_price_kind;
  if (in.ownable)
    check(kind.find("launch_msrp") != std::string::npos ? "launch list price"
        : kind.find("street") != std::string::npos    ? "street price"
                                                      : kind + " price",
        in.device_price_date);
  if (in.rent_usd_per_device_hour) check(in.rent_basis + " rental price", in.rent_date);
  return notes;
}

struct Costed {
  const Device* device = nullptr;
  tco::Inputs inputs;
  tco::Result result;
  std::vector<std::string> notes;
  std::unique_ptr<Query> query;  // the workload's estimate (owns the model the HTML report cites)
  Outcome outcome;

  report::TcoReport report() const { return {device, &inputs, &result, notes}; }
};

// The workload's estimate, then the costs. Infeasible (exit 3) when the workload does not fit.
Costed cost(const TcoOptions& o, const io::Registry& registry) {
  positive("--years", o.years);
  if (o.years > 20) throw InputError({}, "--years", "must be at most 20 (a device's useful life is a few years)");
  if (!(o.utilization > 0 && o.utilization <= 1)) throw InputError({}, "--utilization", "must be in (0, 1]");
  if (o.rent_basis != "on-demand" && o.rent_basis != "reserved")
    throw InputError({}, "--rent", "'" + o.rent_basis + "' is not one of: on-demand, reserved");
  const bool node_given = o.workload.devices_per_node_given;
  auto query = std::make_unique<Query>(resolve_query(registry, o.workload));
  Query& q = *query;
  Outcome outcome = run_query(q);
  const Device& d = *q.device;
  if (!outcome.found || !outcome.estimate.fits)
    throw Infeasible(fmt::format("{} does not fit on {} x {} as configured (see hwplan estimate / hwplan fit): nothing to cost",
                                 o.workload.model, q.input.system.count, d.id));
  tco::Inputs in = tco::default_inputs(d, q.input.system.count, o.used, o.rent_basis);
  // The devices draw what recommend and serve price them at while they work: 80% of TDP training, 60% serving.
  in.device_power_fraction = outcome.estimate.training ? kTrainingPowerFraction : kInferencePowerFraction;
  in.years = o.years;
  in.utilization = o.utilization;
  auto set = [](const char* flag, const std::optional<double>& v, double& into, bool zero_ok = true) {
    if (!v) return;
    positive(flag, *v, zero_ok);
    into = *v;
  };
  set("--usd-per-kwh", o.usd_per_kwh, in.usd_per_kwh);
  set("--pue", o.pue, in.pue, false);
  if (in.pue < 1) throw InputError({}, "--pue", "must be at least 1.0");
  set("--usd-per-kw-month", o.usd_per_kw_month, in.usd_per_kw_month);
  set("--operations", o.operations, in.operations_per_year);
  set("--host-usd", o.host_usd, in.host_usd);
  set("--host-watts", o.host_watts, in.host_watts);
  set("--network-usd-per-host", o.network_usd_per_host, in.network_usd_per_host);
  if (o.devices_per_host) {
    if (*o.devices_per_host < 1) throw InputError({}, "--devices-per-host", "must be at least 1");
    in.devices_per_host = *o.devices_per_host;
  } else {
    // The nodes the estimate placed the devices on (--devices-per-node) are the hosts that are bought.
    if (node_given && o.workload.devices_per_node >= 1)
      in.devices_per_host = static_cast<int>(std::min<long long>(o.workload.devices_per_node, 1 << 20));
  }
  // The job is timed on the estimate's nodes (--devices-per-node, 8 by default: the same time recommend and estimate
  // give, and a rented pod's); the hosts owned are costed by their class (two consumer cards to a desktop). Where
  // those differ, the cost rests on hosts the timing did not assume: said, with the flag that times them as costed.
  std::string hosts_differ;
  if (!node_given && in.devices_per_host < o.workload.devices_per_node && in.count > in.devices_per_host)
    hosts_differ = fmt::format("timed as nodes of {} devices (estimate's --devices-per-node), owned as hosts of {} "
                               "(the {}'s): --devices-per-node {} times the job on the hosts costed, linked by their "
                               "network", o.workload.devices_per_node, in.devices_per_host,
                               tco::to_string(tco::host_class_of(d)), in.devices_per_host);
  if (o.resale) {
    if (!(*o.resale >= 0 && *o.resale <= 1)) throw InputError({}, "--resale", "must be a fraction in [0, 1]");
    in.resale_from_curve = false;
    in.resale_fraction = *o.resale;
  }
  if (o.rent_usd_per_hour) {
    positive("--rent-usd-per-hour", *o.rent_usd_per_hour);
    in.rent_usd_per_device_hour = *o.rent_usd_per_hour;
    in.rent_provider = "--rent-usd-per-hour";
    in.rent_date.clear();
  }
  if (!in.ownable && !in.rent_usd_per_device_hour)
    throw InputError({}, "--rent", d.id + " is only rented and has no " + in.rent_basis + " price in the catalog: give one with "
                                             "--rent-usd-per-hour or --prices FILE");
  const Estimate& e = outcome.estimate;
  if (e.training) {
    if (e.total_seconds > 0) in.job_hours = e.total_seconds / 3600;
    in.job_kind = "training run";
    in.tokens_per_second = e.train.tokens_per_second;
    in.token_kind = "trained";
  } else if (e.infer.total_seconds > 0) {
    // A job of --tokens (as estimate and recommend count it), else one batch of requests.
    in.job_hours = (e.total_seconds > 0 ? e.total_seconds : e.infer.total_seconds) / 3600;
    in.job_kind = e.total_seconds > 0 ? "inference job" : "batch of requests";
    // Output tokens over the batch's time; an encoder (or --generate 0) counts the input tokens it reads, a generic
    // network (a CNN) its samples, as recommend does.
    in.tokens_per_second = e.infer.job.per_second;
    if (std::string(e.infer.job.counts) != "output") in.token_kind = e.infer.job.counts;
  }
  if (o.jobs) {
    // The jobs set the utilisation: both given is a contradiction, not a choice to make silently.
    const CLI::App* parsed = o.app && o.app->parsed() ? o.app : o.plot;
    if (parsed && parsed->count("--utilization") > 0)
      throw InputError({}, "--jobs", "give --jobs or --utilization, not both: the jobs set the utilisation");
    positive("--jobs", *o.jobs);
    if (!(in.job_hours > 0))
      throw InputError({}, "--jobs", "this workload has no end to count jobs by: give --tokens or use --utilization");
    double horizon_hours = in.years * 8760;
    double busy = *o.jobs * in.job_hours;
    if (busy > horizon_hours)
      throw InputError({}, "--jobs", fmt::format("{:g} jobs of {} take {:.0f} h, more than the {:g}-year horizon: raise --years or "
                                                 "--count", *o.jobs, human_seconds(in.job_hours * 3600), busy, in.years));
    in.utilization = busy / horizon_hours;
  }
  Costed c{&d, in, tco::evaluate(d, in), stale_notes(d, in), std::move(query), std::move(outcome)};
  if (!hosts_differ.empty()) c.notes.push_back(hosts_differ);
  // The estimate's warnings (a precision the device lacks, an assumed network or efficiency) change the job's time
  // and so its cost: they travel with the cost, as estimate prints them.
  for (const auto& w : c.outcome.estimate.warnings) c.notes.push_back(w);
  if (!in.rent_usd_per_device_hour)
    c.notes.push_back("no " + in.rent_basis + " rental price for " + d.id + ": only owning is costed");
  if (!in.ownable)
    c.notes.push_back(d.id + " is not sold (no purchase price in the catalog): only renting is costed; give a quote with "
                      "--prices FILE (street_usd, street_date) to compare owning");
  return c;
}

int run_plot_tco(TcoOptions& o) {
  Costed c = cost(o, registry_of(*o.global));
  for (const auto& n : c.notes) std::cerr << "note: " << n << "\n";
  io::write_file_atomically(o.plot_output, report::render_cost_svg(report::tco_chart(c.report())));
  std::cerr << "wrote " << o.plot_output << "\n";
  return kExitOk;
}

int run_tco(TcoOptions& o) {
  Costed c = cost(o, registry_of(*o.global));
  report::Format format = format_of(*o.global);
  if (format != report::Format::kJson)
    for (const auto& n : c.notes) std::cerr << "note: " << n << "\n";
  if (format == report::Format::kHtml) {
    const SearchResult* search = c.outcome.search ? &*c.outcome.search : nullptr;
    emit(*o.global, report::tco_html(c.report(), c.query->input, c.outcome.estimate, search, html_context(*o.global)));
  } else {
    emit(*o.global, report::tco_text(c.report(), format));
  }
  return kExitOk;
}

CommandResult tco_result(TcoOptions& o) {
  Costed c = cost(o, registry_of(*o.global));
  return {report::tco_json(c.report()), kExitOk};
}

// The workload flags and the cost inputs, shared by hwplan tco and hwplan plot tco.
void add_cost_options(CLI::App& app, TcoOptions& opts) {
  TcoOptions* o = &opts;
  add_workload_options(app, o->workload);
  app.add_option("--years", o->years, "Horizon in years")->capture_default_str();
  app.add_option("--utilization", o->utilization, "Fraction of the horizon the devices work (0-1]")->capture_default_str();
  app.add_option("--jobs", o->jobs, "The work as a number of jobs over the horizon (sets the utilisation from the job time)");
  app.add_flag("--used", o->used, "Buy at the used-market price");
  app.add_option("--rent", o->rent_basis, "Rental price: on-demand | reserved")->capture_default_str();
  app.add_option("--rent-usd-per-hour", o->rent_usd_per_hour, "Your rental price per device-hour (overrides the catalog)");
  app.add_option("--usd-per-kwh", o->usd_per_kwh, "Electricity price (default 0.15)");
  app.add_option("--pue", o->pue, "Power usage effectiveness (default: 1.0 desktop/edge, 1.5 server)");
  app.add_option("--usd-per-kw-month", o->usd_per_kw_month, "Colocation / space per provisioned kW (default: 0 desktop, 150 server)");
  app.add_option("--operations", o->operations, "Operations per year as a fraction of capex (default: 0 desktop, 0.05 server)");
  app.add_option("--resale", o->resale, "Resale value at the end as a fraction of the purchase (devices, hosts and networking alike; default: the devices on their class curve, hosts and networking on 0.70 a year)");
  app.add_option("--host-usd", o->host_usd, "Price of one host without its accelerators");
  app.add_option("--host-watts", o->host_watts, "Host power under load, W");
  app.add_option("--devices-per-host", o->devices_per_host, "Accelerators per host");
  app.add_option("--network-usd-per-host", o->network_usd_per_host, "Networking per host (counted when there is more than one)");
  group_options(app, "Horizon and use", {"--years", "--utilization", "--jobs"});
  group_options(app, "Prices", {"--used", "--rent", "--rent-usd-per-hour", "--usd-per-kwh"});
  group_options(app, "Running costs", {"--pue", "--usd-per-kw-month", "--operations", "--resale"});
  group_options(app, "Hosts", {"--host-usd", "--host-watts", "--devices-per-host", "--network-usd-per-host"});
}

}  // namespace

Command tco_command() {
  auto o = std::make_shared<TcoOptions>();
  Command c;
  c.name = "tco";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("tco", "Cost of owning the hardware a workload needs against renting it.")->footer(R"(Examples:
  hwplan tco --model llama-2-7b --device rtx-4090 --task lora --batch 1 --seq 1024 --recompute full --tokens 1e8 --years 2
  hwplan tco --model llama-3-70b --device h100-sxm --count 8 --task infer --batch 32 --utilization 0.3
  hwplan tco --model 7B --device mi300x --count 2 --task infer --batch 16 --rent-usd-per-hour 1.5 --usd-per-kwh 0.25 --format json
  hwplan tco --model llama-2-7b --device rtx-3090 --used --task lora --batch 1 --recompute full --tokens 1e8 --jobs 50 --prices my-quotes.yaml

Owned = devices + host share + networking + electricity (TDP x utilisation, device and host, x PUE) + space
(provisioned kW x PUE x months) + operations (% of capex a year) - resale. Rented = device-hours of the same work
(the horizon x utilisation) x the hourly price. Class defaults (host, power, PUE, space, resale curve) are listed in
the output (--format json: inputs.*) and in the README section "Cost of ownership".)");
    add_cost_options(*o->app, *o);
    add_format_option(*o->app, g, /*html=*/true);
    // hwplan plot tco: the plot command is set up before this one (all_commands order).
    CLI::App* plot = nullptr;
    for (CLI::App* sub : app.get_subcommands({}))
      if (sub->get_name() == "plot") plot = sub;
    if (plot) {
      o->plot = plot->add_subcommand("tco", "Cumulative cost over months, owning against renting, break-even marked.")
                    ->footer(R"(Example:
  hwplan plot tco --model llama-3-70b --device h100-sxm --count 8 --task infer --batch 32 -o tco.svg)");
      add_cost_options(*o->plot, *o);
      o->plot->add_option("-o,--output", o->plot_output, "SVG file to write")->required();
    }
  };
  c.parsed = [o] { return o->app->parsed() || (o->plot && o->plot->parsed()); };
  c.run = [o] { return o->plot && o->plot->parsed() ? run_plot_tco(*o) : run_tco(*o); };
  c.result = [o] { return tco_result(*o); };
  c.reset = [o] {
    TcoOptions fresh;
    fresh.global = o->global;
    fresh.app = o->app;
    fresh.plot = o->plot;
    *o = std::move(fresh);
  };
  return c;
}

}  // namespace hwplan::cli
