#include "report/tco_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/strings.hpp"

namespace hwplan::report {
namespace {

using nlohmann::json;

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
          {"device_power_fraction", in.device_power_fraction},
          {"network_usd_per_host", in.network_usd_per_host},
          {"usd_per_kwh", in.usd_per_kwh},
          {"pue", in.pue},
          {"usd_per_kw_month", in.usd_per_kw_month},
          {"operations_fraction_per_year", in.operations_per_year},
          {"resale_fraction", in.resale_fraction_at_end()},
          {"host_resale_fraction", in.host_resale_fraction_at_end()},
          {"resale_from", in.resale_from_curve ? fmt::format("devices: class curve {:.2f} per year; hosts and networking: {:.2f} per year",
                                                             in.residual_per_year, in.host_residual_per_year)
                                               : "--resale"},
          {"rent_basis", in.rent_basis},
          {"rent_usd_per_device_hour", opt_json(in.rent_usd_per_device_hour)},
          {"rent_provider", in.rent_provider},
          {"rent_price_date", in.rent_date},
          {"job_hours", in.job_hours},
          {"job_kind", in.job_kind},
          {"token_kind", in.token_kind},
          {"tokens_per_second", in.tokens_per_second}};
}

std::string flip_value(const std::string& input, double v) {
  if (input == "utilization" || input == "resale_fraction") return fmt::format("{:.1f}%", 100 * v);
  if (input == "years") return fmt::format("{:.1f} years ({:.0f} months)", v, v * 12);
  if (input == "pue") return fmt::format("{:.2f}", v);
  if (input == "usd_per_kwh") return money(v) + "/kWh";
  if (input == "usd_per_kw_month") return money(v) + "/kW-month";
  if (input == "rent_usd_per_device_hour") return money(v) + "/device-hour";
  return money(v);
}

std::string money_or_dash(const std::optional<double>& v) { return v ? money(*v) : std::string("-"); }

}  // namespace

json tco_json(const TcoReport& rep) {
  const tco::Result& r = *rep.result;
  json sens = json::array();
  for (const auto& f : r.sensitivity) sens.push_back({{"input", f.input}, {"flips_at", opt_json(f.flips_at)}});
  json own_part = {{"total_usd", r.own.total_usd},
              {"capex_usd", r.own.capex_usd},
              {"devices_usd", r.own.devices_usd},
              {"hosts_usd", r.own.hosts_usd},
              {"network_usd", r.own.network_usd},
              {"energy_usd", r.own.energy_usd},
              {"space_usd", r.own.space_usd},
              {"operations_usd", r.own.operations_usd},
              {"resale_usd", r.own.resale_usd}};
  // A device that is only rented has no own side: null, never zeros.
  json t = {{"own", r.own_priced ? own_part : json(nullptr)},
            {"rent", {{"total_usd", opt_json(r.rent_total_usd)}, {"usd_per_device_hour", opt_json(r.rent_usd_per_device_hour)}}},
            {"cheaper", r.cheaper.empty() ? json(nullptr) : json(r.cheaper)},
            {"break_even_months", opt_json(r.break_even_months)},
            {"break_even_utilization", opt_json(r.break_even_utilization)},
            {"device_hours_delivered", r.busy_device_hours},
            {"jobs", opt_json(r.jobs)},
            {"usd_per_job", {{"own", opt_json(r.own_usd_per_job)}, {"rent", opt_json(r.rent_usd_per_job)}}},
            {"usd_per_device_hour",
             {{"own", r.own_priced ? json(r.own_usd_per_device_hour) : json(nullptr)}, {"rent", opt_json(r.rent_usd_per_device_hour)}}},
            {"usd_per_million_tokens",
             {{"own", opt_json(r.own_usd_per_million_tokens)}, {"rent", opt_json(r.rent_usd_per_million_tokens)}}},
            {"sensitivity", sens}};
  return {{"schema_version", 1}, {"tco", t}, {"inputs", inputs_json(*rep.device, *rep.inputs)}, {"notes", rep.notes}};
}

std::string tco_csv(const TcoReport& rep) {
  const tco::Result& r = *rep.result;
  auto v = [](const std::optional<double>& x) { return x ? fmt::format("{}", *x) : std::string(); };
  Table t;
  t.header = {"own_total_usd", "own_capex_usd", "own_energy_usd", "own_space_usd", "own_operations_usd", "own_resale_usd",
              "rent_total_usd", "break_even_months", "break_even_utilization", "own_usd_per_job", "rent_usd_per_job",
              "own_usd_per_device_hour", "rent_usd_per_device_hour", "own_usd_per_million_tokens",
              "rent_usd_per_million_tokens"};
  // Empty own cells for a device that is only rented.
  auto own = [&](double x) { return r.own_priced ? fmt::format("{}", x) : std::string(); };
  t.rows.push_back({own(r.own.total_usd), own(r.own.capex_usd), own(r.own.energy_usd), own(r.own.space_usd),
                    own(r.own.operations_usd), own(r.own.resale_usd), v(r.rent_total_usd), v(r.break_even_months),
                    v(r.break_even_utilization), v(r.own_usd_per_job), v(r.rent_usd_per_job),
                    own(r.own_usd_per_device_hour), v(r.rent_usd_per_device_hour),
                    v(r.own_usd_per_million_tokens), v(r.rent_usd_per_million_tokens)});
  return render(t, Format::kCsv);
}

std::string tco_heading(const TcoReport& rep) {
  const tco::Inputs& in = *rep.inputs;
  const Device& d = *rep.device;
  return fmt::format("Cost of ownership: {} x {} over {:g} years at {:.3g}% utilisation ({}, {} per host)", in.count, d.id, in.years,
                     100 * in.utilization, tco::to_string(in.host_class), in.devices_per_host);
}

Table tco_cost_table(const TcoReport& rep) {
  const tco::Inputs& in = *rep.inputs;
  const tco::Result& r = *rep.result;
  Table t;
  t.header = {"", "own", "rent"};
  t.right_align = {false, true, true};
  if (!r.own_priced) {  // only rented: the rent column alone
    t.rows.push_back({"total", "-", money_or_dash(r.rent_total_usd)});
    t.rows.push_back({"per device-hour delivered", "-", money_or_dash(r.rent_usd_per_device_hour)});
    if (r.jobs)
      t.rows.push_back({fmt::format("per {} ({}, {:.3g} in the horizon)", in.job_kind, human_seconds(in.job_hours * 3600), *r.jobs), "-",
                        money_or_dash(r.rent_usd_per_job)});
    if (r.rent_usd_per_million_tokens)
      t.rows.push_back({in.token_kind == "input" ? "per million input tokens" : in.token_kind == "samples" ? "per million samples" : "per million tokens",
                        "-", money_or_dash(r.rent_usd_per_million_tokens)});
    return t;
  }
  t.rows.push_back({"devices", money(r.own.devices_usd), ""});
  t.rows.push_back({"host share", money(r.own.hosts_usd), ""});
  t.rows.push_back({"networking", money(r.own.network_usd), ""});
  t.rows.push_back({fmt::format("electricity (devices at {:.0f}% of TDP)", 100 * in.device_power_fraction), money(r.own.energy_usd), ""});
  t.rows.push_back({"space / colocation", money(r.own.space_usd), ""});
  t.rows.push_back({"operations", money(r.own.operations_usd), ""});
  const double device_resale = in.resale_fraction_at_end(), host_resale = in.host_resale_fraction_at_end();
  const bool hosts_owned = r.own.hosts_usd + r.own.network_usd > 0;
  t.rows.push_back({hosts_owned && std::abs(device_resale - host_resale) > 0.005
                        ? fmt::format("resale (devices {:.0f}%, hosts {:.0f}%)", 100 * device_resale, 100 * host_resale)
                        : fmt::format("resale ({:.0f}%)", 100 * device_resale),
                    money(-r.own.resale_usd), ""});
  t.rows.push_back({"total", money(r.own.total_usd), money_or_dash(r.rent_total_usd)});
  t.rows.push_back({"per device-hour delivered", money(r.own_usd_per_device_hour), money_or_dash(r.rent_usd_per_device_hour)});
  if (r.jobs)
    t.rows.push_back({fmt::format("per {} ({}, {:.3g} in the horizon)", in.job_kind, human_seconds(in.job_hours * 3600), *r.jobs),
                      money_or_dash(r.own_usd_per_job), money_or_dash(r.rent_usd_per_job)});
  if (r.own_usd_per_million_tokens)
    t.rows.push_back({in.token_kind == "input"     ? "per million input tokens"
                      : in.token_kind == "samples" ? "per million samples"
                                                   : "per million tokens",
                      money_or_dash(r.own_usd_per_million_tokens), money_or_dash(r.rent_usd_per_million_tokens)});
  return t;
}

Table tco_flip_table(const TcoReport& rep) {
  Table s;
  s.header = {"input", "decision flips at"};
  for (const auto& f : rep.result->sensitivity)
    s.rows.push_back({f.input == "years" ? "years (resold at the end)" : f.input,
                      f.flips_at ? flip_value(f.input, *f.flips_at) : "never (within the range searched)"});
  return s;
}

std::vector<std::string> tco_verdict(const TcoReport& rep) {
  const tco::Inputs& in = *rep.inputs;
  const tco::Result& r = *rep.result;
  if (r.cheaper.empty()) return {};
  std::vector<std::string> out;
  out.push_back(fmt::format("{} is cheaper over {:g} years by {}.", r.cheaper == "own" ? "Owning" : "Renting", in.years,
                            money(std::fabs(r.own.total_usd - *r.rent_total_usd))));
  out.push_back(r.break_even_months
                    ? fmt::format("Break-even: after {:.1f} months of use at this utilisation, owning (kept, not resold) costs "
                                  "less than renting.",
                                  *r.break_even_months)
                    : "Break-even: never: renting costs less each month than running owned hardware.");
  out.push_back(r.break_even_utilization
                    ? fmt::format("Break-even utilisation over the horizon: {:.1f}% (owning wins above it).", 100 * *r.break_even_utilization)
                    : "Break-even utilisation: none up to 100% (renting wins at any utilisation).");
  return out;
}

std::string tco_text(const TcoReport& rep, Format format) {
  if (format == Format::kJson) return tco_json(rep).dump(2) + "\n";
  if (format == Format::kCsv) return tco_csv(rep);
  const tco::Inputs& in = *rep.inputs;
  std::string out = tco_heading(rep) + "\n";
  out += fmt::format("Buy: {}. Rent: {}\n\n",
                     in.ownable ? fmt::format("{} per device ({}, {})", money(in.device_usd), in.device_price_kind, in.device_price_date)
                                : "not sold (only rented; --prices with a street_usd quote costs owning)",
                     in.rent_usd_per_device_hour
                         ? fmt::format("{} per device-hour ({}, {}, {})", money(*in.rent_usd_per_device_hour), in.rent_basis,
                                       in.rent_provider.empty() ? "provider not named" : in.rent_provider, in.rent_date)
                         : "no " + in.rent_basis + " rental price in the catalog (give one with --rent-usd-per-hour or --prices)");
  out += render(tco_cost_table(rep), format) + "\n";
  std::vector<std::string> verdict = tco_verdict(rep);
  if (verdict.empty()) return out;
  for (const auto& s : verdict) out += s + "\n";
  out += "\nWhat flips the decision (each input alone, the others as above):\n" + render(tco_flip_table(rep), format);
  return out;
}

CostChart tco_chart(const TcoReport& rep) {
  const Device& d = *rep.device;
  const tco::Inputs& in = *rep.inputs;
  const tco::Result& r = *rep.result;
  CostChart chart;
  chart.title = fmt::format("{} x {}: owning against renting at {:.0f}% utilisation", in.count, d.id, 100 * in.utilization);
  double months = in.years * 12;
  if (r.break_even_months) months = std::max(months, std::min(120.0, *r.break_even_months * 1.25));
  CostSeries own{"own", fmt::format("own: {} up front, then running costs", money(r.own.capex_usd)), {}};
  CostSeries rent{"rent",
                  in.rent_usd_per_device_hour
                      ? fmt::format("rent: {}/device-hour ({})", money(*in.rent_usd_per_device_hour), in.rent_basis)
                      : std::string("rent: no price"),
                  {}};
  for (int i = 0; i <= 120; ++i) {
    double m = months * i / 120;
    if (r.own_priced) own.points.push_back({m, tco::own_cumulative_usd(d, in, m)});
    if (in.rent_usd_per_device_hour) rent.points.push_back({m, tco::rent_cumulative_usd(in, m)});
  }
  if (r.own_priced) chart.series.push_back(own);
  if (in.rent_usd_per_device_hour) chart.series.push_back(rent);
  if (r.break_even_months) chart.break_even_months = *r.break_even_months;
  return chart;
}

}  // namespace hwplan::report
