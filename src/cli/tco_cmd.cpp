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
#include "core/strings.hpp"
#include "io/atomic_file.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"
#include "tco/tco.hpp"

namespace hwplan::cli {
namespace {

using nlohmann::json;

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

// Today as (year, month); HWPLAN_TODAY=YYYY-MM pins it (tests and reproducible documentation).
std::pair<int, int> today() {
  if (const char* pinned = std::getenv("HWPLAN_TODAY"); pinned && std::string(pinned).size() == 7)
    return {std::atoi(pinned), std::atoi(pinned + 5)};
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  return {tm.tm_year + 1900, tm.tm_mon + 1};
}

std::vector<std::string> stale_notes(const Device& d, const tco::Inputs& in) {
  auto [year, month] = today();
  std::vector<std::string> notes;
  auto check = [&](const std::string& what, const std::string& date) {
    if (!date.empty() && months_between(date, year, month) > 24)
      notes.push_back(fmt::format("the {} of {} is from {}, more than two years old: give a current quote with "
                                  "--prices FILE",
                                  what, d.id, date));
  };
  check(in.device_price_kind + " price", in.device_price_date);
  if (in.rent_usd_per_device_hour) check(in.rent_basis + " rental price", in.rent_date);
  return notes;
}

json opt_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json inputs_json(const Device& d, const tco::Inputs& in) {
  return {{"device", d.id},
          {"count", in.count},
          {"years", in.years},
          {"utilization", in.utilization},
          {"device_usd", in.device_usd},
          {"device_price_kind", in.device_price_kind},
          {"device_price_date", in.device_price_date},
          {"host_class", tco::to_string(in.host_class)},
          {"devices_per_host", in.devices_per_host},
          {"host_usd", in.host_usd},
          {"host_watts", in.host_watts},
          {"device_tdp_watts", d.tdp_w},
          {"network_usd_per_host", in.network_usd_per_host},
          {"usd_per_kwh", in.usd_per_kwh},
          {"pue", in.pue},
          {"usd_per_kw_month", in.usd_per_kw_month},
          {"operations_fraction_per_year", in.operations_per_year},
          {"resale_fraction", in.resale_fraction_at_end()},
          {"resale_from", in.resale_from_curve ? fmt::format("class curve {:.2f} per year", in.residual_per_year) : "--resale"},
          {"rent_basis", in.rent_basis},
          {"rent_usd_per_device_hour", opt_json(in.rent_usd_per_device_hour)},
          {"rent_provider", in.rent_provider},
          {"rent_price_date", in.rent_date},
          {"job_hours", in.job_hours},
          {"job_kind", in.job_kind},
          {"tokens_per_second", in.tokens_per_second}};
}

json result_json(const Device& d, const tco::Inputs& in, const tco::Result& r, const std::vector<std::string>& notes) {
  json sens = json::array();
  for (const auto& f : r.sensitivity) sens.push_back({{"input", f.input}, {"flips_at", opt_json(f.flips_at)}});
  json t = {{"own",
             {{"total_usd", r.own.total_usd},
              {"capex_usd", r.own.capex_usd},
              {"devices_usd", r.own.devices_usd},
              {"hosts_usd", r.own.hosts_usd},
              {"network_usd", r.own.network_usd},
              {"energy_usd", r.own.energy_usd},
              {"space_usd", r.own.space_usd},
              {"operations_usd", r.own.operations_usd},
              {"resale_usd", r.own.resale_usd}}},
            {"rent", {{"total_usd", opt_json(r.rent_total_usd)}, {"usd_per_device_hour", opt_json(r.rent_usd_per_device_hour)}}},
            {"cheaper", r.cheaper.empty() ? json(nullptr) : json(r.cheaper)},
            {"break_even_months", opt_json(r.break_even_months)},
            {"break_even_utilization", opt_json(r.break_even_utilization)},
            {"device_hours_delivered", r.busy_device_hours},
            {"jobs", opt_json(r.jobs)},
            {"usd_per_job", {{"own", opt_json(r.own_usd_per_job)}, {"rent", opt_json(r.rent_usd_per_job)}}},
            {"usd_per_device_hour", {{"own", r.own_usd_per_device_hour}, {"rent", opt_json(r.rent_usd_per_device_hour)}}},
            {"usd_per_million_tokens",
             {{"own", opt_json(r.own_usd_per_million_tokens)}, {"rent", opt_json(r.rent_usd_per_million_tokens)}}},
            {"sensitivity", sens}};
  return {{"schema_version", 1}, {"tco", t}, {"inputs", inputs_json(d, in)}, {"notes", notes}};
}

std::string csv_text(const tco::Result& r) {
  auto v = [](const std::optional<double>& x) { return x ? fmt::format("{}", *x) : std::string(); };
  report::Table t;
  t.header = {"own_total_usd", "own_capex_usd", "own_energy_usd", "own_space_usd", "own_operations_usd", "own_resale_usd",
              "rent_total_usd", "break_even_months", "break_even_utilization", "own_usd_per_job", "rent_usd_per_job",
              "own_usd_per_device_hour", "rent_usd_per_device_hour", "own_usd_per_million_tokens",
              "rent_usd_per_million_tokens"};
  t.rows.push_back({fmt::format("{}", r.own.total_usd), fmt::format("{}", r.own.capex_usd), fmt::format("{}", r.own.energy_usd),
                    fmt::format("{}", r.own.space_usd), fmt::format("{}", r.own.operations_usd),
                    fmt::format("{}", r.own.resale_usd), v(r.rent_total_usd), v(r.break_even_months),
                    v(r.break_even_utilization), v(r.own_usd_per_job), v(r.rent_usd_per_job),
                    fmt::format("{}", r.own_usd_per_device_hour), v(r.rent_usd_per_device_hour),
                    v(r.own_usd_per_million_tokens), v(r.rent_usd_per_million_tokens)});
  return report::render(t, report::Format::kCsv);
}

std::string flip_value(const std::string& input, double v) {
  if (input == "utilization" || input == "resale_fraction") return fmt::format("{:.1f}%", 100 * v);
  if (input == "years") return fmt::format("{:.1f} years ({:.0f} months)", v, v * 12);
  if (input == "pue") return fmt::format("{:.2f}", v);
  if (input == "usd_per_kwh") return report::money(v) + "/kWh";
  if (input == "usd_per_kw_month") return report::money(v) + "/kW-month";
  if (input == "rent_usd_per_device_hour") return report::money(v) + "/device-hour";
  return report::money(v);
}

std::string text_report(const Device& d, const tco::Inputs& in, const tco::Result& r, report::Format format) {
  auto m = [](const std::optional<double>& v) { return v ? report::money(*v) : std::string("-"); };
  std::string out = fmt::format("Cost of ownership: {} x {} over {:g} years at {:.3g}% utilisation ({}, {} per host)\n", in.count,
                                d.id, in.years, 100 * in.utilization, tco::to_string(in.host_class), in.devices_per_host);
  out += fmt::format("Buy: {} per device ({}, {}). Rent: {}\n\n", report::money(in.device_usd), in.device_price_kind,
                     in.device_price_date,
                     in.rent_usd_per_device_hour
                         ? fmt::format("{} per device-hour ({}, {}, {})", report::money(*in.rent_usd_per_device_hour),
                                       in.rent_basis, in.rent_provider.empty() ? "provider not named" : in.rent_provider,
                                       in.rent_date)
                         : "no " + in.rent_basis + " rental price in the catalog (give one with --rent-usd-per-hour or --prices)");
  report::Table t;
  t.header = {"", "own", "rent"};
  t.right_align = {false, true, true};
  t.rows.push_back({"devices", report::money(r.own.devices_usd), ""});
  t.rows.push_back({"host share", report::money(r.own.hosts_usd), ""});
  t.rows.push_back({"networking", report::money(r.own.network_usd), ""});
  t.rows.push_back({"electricity", report::money(r.own.energy_usd), ""});
  t.rows.push_back({"space / colocation", report::money(r.own.space_usd), ""});
  t.rows.push_back({"operations", report::money(r.own.operations_usd), ""});
  t.rows.push_back({fmt::format("resale ({:.0f}%)", 100 * in.resale_fraction_at_end()), report::money(-r.own.resale_usd), ""});
  t.rows.push_back({"total", report::money(r.own.total_usd), m(r.rent_total_usd)});
  t.rows.push_back({"per device-hour delivered", report::money(r.own_usd_per_device_hour), m(r.rent_usd_per_device_hour)});
  if (r.jobs)
    t.rows.push_back({fmt::format("per {} ({}, {:.3g} in the horizon)", in.job_kind, human_seconds(in.job_hours * 3600), *r.jobs),
                      m(r.own_usd_per_job), m(r.rent_usd_per_job)});
  if (r.own_usd_per_million_tokens)
    t.rows.push_back({"per million tokens", m(r.own_usd_per_million_tokens), m(r.rent_usd_per_million_tokens)});
  out += report::render(t, format) + "\n";
  if (r.cheaper.empty()) return out;
  out += fmt::format("{} is cheaper over {:g} years by {}.\n", r.cheaper == "own" ? "Owning" : "Renting", in.years,
                     report::money(std::fabs(r.own.total_usd - *r.rent_total_usd)));
  out += r.break_even_months ? fmt::format("Break-even: after {:.1f} months of use at this utilisation, owning (kept, not resold) costs "
                                           "less than renting.\n", *r.break_even_months)
                             : "Break-even: never: renting costs less each month than running owned hardware.\n";
  out += r.break_even_utilization
             ? fmt::format("Break-even utilisation over the horizon: {:.1f}% (owning wins above it).\n", 100 * *r.break_even_utilization)
             : "Break-even utilisation: none up to 100% (renting wins at any utilisation).\n";
  report::Table s;
  s.header = {"input", "decision flips at"};
  for (const auto& f : r.sensitivity)
    s.rows.push_back({f.input, f.flips_at ? flip_value(f.input, *f.flips_at) : "never (within the range searched)"});
  out += "\nWhat flips the decision (each input alone, the others as above):\n" + report::render(s, format);
  return out;
}

struct Costed {
  const Device* device = nullptr;
  tco::Inputs inputs;
  tco::Result result;
  std::vector<std::string> notes;
};

// The workload's estimate, then the costs. nullopt when the workload does not fit (exit 3, said on stderr).
std::optional<Costed> cost(const TcoOptions& o, const io::Registry& registry) {
  positive("--years", o.years);
  if (!(o.utilization > 0 && o.utilization <= 1)) throw InputError({}, "--utilization", "must be in (0, 1]");
  if (o.rent_basis != "on-demand" && o.rent_basis != "reserved")
    throw InputError({}, "--rent", "'" + o.rent_basis + "' is not one of: on-demand, reserved");
  Query q = resolve_query(registry, o.workload);
  Outcome outcome = run_query(q);
  const Device& d = *q.device;
  if (!outcome.found || !outcome.estimate.fits) {
    std::cerr << "hwplan: " << o.workload.model << " does not fit on " << q.input.system.count << " x " << d.id
              << " as configured (see hwplan estimate / hwplan fit): nothing to cost\n";
    return std::nullopt;
  }
  tco::Inputs in = tco::default_inputs(d, q.input.system.count, o.used, o.rent_basis);
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
  }
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
  const Estimate& e = outcome.estimate;
  if (e.training) {
    if (e.total_seconds > 0) in.job_hours = e.total_seconds / 3600;
    in.job_kind = "training run";
    in.tokens_per_second = e.train.tokens_per_second;
  } else if (e.infer.total_seconds > 0) {
    in.job_hours = e.infer.total_seconds / 3600;
    in.job_kind = "batch of requests";
    in.tokens_per_second = static_cast<double>(q.input.plan.global_batch()) * q.input.workload.generate / e.infer.total_seconds;
  }
  if (o.jobs) {
    positive("--jobs", *o.jobs);
    if (!(in.job_hours > 0))
      throw InputError({}, "--jobs", "this workload has no end to count jobs by: give --tokens (training) or use --utilization");
    double horizon_hours = in.years * 8760;
    double busy = *o.jobs * in.job_hours;
    if (busy > horizon_hours)
      throw InputError({}, "--jobs", fmt::format("{:g} jobs of {} take {:.0f} h, more than the {:g}-year horizon: raise --years or "
                                                 "--count", *o.jobs, human_seconds(in.job_hours * 3600), busy, in.years));
    in.utilization = busy / horizon_hours;
  }
  Costed c{&d, in, tco::evaluate(d, in), stale_notes(d, in)};
  if (!in.rent_usd_per_device_hour)
    c.notes.push_back("no " + in.rent_basis + " rental price for " + d.id + ": only owning is costed");
  return c;
}

int run_plot_tco(TcoOptions& o) {
  io::Registry registry = make_registry(*o.global);
  auto costed = cost(o, registry);
  if (!costed) return kExitNothingFeasible;
  for (const auto& n : costed->notes) std::cerr << "note: " << n << "\n";
  const Device& d = *costed->device;
  const tco::Inputs& in = costed->inputs;
  report::CostChart chart;
  chart.title = fmt::format("{} x {}: owning against renting at {:.0f}% utilisation", in.count, d.id, 100 * in.utilization);
  double months = in.years * 12;
  if (costed->result.break_even_months) months = std::max(months, std::min(120.0, *costed->result.break_even_months * 1.25));
  report::CostSeries own{"own", fmt::format("own: {} up front, then running costs", report::money(costed->result.own.capex_usd)), {}};
  report::CostSeries rent{"rent", in.rent_usd_per_device_hour ? fmt::format("rent: {}/device-hour ({})",
                                                                            report::money(*in.rent_usd_per_device_hour), in.rent_basis)
                                                              : std::string("rent: no price"),
                          {}};
  for (int i = 0; i <= 120; ++i) {
    double m = months * i / 120;
    own.points.push_back({m, tco::own_cumulative_usd(d, in, m)});
    if (in.rent_usd_per_device_hour) rent.points.push_back({m, tco::rent_cumulative_usd(in, m)});
  }
  chart.series.push_back(own);
  if (in.rent_usd_per_device_hour) chart.series.push_back(rent);
  if (costed->result.break_even_months) chart.break_even_months = *costed->result.break_even_months;
  io::write_file_atomically(o.plot_output, report::render_cost_svg(chart));
  std::cerr << "wrote " << o.plot_output << "\n";
  return kExitOk;
}

int run_tco(TcoOptions& o) {
  io::Registry registry = make_registry(*o.global);
  auto costed = cost(o, registry);
  if (!costed) return kExitNothingFeasible;
  const Device& d = *costed->device;
  const tco::Inputs& in = costed->inputs;
  const tco::Result& r = costed->result;
  const std::vector<std::string>& notes = costed->notes;
  report::Format format = format_of(*o.global);
  if (format != report::Format::kJson)
    for (const auto& n : notes) std::cerr << "note: " << n << "\n";
  if (format == report::Format::kJson) emit(*o.global, result_json(d, in, r, notes).dump(2) + "\n");
  else if (format == report::Format::kCsv) emit(*o.global, csv_text(r));
  else emit(*o.global, text_report(d, in, r, format));
  return kExitOk;
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
  app.add_option("--resale", o->resale, "Resale value at the end as a fraction of the purchase (default: the class curve)");
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
    add_format_option(*o->app, g);
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
  return c;
}

}  // namespace hwplan::cli
