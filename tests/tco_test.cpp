// Cost of ownership (src/tco): monotone in the prices and utilisation, resale 0 is plain capex + opex, break-even
// months by hand, the consumer resale curve from the catalog's own quotes, and the CLI's JSON contract.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tco/tco.hpp"
#include "test_util.hpp"

using namespace hwplan;

namespace {

tco::Inputs inputs_for(const Device& d, int count) {
  tco::Inputs in = tco::default_inputs(d, count, /*used=*/false, "on-demand");
  in.job_hours = 10;
  in.tokens_per_second = 1000;
  return in;
}

}  // namespace

TEST_CASE("a higher electricity price or a lower utilisation never makes owning look better") {
  for (const char* id : {"rtx-4090", "h100-sxm", "mi300x", "a100-80gb-sxm", "jetson-agx-orin-64gb"}) {
    CAPTURE(id);
    const Device& d = test::registry().device(id);
    tco::Inputs in = inputs_for(d, 8);
    if (!in.rent_usd_per_device_hour) in.rent_usd_per_device_hour = 1.0;  // a rental price to compare with
    double previous = -1e300;
    for (double kwh : {0.0, 0.05, 0.15, 0.3, 0.6, 1.2}) {
      in.usd_per_kwh = kwh;
      double own_minus_rent = tco::own_cost(d, in).total_usd - tco::rent_cost(in);
      CHECK(own_minus_rent >= previous);
      previous = own_minus_rent;
    }
    in.usd_per_kwh = 0.15;
    // Owning's cost per device-hour delivered against renting's: lower utilisation never narrows the gap.
    previous = -1e300;
    for (double u : {1.0, 0.8, 0.5, 0.3, 0.1, 0.02}) {
      in.utilization = u;
      tco::Result r = tco::evaluate(d, in);
      double gap = r.own_usd_per_device_hour - *r.rent_usd_per_device_hour;
      CHECK(gap >= previous - 1e-9);
      previous = gap;
    }
  }
}

TEST_CASE("a resale value of 0 gives the plain capex plus running costs") {
  const Device& d = test::registry().device("h100-sxm");
  tco::Inputs in = inputs_for(d, 16);
  in.resale_from_curve = false;
  in.resale_fraction = 0;
  tco::OwnCost c = tco::own_cost(d, in);
  CHECK(c.resale_usd == 0);
  CHECK(c.total_usd == ::hwplan::test::approx(c.capex_usd + c.energy_usd + c.space_usd + c.operations_usd));
  // 16 devices, 8 per server: two servers, networked.
  CHECK(c.devices_usd == ::hwplan::test::approx(16 * 27500));
  CHECK(c.hosts_usd == ::hwplan::test::approx(2 * 30000));
  CHECK(c.network_usd == ::hwplan::test::approx(2 * 15000));
}

TEST_CASE("break-even months and utilisation match a hand computation") {
  // One RTX 4090 in a desktop, 3 years at 50%: the worked example of the README.
  const Device& d = test::registry().device("rtx-4090");
  tco::Inputs in = inputs_for(d, 1);
  REQUIRE(in.device_usd == 1300);                // street price, 2026-05
  REQUIRE(*in.rent_usd_per_device_hour == 0.74);  // RunPod Secure Cloud, 2026-09
  tco::Result r = tco::evaluate(d, in);
  // capex = 1,300 (card) + 1,500 / 2 (half of a two-card desktop) = 2,050
  CHECK(r.own.capex_usd == ::hwplan::test::approx(2050));
  // energy over 3 years: (450 W + 150 W / 2) x 0.5 x 26,280 h x 0.15 $/kWh = 0.525 kW x 13,140 h x 0.15 = 1,034.775
  CHECK(r.own.energy_usd == ::hwplan::test::approx(1034.775));
  // running cost per month = 1,034.775 / 36 = 28.744; rent per month = 0.74 x 730 h x 0.5 = 270.10
  // break-even = 2,050 / (270.10 - 28.744) = 2,050 / 241.356 = 8.494 months
  REQUIRE(r.break_even_months);
  CHECK(*r.break_even_months == ::hwplan::test::approx(8.494).epsilon(0.001));
  // break-even utilisation: resale = 1,300 x 0.89^3 (the card) + 750 x 0.70^3 (the host share) = 916.46 + 257.25 =
  // 1,173.71; fixed = 2,050 - 1,173.71 = 876.29; at 100%: energy 2,069.55, rent 0.74 x 26,280 = 19,447.20;
  // u = 876.29 / (19,447.20 - 2,069.55) = 0.050426
  REQUIRE(r.break_even_utilization);
  CHECK(r.own.resale_usd == ::hwplan::test::approx(1300 * std::pow(0.89, 3) + 750 * std::pow(0.70, 3)));
  CHECK(*r.break_even_utilization == ::hwplan::test::approx(0.050426).epsilon(0.001));
  // The sensitivity entry for utilisation is the same point, found by search.
  for (const auto& f : r.sensitivity)
    if (f.input == "utilization") {
      REQUIRE(f.flips_at);
      CHECK(*f.flips_at == ::hwplan::test::approx(*r.break_even_utilization).epsilon(0.001));
    }
  // Renting that costs less per month than the electricity never breaks even.
  in.rent_usd_per_device_hour = 0.05;
  CHECK_FALSE(tco::evaluate(d, in).break_even_months);
}

TEST_CASE("the consumer resale curve is the catalog's launch and used quotes") {
  double log_sum = 0;
  int n = 0;
  for (const char* id : {"rtx-3090", "rtx-4090", "rtx-3060-12gb"}) {
    const Device& d = test::registry().device(id);
    REQUIRE(d.price.launch_msrp_usd);
    REQUIRE(d.price.used_usd);
    // months from the launch quote to the used quote
    int months = months_between(d.price.launch_msrp_date, 2030, 1) - months_between(d.price.used_date, 2030, 1);
    double per_year = std::pow(*d.price.used_usd / *d.price.launch_msrp_usd, 12.0 / months);
    log_sum += std::log(per_year);
    ++n;
  }
  double mean = std::exp(log_sum / n);
  CHECK(tco::host_defaults(tco::HostClass::kDesktop).residual_per_year == ::hwplan::test::approx(mean).epsilon(0.01));
}

TEST_CASE("a device without a purchase price is an error that says how to give one") {
  // The H100 NVL and the MI325X are rented (RunPod, a public cloud) but have no dated purchase quote in the catalog.
  const Device& nvl = test::registry().device("h100-nvl");
  CHECK_THROWS_WITH_AS(tco::default_inputs(nvl, 8, false, "on-demand"),
                       doctest::Contains("no purchase price for h100-nvl"), InputError);
  const Device& mi325x = test::registry().device("mi325x");
  CHECK_THROWS_WITH_AS(tco::default_inputs(mi325x, 1, true, "on-demand"), doctest::Contains("--prices FILE"), InputError);
}

TEST_CASE("hwplan tco: the JSON contract, old prices noted, unpriced devices exit 2") {
  auto r = test::run_hwplan("tco --model llama-3-70b --device h100-sxm --count 8 --task infer --batch 32 --format json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema_version"] == 1);
  for (const char* k : {"total_usd", "capex_usd", "energy_usd", "resale_usd"}) CHECK(j["tco"]["own"][k].is_number());
  CHECK(j["tco"]["rent"]["total_usd"].is_number());
  CHECK((j["tco"]["break_even_months"].is_number() || j["tco"]["break_even_months"].is_null()));
  CHECK((j["tco"]["break_even_utilization"].is_number() || j["tco"]["break_even_utilization"].is_null()));
  CHECK(j["tco"]["usd_per_million_tokens"]["own"].is_number());
  CHECK(j["tco"]["usd_per_million_tokens"]["rent"].is_number());
  REQUIRE(j["tco"]["sensitivity"].is_array());
  CHECK(j["tco"]["sensitivity"][0].contains("input"));
  CHECK(j["tco"]["sensitivity"][0].contains("flips_at"));
  for (const char* k : {"years", "utilization", "usd_per_kwh", "pue", "usd_per_kw_month", "host_usd", "resale_fraction"})
    CHECK(j["inputs"].contains(k));
  // The H100 street price is from 2023-08: more than two years before 2026-12.
  ::setenv("HWPLAN_TODAY", "2026-12", 1);
  auto old = test::run_hwplan("tco --model 7B --device h100-sxm --task infer");
  ::unsetenv("HWPLAN_TODAY");
  CHECK(old.err.find("street price of h100-sxm is from 2023-08, more than two years old") != std::string::npos);
  auto unpriced = test::run_hwplan("tco --model 7B --device h100-nvl --task infer");
  CHECK(unpriced.exit_code == 2);
  CHECK(unpriced.err.find("--prices FILE") != std::string::npos);
  // --jobs N: the utilisation is N jobs x the job time over the horizon.
  auto jobs = test::run_hwplan("tco --model llama-2-7b --device rtx-4090 --task lora --batch 1 --seq 1024 --recompute full "
                               "--tokens 1e8 --jobs 100 --format json");
  REQUIRE(jobs.exit_code == 0);
  auto jj = nlohmann::json::parse(jobs.out);
  double job_hours = jj["inputs"]["job_hours"];
  CHECK(jj["inputs"]["utilization"].get<double>() == ::hwplan::test::approx(100 * job_hours / (3 * 8760)));
  CHECK(jj["tco"]["jobs"].get<double>() == ::hwplan::test::approx(100));
  CHECK(test::run_hwplan("tco --model llama-2-7b --device rtx-4090 --task lora --batch 1 --seq 1024 --recompute full "
                         "--tokens 1e8 --jobs 1e6").exit_code == 2);
  auto csv = test::run_hwplan("tco --model 7B --device rtx-4090 --task infer --format csv");
  CHECK(csv.out.rfind("own_total_usd,own_capex_usd,", 0) == 0);
}

TEST_CASE("hwplan plot tco draws both cumulative costs and marks the break-even month") {
  std::string path = "/tmp/hwplan_tco_test_" + std::to_string(::getpid()) + ".svg";
  auto r = test::run_hwplan("plot tco --model 7B --device rtx-4090 --task infer --batch 8 -o " + path);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string svg = ss.str();
  CHECK(svg.find("class=\"series\" data-name=\"own\"") != std::string::npos);
  CHECK(svg.find("class=\"series\" data-name=\"rent\"") != std::string::npos);
  CHECK(svg.find("class=\"break-even\"") != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("recommend --own-years ranks on the owned cost of hwplan tco, one basis only") {
  auto r = test::run_hwplan("recommend --model llama-2-7b --task lora --own-years 3 --top 3 --format json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["candidates"].size() >= 1);
  for (const auto& c : j["candidates"]) {
    CHECK(c["cost_basis"] == "own");
    CHECK(c["cost_usd"].get<double>() > 0);
  }
  CHECK(test::run_hwplan("recommend --model llama-2-7b --task lora --own-years 3 --buy").exit_code == 2);
  CHECK(test::run_hwplan("recommend --model llama-2-7b --task lora --own-years 0").exit_code == 2);
}

TEST_CASE("tco says when the hosts it costs are not the nodes the job is timed on") {
  // Eight consumer cards: timed as one node of eight (as estimate, recommend and a rented pod time them), costed as
  // four two-card desktops with the 25 GbE between them; the note names the flag that times them as costed.
  const std::string work = "--model 1b --device rtx-4090 --count 8 --task train --seq 2048 --global-batch 256 --tokens 2e10";
  auto t = test::run_hwplan("tco " + work + " --format json");
  REQUIRE(t.exit_code == 0);
  const auto j = nlohmann::json::parse(t.out);
  const auto e = nlohmann::json::parse(test::run_hwplan("estimate " + work + " --format json").out);
  CHECK(j["inputs"]["job_hours"].get<double>() == ::hwplan::test::approx(e["time"]["total_seconds"].get<double>() / 3600));
  CHECK(j["tco"]["own"]["network_usd"].get<double>() > 0);
  CHECK(test::run_hwplan("tco " + work).err.find("owned as hosts of 2") != std::string::npos);
  // Timed as costed: the note's flag gives the estimate of four nodes, and no note.
  auto hosted = test::run_hwplan("tco " + work + " --devices-per-node 2 --format json");
  const auto e2 = nlohmann::json::parse(test::run_hwplan("estimate " + work + " --devices-per-node 2 --format json").out);
  CHECK(nlohmann::json::parse(hosted.out)["inputs"]["job_hours"].get<double>() ==
        ::hwplan::test::approx(e2["time"]["total_seconds"].get<double>() / 3600));
  CHECK(test::run_hwplan("tco " + work + " --devices-per-node 2").err.find("owned as hosts of") == std::string::npos);
  CHECK(test::run_hwplan("tco --model 1b --device h100-sxm --count 8 --task train --seq 2048 --global-batch 256 "
                         "--tokens 2e10").err.find("owned as hosts of") == std::string::npos);
}

TEST_CASE("recommend --own-years costs owned consumer cards as hwplan tco does, and says which hosts") {
  const std::string work = "--model 1b --task train --seq 2048 --global-batch 256 --tokens 2e10";
  const auto r = nlohmann::json::parse(
      test::run_hwplan("recommend " + work + " --own-years 3 --devices rtx-4090 --count 8 --format json").out);
  REQUIRE(r["candidates"].size() == 1);
  const auto& c = r["candidates"][0];
  // One job over the three years: hwplan tco --jobs 1 on the same devices, the same job time as recommend --rent.
  const auto t = nlohmann::json::parse(
      test::run_hwplan("tco " + work + " --device rtx-4090 --count 8 --jobs 1 --format json").out);
  CHECK(c["total_seconds"].get<double>() / 3600 == ::hwplan::test::approx(t["inputs"]["job_hours"].get<double>()));
  CHECK(c["cost_usd"].get<double>() == ::hwplan::test::approx(t["tco"]["own"]["total_usd"].get<double>()));
  const auto rent = nlohmann::json::parse(
      test::run_hwplan("recommend " + work + " --rent --devices rtx-4090 --count 8 --format json").out);
  CHECK(rent["candidates"][0]["total_seconds"].get<double>() == ::hwplan::test::approx(c["total_seconds"].get<double>()));
  bool said = false;
  for (const auto& reason : c["reasons"]) said = said || reason.get<std::string>().find("owned as hosts of 2") != std::string::npos;
  CHECK(said);
}
