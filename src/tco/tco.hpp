// Total cost of ownership: owning devices (plus their share of a host, networking, electricity, space and
// operations, less resale) against renting the same device-hours. Pure arithmetic on a Device and a few facts
// about the workload; the CLI turns a workload into those facts with the usual estimate.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/device.hpp"

namespace hwplan::tco {

// The machine a device sits in. Each class has documented defaults (see host_defaults) that flags override.
enum class HostClass { kDesktop, kWorkstation, kServer, kEdgeModule };
const char* to_string(HostClass c);
HostClass host_class_of(const Device& d);

struct HostDefaults {
  int devices_per_host;           // cards one host holds
  double host_usd;                // CPU, board, RAM, storage, PSU, chassis: one host
  double host_watts;              // host power under load, W
  double network_usd_per_host;    // NICs, cables and a switch-port share; 0 for a single box
  double usd_per_kwh;             // electricity
  double pue;                     // facility overhead on power (1.0 at home)
  double usd_per_kw_month;        // colocation / space, per kW of provisioned power; 0 at home
  double operations_per_year;     // operations (admin, repairs, spares) as a fraction of capex per year
  double residual_per_year;       // resale value kept per year of age (resale = price x r^years)
};
HostDefaults host_defaults(HostClass c);
// Where each default of a class comes from, in words (input name as in Inputs / the JSON's inputs.*, source): the
// reports list them beside the catalog's citations. The comments in tco.cpp say the same.
std::vector<std::pair<std::string, std::string>> default_sources(HostClass c);

// Every input of the calculation. Defaults come from the host class; every one is reported (inputs.* in JSON).
struct Inputs {
  int count = 1;
  // False for a device that is only rented (TPU, Trainium: no purchase price): only renting is costed, the own
  // side stays empty (never priced as free).
  bool ownable = true;
  double years = 3;
  double utilization = 0.5;        // fraction of the horizon the devices do the work
  double device_power_fraction = 1;  // of TDP the devices draw while working (serving: kInferencePowerFraction)
  double device_usd = 0;           // purchase price per device
  std::string device_price_kind;   // street, launch_msrp, used, your quote
  std::string device_price_date;
  HostClass host_class = HostClass::kDesktop;
  int devices_per_host = 1;
  double host_usd = 0;
  double host_watts = 0;
  double network_usd_per_host = 0;
  double usd_per_kwh = 0;
  double pue = 1;
  double usd_per_kw_month = 0;
  double operations_per_year = 0;
  // Resale at the end of the horizon, as a fraction of the purchase: the devices on their class curve
  // residual_per_year ^ years, the hosts and networking on general computer equipment's host_residual_per_year ^
  // years; a given --resale fraction replaces both.
  bool resale_from_curve = true;
  double residual_per_year = 0;
  double host_residual_per_year = 0.70;
  double resale_fraction = 0;
  // The devices' fraction alone, the hosts' left as they are (the sensitivity search varies it).
  std::optional<double> device_resale_override;
  double resale_fraction_at_end() const;
  double host_resale_fraction_at_end() const;
  std::optional<double> rent_usd_per_device_hour;  // absent: no rental price known
  std::string rent_basis = "on-demand";             // on-demand | reserved
  std::string rent_provider;
  std::string rent_date;
  // The work: one job takes job_hours on `count` devices (0 when the workload has no end, e.g. training without
  // --tokens); it moves tokens_per_second (trained or generated) while running.
  double job_hours = 0;
  double tokens_per_second = 0;
  std::string job_kind = "job";  // what one job is, in words ("training run", "batch of requests")
  // Which tokens the per-million cost counts: "trained", "output" (generated), or "input" (an encoder's or a plain
  // forward pass's, which generate nothing), as recommend counts them.
  std::string token_kind = "output";
};

struct OwnCost {
  double devices_usd = 0, hosts_usd = 0, network_usd = 0;
  double capex_usd = 0;       // devices + hosts + network
  double energy_usd = 0;      // (device TDP + host share) x utilisation x hours x PUE x price
  double space_usd = 0;       // provisioned kW x PUE x months x price
  double operations_usd = 0;  // capex x fraction x years
  double resale_usd = 0;      // value recovered at the end (subtracted)
  double total_usd = 0;
  double monthly_running_usd = 0;  // energy + space + operations per month
};

struct Flip {
  std::string input;
  std::optional<double> flips_at;  // the value at which owning and renting cost the same; nullopt: never in range
};

struct Result {
  bool own_priced = true;  // Inputs::ownable: false leaves own, the own per-unit costs and the comparison empty
  OwnCost own;
  std::optional<double> rent_total_usd;
  std::optional<double> rent_monthly_usd;
  double busy_device_hours = 0;    // device-hours of work delivered over the horizon
  std::optional<double> jobs;      // jobs done over the horizon (when a job has an end)
  std::optional<double> own_usd_per_job, rent_usd_per_job;
  double own_usd_per_device_hour = 0;
  std::optional<double> rent_usd_per_device_hour;
  std::optional<double> own_usd_per_million_tokens, rent_usd_per_million_tokens;
  std::optional<double> break_even_months;       // owning costs no more than renting from then on; nullopt: never
  std::optional<double> break_even_utilization;  // utilisation at which the horizon totals are equal; nullopt: none in (0, 1]
  std::string cheaper;                           // "own", "rent", or "" when there is no rental price
  std::vector<Flip> sensitivity;
};

// Fills the class defaults for `d` (and its purchase and rental prices) into an Inputs. A device with no purchase
// price but a rental one on `rent_basis` (only rented: TPU, Trainium) gets ownable = false. Throws InputError when
// it has neither, or no used-market price with `used`.
Inputs default_inputs(const Device& d, int count, bool used, const std::string& rent_basis);
OwnCost own_cost(const Device& d, const Inputs& in);
double rent_cost(const Inputs& in);  // needs in.rent_usd_per_device_hour
Result evaluate(const Device& d, const Inputs& in);
// Cumulative cost at month m (for the plot): owning (purchase up front, running costs monthly, no resale) and renting.
double own_cumulative_usd(const Device& d, const Inputs& in, double months);
double rent_cumulative_usd(const Inputs& in, double months);

}  // namespace hwplan::tco
