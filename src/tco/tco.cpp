// Owning against renting: the arithmetic, the class defaults with where they come from, break-even points and
// which input flips the answer.
#include "tco/tco.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/error.hpp"

namespace hwplan::tco {
namespace {

constexpr double kHoursPerYear = 8760;
constexpr double kMonthsPerYear = 12;

// Electricity: USD 0.15/kWh, a round figure between the 2024 US averages that the EIA's Electric Power Monthly
// reports for residential (about 16.5 cents) and commercial (about 12.7 cents) customers. Use --usd-per-kwh.
constexpr double kUsdPerKwh = 0.15;
// Facility overhead: PUE 1.5 for a data-centre server, near the fleet averages of the Uptime Institute's annual
// surveys (about 1.56-1.58 in 2023-2024); 1.0 at home or on a desk, where no cooling plant is billed.
constexpr double kServerPue = 1.5;
// Resale, consumer cards: price kept per year of age, from the catalog's own launch and used quotes:
// RTX 3090 USD 1,499 (2020-09) -> 800 (2026-02): 0.534 after 65 months = 0.891/year;
// RTX 4090 USD 1,599 (2022-10) -> 1,025 (2026-05): 0.641 after 43 months = 0.883/year;
// RTX 3060 12GB USD 329 (2021-02) -> 200 (2026-02): 0.608 after 60 months = 0.905/year. Mean 0.89
// (tests/tco_test.cpp recomputes it from the catalog).
constexpr double kConsumerResidualPerYear = 0.89;

}  // namespace

const char* to_string(HostClass c) {
  switch (c) {
    case HostClass::kDesktop: return "consumer desktop";
    case HostClass::kWorkstation: return "workstation";
    case HostClass::kServer: return "8-way server";
    case HostClass::kEdgeModule: return "edge module";
  }
  return "?";
}

HostClass host_class_of(const Device& d) {
  switch (d.device_class) {
    case DeviceClass::kConsumer: return HostClass::kDesktop;
    case DeviceClass::kWorkstation: return HostClass::kWorkstation;
    case DeviceClass::kEdge: return HostClass::kEdgeModule;
    case DeviceClass::kDatacenter:
    case DeviceClass::kNpu: return HostClass::kServer;
  }
  return HostClass::kServer;
}

// The host, network, space and operations figures below are round assumptions, not measurements: they are
// reported with every result (inputs.*) and each has a flag. Residual values other than the consumer one are
// assumptions too (no dated launch and used quote pair exists for those classes in the catalog).
HostDefaults host_defaults(HostClass c) {
  switch (c) {
    case HostClass::kDesktop:
      // A desktop for up to two cards: CPU, board, 64 GB RAM, SSD, 1,200 W PSU, case; 150 W under load. With more than
      // one host, the 25 GbE per card that the estimate times them over (System's default network for the class): a
      // dual-port NIC, two switch ports and cables, USD 500 per host.
      return {2, 1500, 150, 500, kUsdPerKwh, 1.0, 0, 0, kConsumerResidualPerYear};
    case HostClass::kWorkstation:
      // A workstation for four cards (Threadripper/Xeon W class), 300 W under load; 25 GbE per card between hosts,
      // USD 1,000 per host.
      return {4, 5000, 300, 1000, kUsdPerKwh, 1.0, 0, 0.02, 0.80};
    case HostClass::kServer:
      // An 8-accelerator server without its accelerators (two CPUs, 2 TB RAM, NVMe, chassis, power): USD 30,000,
      // 1,500 W for CPUs, memory, fans and NICs; USD 15,000 of NICs, cables and switch ports per server when
      // there is more than one; colocation USD 150 per kW-month; operations 5% of capex a year.
      return {8, 30000, 1500, 15000, kUsdPerKwh, kServerPue, 150, 0.05, 0.70};
    case HostClass::kEdgeModule:
      // A module or developer kit is its own host (the price covers the board and its power).
      return {1, 0, 0, 0, kUsdPerKwh, 1.0, 0, 0, 0.80};
  }
  return {};
}

std::vector<std::pair<std::string, std::string>> default_sources(HostClass c) {
  std::vector<std::pair<std::string, std::string>> out;
  out.push_back({"usd_per_kwh", "USD 0.15/kWh: a round figure between the 2024 US averages of the EIA's Electric Power Monthly for "
                                "residential (about 16.5 cents) and commercial (about 12.7 cents) customers; --usd-per-kwh"});
  if (c == HostClass::kServer) {
    out.push_back({"pue", "1.5: near the fleet averages of the Uptime Institute's annual surveys (about 1.56-1.58 in 2023-2024); --pue"});
    out.push_back({"host_usd, host_watts, network_usd_per_host, usd_per_kw_month, operations_fraction_per_year",
                   "round assumptions, not measurements (an 8-accelerator server without accelerators USD 30,000 and 1,500 W; "
                   "USD 15,000 of networking per server; colocation USD 150 per kW-month; operations 5% of capex a year); "
                   "each has a flag"});
  } else {
    out.push_back({"pue", "1.0: no cooling plant is billed at home, on a desk or for a module (assumption); --pue"});
    out.push_back({"host_usd, host_watts, network_usd_per_host, operations_fraction_per_year",
                   "round assumptions, not measurements (the host this class of device sits in, its upkeep; between hosts, "
                   "25 GbE per card: USD 500 per desktop, 1,000 per workstation); --host-usd, --host-watts, "
                   "--network-usd-per-host, --operations"});
  }
  out.push_back({"host_resale_fraction",
                 "hosts and networking resell as general computer equipment, 0.70 of their value kept per year (34% after "
                 "three years, near straight-line depreciation over five): an assumption; --resale sets both"});
  out.push_back({"resale_fraction",
                 c == HostClass::kDesktop
                     ? "class curve 0.89 per year: the mean of the catalog's launch and used quotes of RTX 3090, RTX 4090 and "
                       "RTX 3060 12GB (tests/tco_test.cpp recomputes it); --resale"
                     : "class curve: an assumption (the catalog has no dated launch and used quote pair for this class); --resale"});
  return out;
}

double Inputs::resale_fraction_at_end() const {
  if (device_resale_override) return *device_resale_override;
  return resale_from_curve ? std::pow(residual_per_year, years) : resale_fraction;
}

double Inputs::host_resale_fraction_at_end() const {
  return resale_from_curve ? std::pow(host_residual_per_year, years) : resale_fraction;
}

Inputs default_inputs(const Device& d, int count, bool used, const std::string& rent_basis) {
  Inputs in;
  in.count = count;
  in.host_class = host_class_of(d);
  HostDefaults h = host_defaults(in.host_class);
  in.devices_per_host = h.devices_per_host;
  in.host_usd = h.host_usd;
  in.host_watts = h.host_watts;
  in.network_usd_per_host = h.network_usd_per_host;
  in.usd_per_kwh = h.usd_per_kwh;
  in.pue = h.pue;
  in.usd_per_kw_month = h.usd_per_kw_month;
  in.operations_per_year = h.operations_per_year;
  in.residual_per_year = h.residual_per_year;
  const Price& p = d.price;
  auto set_price = [&](double usd, const char* kind, const std::string& date) {
    in.device_usd = usd;
    in.device_price_kind = p.origins.count(kind) ? std::string("your quote (") + kind + ")" : kind;
    in.device_price_date = date;
  };
  if (used) {
    if (!p.used_usd)
      throw InputError({}, "used", "no used-market price for " + d.id + " in the catalog: give one with --prices FILE "
                                   "(used_usd, used_date) or drop --used");
    set_price(*p.used_usd, "used", p.used_date);
  } else if (p.street_usd) {
    set_price(*p.street_usd, "street", p.street_date);
  } else if (p.launch_msrp_usd) {
    set_price(*p.launch_msrp_usd, "launch_msrp", p.launch_msrp_date);
  } else if (p.rent_only) {
    in.ownable = false;  // sold to no one (a cloud service): renting is costed alone
    in.device_price_kind = "not sold";
  } else {
    throw InputError({}, "device", "no purchase price for " + d.id +
                                       " in the catalog (it is only rented, or no dated quote was found): give one "
                                       "with --prices FILE (street_usd, street_date)" +
                                       (p.used_usd ? " or use --used" : ""));
  }
  in.rent_basis = rent_basis;
  if (rent_basis == "reserved" && p.cloud_reserved_usd_per_hour) {
    in.rent_usd_per_device_hour = *p.cloud_reserved_usd_per_hour;
    in.rent_provider = p.cloud_reserved_provider + (p.cloud_reserved_term.empty() ? "" : ", " + p.cloud_reserved_term);
    in.rent_date = p.cloud_reserved_date;
  } else if (rent_basis == "on-demand" && p.cloud_usd_per_hour) {
    in.rent_usd_per_device_hour = *p.cloud_usd_per_hour;
    in.rent_provider = p.cloud_provider;
    in.rent_date = p.cloud_date;
  }
  return in;
}

namespace {

// Hosts as a share: count / devices per host (one card in a two-card desktop carries half of it). A partly filled
// host costs its full price: pass --devices-per-host to say how many the host really holds.
double hosts_for(const Inputs& in) { return static_cast<double>(in.count) / std::max(1, in.devices_per_host); }

// The devices resell on their class curve; hosts and networking (CPUs, boards, NICs, switches) as general
// computer equipment does.
double resale_of(const Inputs& in, const OwnCost& c) {
  return c.devices_usd * in.resale_fraction_at_end() + (c.hosts_usd + c.network_usd) * in.host_resale_fraction_at_end();
}

// Power drawn while working, W, before PUE: the devices at TDP and their hosts.
double working_watts(const Device& d, const Inputs& in) { return in.count * d.tdp_w + hosts_for(in) * in.host_watts; }

}  // namespace

OwnCost own_cost(const Device& d, const Inputs& in) {
  OwnCost c;
  double hosts = hosts_for(in);
  c.devices_usd = in.count * in.device_usd;
  c.hosts_usd = hosts * in.host_usd;
  c.network_usd = in.count > in.devices_per_host ? hosts * in.network_usd_per_host : 0;  // more than one host
  c.capex_usd = c.devices_usd + c.hosts_usd + c.network_usd;
  double hours = in.years * kHoursPerYear;
  double kw = working_watts(d, in) / 1000;  // provisioned: space is paid for the TDP
  double drawn_kw = (in.count * d.tdp_w * in.device_power_fraction + hosts_for(in) * in.host_watts) / 1000;
  c.energy_usd = drawn_kw * in.pue * hours * in.utilization * in.usd_per_kwh;
  c.space_usd = kw * in.pue * in.years * kMonthsPerYear * in.usd_per_kw_month;
  c.operations_usd = c.capex_usd * in.operations_per_year * in.years;
  c.resale_usd = resale_of(in, c);
  c.total_usd = c.capex_usd + c.energy_usd + c.space_usd + c.operations_usd - c.resale_usd;
  double months = in.years * kMonthsPerYear;
  c.monthly_running_usd = months > 0 ? (c.energy_usd + c.space_usd + c.operations_usd) / months : 0;
  return c;
}

double rent_cost(const Inputs& in) {
  return in.rent_usd_per_device_hour.value_or(0) * in.count * in.years * kHoursPerYear * in.utilization;
}

double own_cumulative_usd(const Device& d, const Inputs& in, double months) {
  OwnCost c = own_cost(d, in);
  return c.capex_usd + c.monthly_running_usd * months;
}

double rent_cumulative_usd(const Inputs& in, double months) {
  return in.rent_usd_per_device_hour.value_or(0) * in.count * (kHoursPerYear / kMonthsPerYear) * in.utilization * months;
}

namespace {

// Owning minus renting over the horizon; negative: owning is cheaper.
double own_minus_rent(const Device& d, const Inputs& in) { return own_cost(d, in).total_usd - rent_cost(in); }

// The value of one input at which owning and renting cost the same, searched on [lo, hi] (a fine scan, then
// bisection on each sign change). The decision can flip more than once (a short horizon resold at a high residual
// value favours owning, a middle one renting, a long one owning again): the crossing nearest the current value is
// the one that flips today's answer. nullopt when the sign never changes in the range.
std::optional<double> crossing(const Device& d, Inputs in, const std::function<void(Inputs&, double)>& set, double lo,
                               double hi, bool geometric, std::optional<double> current) {
  const int kSteps = 400;
  auto at = [&](int i) {
    double f = static_cast<double>(i) / kSteps;
    return geometric ? lo * std::pow(hi / lo, f) : lo + (hi - lo) * f;
  };
  auto diff = [&](double x) {
    set(in, x);
    return own_minus_rent(d, in);
  };
  auto distance = [&](double x) {
    if (!current) return x - lo;
    return geometric && x > 0 && *current > 0 ? std::fabs(std::log(x / *current)) : std::fabs(x - *current);
  };
  std::optional<double> best;
  double x0 = at(0), f0 = diff(x0);
  for (int i = 1; i <= kSteps; ++i) {
    double x1 = at(i), f1 = diff(x1);
    if ((f0 <= 0) != (f1 <= 0)) {
      double a = x0, b = x1, fa = f0;
      for (int k = 0; k < 60; ++k) {
        double mid = 0.5 * (a + b), fm = diff(mid);
        if ((fa <= 0) == (fm <= 0)) a = mid, fa = fm;
        else b = mid;
      }
      const double x = 0.5 * (a + b);
      if (!best || distance(x) < distance(*best)) best = x;
    }
    x0 = x1, f0 = f1;
  }
  return best;
}

std::vector<Flip> sensitivity(const Device& d, const Inputs& in) {
  std::vector<Flip> out;
  auto add = [&](const char* name, std::function<void(Inputs&, double)> set, double lo, double hi, bool geometric,
                 std::optional<double> current) {
    out.push_back({name, crossing(d, in, set, lo, hi, geometric, current)});
  };
  add("utilization", [](Inputs& x, double v) { x.utilization = v; }, 0.001, 1.0, true, in.utilization);
  add("years", [](Inputs& x, double v) { x.years = v; }, 0.05, 10.0, true, in.years);
  add("usd_per_kwh", [](Inputs& x, double v) { x.usd_per_kwh = v; }, 0.0, 2.0, false, in.usd_per_kwh);
  add("device_usd", [](Inputs& x, double v) { x.device_usd = v; }, 1.0, std::max(1e6, in.device_usd * 10), true, in.device_usd);
  add("rent_usd_per_device_hour", [](Inputs& x, double v) { x.rent_usd_per_device_hour = v; }, 0.001, 100.0, true,
      in.rent_usd_per_device_hour);
  // The devices' resale: the hosts and networking keep theirs.
  add("resale_fraction", [](Inputs& x, double v) { x.device_resale_override = v; }, 0.0, 1.0, false,
      in.resale_from_curve ? std::nullopt : std::optional<double>(in.resale_fraction));
  add("pue", [](Inputs& x, double v) { x.pue = v; }, 1.0, 3.0, false, in.pue);
  add("usd_per_kw_month", [](Inputs& x, double v) { x.usd_per_kw_month = v; }, 0.0, 1000.0, false, in.usd_per_kw_month);
  return out;
}

}  // namespace

Result evaluate(const Device& d, const Inputs& in) {
  Result r;
  if (!in.ownable) {
    // Only rented: the rent side alone, no comparison to make.
    r.own_priced = false;
    r.busy_device_hours = in.count * in.years * kHoursPerYear * in.utilization;
    const double busy = in.years * kHoursPerYear * in.utilization;
    const double tokens = in.tokens_per_second * busy * 3600;
    if (in.job_hours > 0 && busy > 0) r.jobs = busy / in.job_hours;
    if (!in.rent_usd_per_device_hour) return r;
    r.rent_total_usd = rent_cost(in);
    r.rent_monthly_usd = rent_cumulative_usd(in, 1);
    r.rent_usd_per_device_hour = *in.rent_usd_per_device_hour;
    if (tokens > 0) r.rent_usd_per_million_tokens = *r.rent_total_usd / tokens * 1e6;
    if (in.job_hours > 0) r.rent_usd_per_job = *in.rent_usd_per_device_hour * in.count * in.job_hours;
    return r;
  }
  r.own = own_cost(d, in);
  r.busy_device_hours = in.count * in.years * kHoursPerYear * in.utilization;
  if (r.busy_device_hours > 0) r.own_usd_per_device_hour = r.own.total_usd / r.busy_device_hours;
  double busy_hours = in.years * kHoursPerYear * in.utilization;  // wall-clock hours of work
  double tokens = in.tokens_per_second * busy_hours * 3600;
  if (tokens > 0) r.own_usd_per_million_tokens = r.own.total_usd / tokens * 1e6;
  if (in.job_hours > 0 && busy_hours > 0) {
    r.jobs = busy_hours / in.job_hours;
    r.own_usd_per_job = r.own.total_usd / *r.jobs;
  }
  if (!in.rent_usd_per_device_hour) return r;

  double rate = *in.rent_usd_per_device_hour;
  r.rent_total_usd = rent_cost(in);
  r.rent_monthly_usd = rent_cumulative_usd(in, 1);
  r.rent_usd_per_device_hour = rate;
  if (tokens > 0) r.rent_usd_per_million_tokens = *r.rent_total_usd / tokens * 1e6;
  if (in.job_hours > 0) r.rent_usd_per_job = rate * in.count * in.job_hours;
  r.cheaper = r.own.total_usd <= *r.rent_total_usd ? "own" : "rent";

  // Break-even: the month from which the purchase plus running costs (no resale: the hardware is kept) is no more
  // than the rent paid so far: capex + running x m = rent x m.
  double margin = *r.rent_monthly_usd - r.own.monthly_running_usd;
  if (margin > 0) r.break_even_months = r.own.capex_usd / margin;
  // Break-even utilisation: horizon totals equal. Own = fixed + energy_per_util x u, rent = rent_per_util x u.
  Inputs one = in;
  one.utilization = 1;
  OwnCost full = own_cost(d, one);
  double energy_per_util = full.energy_usd;
  double fixed = full.total_usd - energy_per_util;
  double rent_per_util = rent_cost(one);
  if (rent_per_util > energy_per_util) {
    double u = fixed / (rent_per_util - energy_per_util);
    if (u > 0 && u <= 1) r.break_even_utilization = u;
  }
  r.sensitivity = sensitivity(d, in);
  return r;
}

}  // namespace hwplan::tco
