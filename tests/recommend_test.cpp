// recommend's money: one cost basis per list, unpriced devices never free, budget rejections that name the
// cheapest working configuration, and "use --rent" / "use --buy" only where that price exists (issue 15 item 3).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "recommend/recommend.hpp"
#include "recommend/front_end.hpp"
#include "report/table.hpp"
#include "test_util.hpp"

using namespace hwplan;
using nlohmann::json;

namespace {

WorkloadSpec lora_7b() {
  WorkloadSpec w;
  w.model = "llama-2-7b";
  w.task = "lora";
  return w;
}

RecommendSpec spec_on(const std::string& basis, long long max_count = 4) {
  RecommendSpec s;
  s.cost_basis = basis;
  s.max_count = max_count;
  s.top = 100;
  return s;
}

bool has_purchase(const Device& d) { return d.price.launch_msrp_usd || d.price.street_usd; }

}  // namespace

TEST_CASE("recommend costs every candidate on one basis, and a device without that price is unpriced, not free") {
  // Property over the whole catalog and every basis: one basis for the list; a priced candidate's cost is the
  // basis's formula; a candidate without a price on it has no cost (never 0, never another basis's price).
  for (const char* asked : {"auto", "buy", "rent", "own"}) {
    CAPTURE(asked);
    Recommendation r = recommend(test::registry(), lora_7b(), spec_on(asked), 2);
    const std::string basis = r.cost_basis.basis;
    CHECK((basis == "buy" || basis == "rent" || basis == "own"));
    if (std::string(asked) != "auto") CHECK(basis == asked);
    REQUIRE(!r.candidates.empty());
    int unpriced = 0;
    for (const Candidate& c : r.candidates) {
      CAPTURE(c.device->id);
      CHECK(c.cost_basis == basis);
      const bool has_price = price_on_basis(*c.device, basis).has_value();
      CHECK(has_price == (c.cost_usd >= 0));
      CHECK(c.cost_usd != 0);
      if (!has_price) {
        ++unpriced;
        CHECK(std::any_of(c.reasons.begin(), c.reasons.end(),
                          [](const std::string& x) { return x.find("price in the catalog") != std::string::npos; }));
        continue;
      }
      const double porting = c.reasons.end() != std::find_if(c.reasons.begin(), c.reasons.end(), [](const std::string& x) {
                               return x.find("porting effort") != std::string::npos;
                             })
                                 ? 50000.0
                                 : 0.0;
      if (basis == "buy") {
        // Today's street price before the launch list price, as hwplan tco and the catalog take it.
        double unit = c.device->price.street_usd ? *c.device->price.street_usd : *c.device->price.launch_msrp_usd;
        CHECK(c.cost_usd == ::hwplan::test::approx(c.count * unit + porting).epsilon(1e-12));
      } else if (basis == "rent") {
        CHECK(c.cost_usd ==
              ::hwplan::test::approx(c.count * *c.device->price.cloud_usd_per_hour * c.total_seconds / 3600 + porting).epsilon(1e-9));
      } else {
        CHECK(c.cost_usd > c.count * *c.device->price.new_purchase_usd() * 0.01);  // owning costs something
      }
    }
    CHECK(unpriced == r.unpriced);
  }
}

TEST_CASE("the automatic cost basis is the one that prices more devices, a tie going to rent") {
  // Property over many subsets of the catalog: the rule, applied to the counts it reports.
  const auto& all = test::registry().devices();
  for (std::size_t start = 0; start < all.size(); ++start) {
    for (std::size_t n = 1; n <= 12 && start + n <= all.size(); n += 3) {
      std::vector<const Device*> subset;
      for (std::size_t i = start; i < start + n; ++i) subset.push_back(&all[i]);
      CostBasisChoice c = choose_cost_basis(subset, "auto");
      int rent = 0, buy = 0;
      for (const Device* d : subset) {
        rent += d->price.cloud_usd_per_hour ? 1 : 0;
        buy += has_purchase(*d) ? 1 : 0;
      }
      CHECK(c.automatic);
      CHECK(c.with_rent_price == rent);
      CHECK(c.with_buy_price == buy);
      CHECK(c.basis == (buy > rent ? "buy" : "rent"));
    }
  }
  std::vector<const Device*> none;
  CHECK(choose_cost_basis(none, "auto").basis == "rent");
  CHECK(choose_cost_basis(none, "own").basis == "own");
  CHECK_FALSE(choose_cost_basis(none, "own").automatic);
  CHECK_THROWS_AS(choose_cost_basis(none, "lease"), InputError);
}

TEST_CASE("when cost is weighed an unpriced device ranks after every priced one, never first as if free") {
  for (const char* objective : {"cost", "balanced"}) {
    CAPTURE(objective);
    RecommendSpec s = spec_on("buy");
    s.optimize = objective;
    Recommendation r = recommend(test::registry(), lora_7b(), s, 2);
    REQUIRE(r.unpriced > 0);  // the catalog has datacenter parts with only a rental price
    REQUIRE(r.unpriced < static_cast<int>(r.candidates.size()));
    bool seen_unpriced = false;
    for (const Candidate& c : r.candidates) {
      if (c.cost_usd < 0) seen_unpriced = true;
      else CHECK_FALSE(seen_unpriced);  // a priced candidate after an unpriced one: cost-less ranking
    }
    // Among themselves the unpriced are ranked on what they have: balanced scores them on time and energy.
    for (const Candidate& c : r.candidates)
      if (c.cost_usd < 0) CHECK(c.score == ::hwplan::test::approx(std::string(objective) == "cost" ? 0.0 : c.score));
    for (const Candidate& c : r.candidates)
      if (c.cost_usd < 0 && std::string(objective) == "balanced") CHECK(c.score > 0);
  }
  // Time alone does not weigh cost: priced and unpriced devices are ranked together by speed.
  RecommendSpec t = spec_on("buy");
  t.optimize = "time";
  Recommendation r = recommend(test::registry(), lora_7b(), t, 2);
  for (std::size_t i = 1; i < r.candidates.size(); ++i) CHECK(r.candidates[i - 1].score >= r.candidates[i].score);
}

TEST_CASE("a budget rejection names the cheapest configuration that does the job") {
  // Property over devices and budgets: the named configuration is the cheapest of the counts that work (each
  // checked with --count alone), and it is over the budget.
  for (const char* id : {"rtx-4060", "rtx-3090", "a100-40gb-sxm", "l4"}) {
    CAPTURE(id);
    for (const char* basis : {"buy", "rent"}) {
      CAPTURE(basis);
      RecommendSpec open = spec_on(basis, 16);
      open.devices = {id};
      if (!price_on_basis(test::registry().device(id), basis)) continue;
      // The cost of every working count, one at a time.
      double cheapest = INFINITY;
      int cheapest_count = 0;
      for (int count : candidate_counts(16)) {
        RecommendSpec one = open;
        one.count = count;
        Recommendation r = recommend(test::registry(), lora_7b(), one, 1);
        if (r.candidates.empty()) continue;
        if (r.candidates[0].cost_usd < cheapest) {
          cheapest = r.candidates[0].cost_usd;
          cheapest_count = count;
        }
      }
      if (cheapest_count == 0) continue;
      for (double fraction : {0.99, 0.5, 0.1}) {
        RecommendSpec tight = open;
        tight.budget_usd = cheapest * fraction;
        Recommendation r = recommend(test::registry(), lora_7b(), tight, 1);
        CHECK(r.candidates.empty());
        REQUIRE(r.rejected.size() == 1);
        REQUIRE(r.rejected[0].over_budget.has_value());
        CHECK(r.rejected[0].over_budget->count == cheapest_count);
        CHECK(r.rejected[0].over_budget->cost_usd == ::hwplan::test::approx(cheapest).epsilon(1e-12));
        CHECK(r.rejected[0].over_budget->cost_usd > *tight.budget_usd);
        REQUIRE(r.nearest_misses.size() == 1);
        CHECK(r.nearest_misses[0].over_budget->count == cheapest_count);
      }
      RecommendSpec enough = open;
      enough.budget_usd = cheapest * 1.001;
      CHECK_FALSE(recommend(test::registry(), lora_7b(), enough, 1).candidates.empty());
    }
  }
  auto cli = test::run_hwplan("recommend --model llama-2-7b --task lora --devices rtx-4090 --buy --budget-usd 1000 --format json");
  CHECK(cli.exit_code == 3);
  json j = json::parse(cli.out);
  REQUIRE(j["rejected"].size() == 1);
  CHECK(j["rejected"][0]["cheapest_configuration"]["count"] == 1);
  const double street = *test::registry().device("rtx-4090").price.street_usd;
  CHECK(j["rejected"][0]["cheapest_configuration"]["cost_usd"].get<double>() == ::hwplan::test::approx(street));
  CHECK(j["rejected"][0]["reason"].get<std::string>().find("1 x rtx-4090 at " + report::money(street)) != std::string::npos);
  // A quote given with --prices is what buying costs, here and in hwplan tco.
  const std::string prices = "/tmp/hwplan_recommend_test_" + std::to_string(::getpid()) + "_prices.yaml";
  std::ofstream(prices) << "rtx-4090:\n  street_usd: 1000\n  street_date: \"2026-11\"\n";
  auto quoted = test::run_hwplan("--prices " + prices + " recommend --model llama-2-7b --task lora --devices rtx-4090 "
                                 "--count 1 --buy --format json");
  std::remove(prices.c_str());
  REQUIRE(quoted.exit_code == 0);
  CHECK(json::parse(quoted.out)["candidates"][0]["cost_usd"].get<double>() == ::hwplan::test::approx(1000));
}

TEST_CASE("use --rent or use --buy is suggested only when that price exists") {
  // Property over the catalog: the fix offered for a missing price names a basis only where the device has it.
  for (const Device& d : test::registry().devices()) {
    CAPTURE(d.id);
    for (const char* basis : {"buy", "own"}) {
      std::string fix = price_fix(d, basis);
      CHECK((fix == "use --rent") == d.price.cloud_usd_per_hour.has_value());
      CHECK(fix.find("--buy") == std::string::npos);
    }
    std::string fix = price_fix(d, "rent");
    CHECK((fix == "use --buy") == has_purchase(d));
    CHECK(fix.find("--rent") == std::string::npos);
  }
  // And in what recommend prints, for every basis and a budget (which turns unpriced devices into rejections).
  for (const char* flag : {"--buy", "--rent", "--own-years 3"}) {
    CAPTURE(flag);
    auto r = test::run_hwplan(std::string("recommend --model llama-2-7b --task lora --max-count 2 --budget-usd 1e6 --format json ") + flag);
    REQUIRE(r.exit_code == 0);
    json j = json::parse(r.out);
    for (const auto& x : j["rejected"]) {
      const Device& d = test::registry().device(x["device"].get<std::string>());
      std::string text = x["reason"].get<std::string>() + " " + x["fix"].get<std::string>();
      if (text.find("use --rent") != std::string::npos) CHECK(d.price.cloud_usd_per_hour.has_value());
      if (text.find("use --buy") != std::string::npos) CHECK(has_purchase(d));
    }
  }
}

TEST_CASE("the cost basis is shown in the table header and the JSON") {
  auto t = test::run_hwplan("recommend --model llama-2-7b --task lora --max-count 2 --top 3");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("Cost basis: ") != std::string::npos);
  CHECK(t.out.find("automatic: the basis that prices more") != std::string::npos);
  auto j = test::run_hwplan("recommend --model llama-2-7b --task lora --max-count 2 --buy --format json");
  REQUIRE(j.exit_code == 0);
  json d = json::parse(j.out);
  CHECK(d["query"]["cost_basis"] == "buy");
  CHECK(d["query"]["cost_basis_requested"] == "buy");
  CHECK(d["query"]["cost_basis_rule"] == "asked for");
  auto html = test::run_hwplan("recommend --model llama-2-7b --task lora --max-count 2 --format html");
  REQUIRE(html.exit_code == 0);
  CHECK(html.out.find("Every cost is on one basis") != std::string::npos);
  for (const auto& c : d["candidates"]) {
    CHECK(c["cost_basis"] == "buy");
    CHECK(c["priced"].get<bool>() == !c["cost_usd"].is_null());
  }
}

TEST_CASE("recommend prices an inference job as hwplan tco does: whole requests, prefill and decode") {
  const std::string workload = "--model llama-3-8b --task infer --batch 8 --prompt 4000 --generate 100";
  auto rec = test::run_hwplan("recommend " + workload + " --devices h100-sxm --count 1 --rent --tokens 1e6 --format json");
  auto tco = test::run_hwplan("tco " + workload + " --device h100-sxm --format json");
  REQUIRE(rec.exit_code == 0);
  REQUIRE(tco.exit_code == 0);
  const json r = json::parse(rec.out)["candidates"][0], t = json::parse(tco.out);
  CHECK(r["cost_usd"].get<double>() ==
        ::hwplan::test::approx(t["tco"]["usd_per_million_tokens"]["rent"].get<double>()).epsilon(1e-9));
  CHECK(r["tokens_per_second"].get<double>() == ::hwplan::test::approx(t["inputs"]["tokens_per_second"].get<double>()).epsilon(1e-12));
  // A 4,000-token prompt per 100 output tokens: the prefill is a real share of the job, not left out.
  auto est = json::parse(test::run_hwplan("estimate " + workload + " --device h100-sxm --format json").out);
  CHECK(r["tokens_per_second"].get<double>() < 0.9 * 8 * est["inference"]["decode_tokens_per_second"].get<double>());
}

TEST_CASE("recommend --task serve ranks only the devices asked for, within --count and --require-interconnect") {
  const std::string q = "recommend --task serve --rate 20 --prompt 2000 --generate 300 --ttft-p95 1 "
                        "--tpot-p95 0.05 --requests 200 --format json";
  auto run = [&](const std::string& extra, int exit_code = 0, const std::string& model = "llama-3-8b") {
    auto r = test::run_hwplan(q + " --model " + model + " " + extra);
    REQUIRE(r.exit_code == exit_code);
    return json::parse(r.out);
  };
  const json only = run("--devices h100-sxm,rtx-4090");
  std::set<std::string> seen;
  for (const auto& c : only["candidates"]) seen.insert(c["device"].get<std::string>());
  for (const auto& c : only["excluded"]) seen.insert(c["device"].get<std::string>());
  CHECK(seen == std::set<std::string>{"h100-sxm", "rtx-4090"});
  // --count caps the fleet: a plan that needs more devices is left out, saying why.
  const json capped = run("--devices h100-sxm,rtx-4090 --count 4");
  REQUIRE(capped["candidates"].size() == 1);
  CHECK(capped["candidates"][0]["device"] == "h100-sxm");
  CHECK(capped["excluded"][0]["reason"].get<std::string>().find("--count 4") != std::string::npos);
  // GeForce cards have no NVLink-class fabric: each replica stays on one card, and a model no card holds is left out.
  const json fabric = run("--devices rtx-4090 --require-interconnect");
  REQUIRE(fabric["candidates"].size() == 1);
  CHECK(fabric["candidates"][0]["layout"]["tp"] == 1);
  CHECK(fabric["candidates"][0]["layout"]["pp"] == 1);
  CHECK(test::run_hwplan(q + " --model llama-3-8b --count 0").exit_code == 2);
  // The listed devices' estimates' warnings come with them (an fp8 fallback on an A100 here).
  const json fp8 = run("--devices a100-80gb-sxm --weights fp8");
  REQUIRE(fp8["candidates"].size() == 1);
  CHECK(fp8["candidates"][0]["warnings"].dump().find("fp8 is not supported") != std::string::npos);
  CHECK(test::run_hwplan(q.substr(0, q.find(" --format json")) + " --model llama-3-8b --devices a100-80gb-sxm --weights fp8")
            .out.find("warning (a100-80gb-sxm): fp8 is not supported") != std::string::npos);
  const json big = run("--devices rtx-4090 --require-interconnect", 3, "llama-2-70b");
  CHECK(big["candidates"].empty());
  CHECK(big["excluded"][0]["reason"].get<std::string>().find("--require-interconnect") != std::string::npos);
}

TEST_CASE("an assumption or fallback that changes the numbers is said by every command that uses the estimate") {
  // fp8 on an A100 runs in bf16: estimate warns, and so do fit, recommend, tco and serve.
  const std::string fallback = "fp8 is not supported by NVIDIA A100";
  auto has = [&](const json& list) {
    for (const auto& w : list)
      if (w.get<std::string>().find(fallback) != std::string::npos) return true;
    return false;
  };
  const std::string train = "--model llama-3-8b --precision fp8 --batch 1 --seq 4096";
  CHECK(has(json::parse(test::run_hwplan("estimate --device a100-80gb-sxm --format json " + train).out)["warnings"]));
  // And it is what runs: the same step as asking for bf16 (no fp8 casts added to GEMMs that run in 16 bits).
  for (const char* task : {"train", "lora"}) {
    auto step = [&](const std::string& precision) {
      return json::parse(test::run_hwplan("estimate --device a100-80gb-sxm --format json --model llama-3-8b --batch 1 "
                                          "--seq 1024 --task " + std::string(task) + " --precision " + precision).out)
          ["time"]["step_seconds"].get<double>();
    };
    CHECK(step("fp8") == doctest::Approx(step("bf16")));
  }
  CHECK(has(json::parse(test::run_hwplan("fit --device a100-80gb-sxm --format json " + train).out)["warnings"]));
  CHECK(test::run_hwplan("fit --device a100-80gb-sxm " + train).out.find("warning: " + fallback) != std::string::npos);
  const json rec = json::parse(test::run_hwplan("recommend --devices a100-80gb-sxm --count 8 --tokens 1e9 --rent --format json "
                                                "--model llama-3-8b --precision fp8").out);
  REQUIRE(rec["candidates"].size() == 1);
  CHECK(has(rec["candidates"][0]["warnings"]));
  CHECK(has(json::parse(test::run_hwplan("tco --device a100-80gb-sxm --count 8 --tokens 1e9 --global-batch 64 --format json "
                                         "--model llama-3-8b --precision fp8").out)["notes"]));
  CHECK(has(json::parse(test::run_hwplan("serve --model mixtral-8x7b --device a100-80gb-sxm --weights fp8 --concurrency 4 "
                                         "--requests 50 --format json").out)["warnings"]));
}

TEST_CASE("an old price is said wherever a cost rests on it: recommend and serve as tco") {
  ::setenv("HWPLAN_TODAY", "2026-12", 1);
  // The catalog's h100-sxm street price is from 2023-08: over two years before the pinned date.
  const json rec = json::parse(test::run_hwplan("recommend --model llama-3-8b --task lora --devices h100-sxm --count 1 --buy "
                                                "--format json").out);
  const json tco = json::parse(test::run_hwplan("tco --model llama-3-8b --task lora --device h100-sxm --format json").out);
  const json srv = json::parse(test::run_hwplan("serve --model llama-3-8b --device h100-sxm --concurrency 2 --requests 20 "
                                                "--format json").out);
  const json ranked = json::parse(test::run_hwplan("recommend --task serve --model llama-3-8b --devices h100-sxm --rate 2 "
                                                   "--requests 50 --buy --format json").out);
  ::setenv("HWPLAN_TODAY", "2024-01", 1);
  const json fresh = json::parse(test::run_hwplan("recommend --model llama-3-8b --task lora --devices h100-sxm --count 1 --buy "
                                                  "--format json").out);
  ::unsetenv("HWPLAN_TODAY");
  const std::string note = "the street price of h100-sxm is from 2023-08, more than two years old";
  REQUIRE(rec["candidates"].size() == 1);
  CHECK(rec["candidates"][0]["price_notes"].dump().find(note) != std::string::npos);
  CHECK(tco["notes"].dump().find(note) != std::string::npos);
  CHECK(srv["warnings"].dump().find(note) != std::string::npos);
  REQUIRE(ranked["candidates"].size() == 1);
  CHECK(ranked["candidates"][0]["price_notes"].dump().find(note) != std::string::npos);
  CHECK(fresh["candidates"][0]["price_notes"].empty());
}

TEST_CASE("inference replicas that change nothing per token do not win on rounding: the fewest devices are listed") {
  // Replicas of an encoder's forward pass: the same cost per token and energy per token at every count. The score is
  // equal to rounding, and the tie goes to the fewer devices.
  WorkloadSpec w;
  w.model = "bert-large";
  w.task = "infer";
  w.batch = 64;
  RecommendSpec s = spec_on("rent", 64);
  s.devices = {"b200", "h100-sxm"};
  Recommendation r = recommend(test::registry(), w, s, 2);
  REQUIRE(r.candidates.size() == 2);
  for (const Candidate& c : r.candidates) CHECK(c.count == 1);
}

TEST_CASE("a decoder asked for no tokens is timed by its forward pass, so --optimize time still ranks") {
  WorkloadSpec w;
  w.model = "llama-3-8b";
  w.task = "infer";
  w.batch = 8;
  w.generate = 0;
  RecommendSpec s = spec_on("rent", 1);
  s.optimize = "time";
  s.devices = {"a10", "a100-80gb-sxm", "h100-sxm"};
  Recommendation r = recommend(test::registry(), w, s, 2);
  REQUIRE(r.candidates.size() == 3);
  for (const Candidate& c : r.candidates) CHECK(c.step_seconds == ::hwplan::test::approx(c.estimate.infer.prefill_seconds));
  // Ranked by the job's time, the fastest first; the scores differ (not all 1).
  for (std::size_t i = 1; i < r.candidates.size(); ++i) CHECK(r.candidates[i - 1].total_seconds <= r.candidates[i].total_seconds);
  CHECK(r.candidates.back().score < 0.99);
}

TEST_CASE("owning over a horizon shorter than the job costs the job's whole length, and says so") {
  WorkloadSpec w = lora_7b();
  w.tokens = 1e10;
  RecommendSpec s = spec_on("own", 1);
  s.own_years = 0.01;
  s.devices = {"rtx-4090"};
  Recommendation r = recommend(test::registry(), w, s, 1);
  REQUIRE(r.candidates.size() == 1);
  const Candidate& c = r.candidates[0];
  // At least the electricity the job draws (TDP x training power fraction x hours, at the desktop's $0.15/kWh).
  CHECK(c.cost_usd > c.energy_kwh * 0.15);
  CHECK(std::any_of(c.reasons.begin(), c.reasons.end(),
                    [](const std::string& x) { return x.find("outlasts --own-years") != std::string::npos; }));
}

TEST_CASE("recommend refuses numbers it cannot compare against and filters that leave nothing, naming the flag") {
  auto key_of = [](const WorkloadSpec& w, const RecommendSpec& s) -> std::string {
    try {
      recommend(test::registry(), w, s, 1);
    } catch (const InputError& e) {
      return e.key();
    }
    return "";
  };
  WorkloadSpec w = lora_7b();
  {
    RecommendSpec s = spec_on("rent", 1);
    s.porting_cost_usd = -100000;
    CHECK(key_of(w, s) == "--porting-cost-usd");
    s.porting_cost_usd = std::nan("");
    CHECK(key_of(w, s) == "--porting-cost-usd");
  }
  {
    RecommendSpec s = spec_on("rent", 1);
    s.max_power_w = 0;
    CHECK(key_of(w, s) == "--max-power-w");
  }
  {
    WorkloadSpec infer = w;
    infer.task = "infer";
    RecommendSpec s = spec_on("rent", 1);
    s.min_decode_tokens_per_second = -5;
    CHECK(key_of(infer, s) == "--min-decode-tps");
  }
  {
    RecommendSpec s = spec_on("rent", 1);
    s.deadline = "1h";  // no --tokens: no job to hold to it
    CHECK(key_of(w, s) == "--deadline");
  }
  {
    RecommendSpec s = spec_on("rent", 1);
    s.devices = {"h100-sxm"};
    s.exclude = {"h100-sxm"};
    CHECK(key_of(w, s) == "--exclude");
    s.exclude.clear();
    s.classes = {"consumer"};
    CHECK(key_of(w, s) == "--class");
  }
}

TEST_CASE("a limit that stops the count search keeps the reason the smaller counts failed") {
  WorkloadSpec w;
  w.model = "llama-3-8b";
  w.task = "train";
  w.tokens = 2e10;
  RecommendSpec s = spec_on("rent", 8);
  s.devices = {"apple-m3-max-gpu"};
  Recommendation r = recommend(test::registry(), w, s, 1);
  REQUIRE(r.candidates.empty());
  REQUIRE(r.rejected.size() == 1);
  CHECK(r.rejected[0].reason.find("does not fit") != std::string::npos);
  CHECK(r.rejected[0].reason.find("standalone") != std::string::npos);
}

TEST_CASE("a fixed layout the model cannot take is said as such by recommend and the deadline search, not as a count") {
  // --tp 3 on 32 heads: the first count that holds three devices speaks, not "must be at most 1" from one device.
  auto rec = hwplan::test::run_hwplan("recommend --model llama-2-7b --tp 3 --tokens 1e10");
  CHECK(rec.exit_code == 2);
  CHECK(rec.err.find("does not divide the 32 attention heads") != std::string::npos);
  auto dl = hwplan::test::run_hwplan("estimate --model llama-2-7b --device h100-sxm --tp 3 --tokens 1e10 --deadline 1d");
  CHECK(dl.exit_code == 2);
  CHECK(dl.err.find("does not divide the 32 attention heads") != std::string::npos);
  // Inference too (standalone devices refuse several devices under --count: not the word on --tp).
  auto infer = hwplan::test::run_hwplan("recommend --model llama-2-7b --tp 3 --task infer");
  CHECK(infer.exit_code == 2);
  CHECK(infer.err.find("does not divide the 32 attention heads") != std::string::npos);
  // A layout the model cannot take is said before a search bound is blamed (--max-count 64 is the default).
  auto wide = hwplan::test::run_hwplan("recommend --model llama-2-7b --tp 128 --tokens 1e10");
  CHECK(wide.exit_code == 2);
  CHECK(wide.err.find("does not divide the 32 attention heads") != std::string::npos);
  // A search bounded below the layout's devices names the bound.
  auto small = hwplan::test::run_hwplan("recommend --model llama-2-7b --tp 4 --max-count 2 --tokens 1e10");
  CHECK(small.exit_code == 2);
  CHECK(small.err.find("'--max-count'") != std::string::npos);
  // A count below the degree names both.
  auto one = hwplan::test::run_hwplan("estimate --model llama-2-7b --device h100-sxm --tp 4");
  CHECK(one.exit_code == 2);
  CHECK(one.err.find("4-way needs at least 4 devices; the count is 1") != std::string::npos);
  // A layout that fits the model still recommends.
  CHECK(hwplan::test::run_hwplan("recommend --model llama-2-7b --tp 4 --tokens 1e10 --top 2").exit_code == 0);
}

TEST_CASE("an inference job of --tokens takes the same time in estimate, compare, recommend and tco") {
  const std::string work = " --model llama-3-8b --task infer --batch 8 --tokens 1e9";
  auto est = nlohmann::json::parse(hwplan::test::run_hwplan("estimate --device h100-sxm" + work + " --format json").out);
  REQUIRE(est["inference"]["job"].is_object());
  const double seconds = est["inference"]["job"]["total_seconds"].get<double>();
  CHECK(est["inference"]["job"]["counts"] == "output");
  CHECK(seconds == hwplan::test::approx(1e9 / est["inference"]["job"]["tokens_per_second"].get<double>()));
  auto rec = nlohmann::json::parse(
      hwplan::test::run_hwplan("recommend --devices h100-sxm --count 1 --rent" + work + " --format json").out);
  CHECK(rec["candidates"][0]["total_seconds"].get<double>() == hwplan::test::approx(seconds));
  auto cmp = nlohmann::json::parse(hwplan::test::run_hwplan("compare --devices h100-sxm,a100-80gb-sxm" + work + " --format json").out);
  CHECK(cmp[0]["inference"]["job"]["total_seconds"].get<double>() == hwplan::test::approx(seconds));
  auto tco = nlohmann::json::parse(hwplan::test::run_hwplan("tco --device h100-sxm" + work + " --format json").out);
  CHECK(tco["inputs"]["job_hours"].get<double>() * 3600 == hwplan::test::approx(seconds));
  // Without --tokens there is no job.
  auto plain = nlohmann::json::parse(hwplan::test::run_hwplan("estimate --device h100-sxm --model llama-3-8b --task infer --format json").out);
  CHECK(plain["inference"]["job"].is_null());
}

TEST_CASE("recommend for inference names the engine each device was priced with") {
  const std::string q = "recommend --model llama-3-8b --task infer --batch 1 --weights int4 --buy "
                        "--devices rtx-4090,apple-m4-max-gpu";
  const json j = json::parse(test::run_hwplan(q + " --format json").out);
  std::map<std::string, std::string> engine;
  for (const auto& c : j["candidates"]) {
    engine[c["device"].get<std::string>()] = c["stack"].get<std::string>();
    CHECK(c["stack_assumed"].get<bool>());
  }
  CHECK(engine["rtx-4090"] == "vllm");
  CHECK(engine["apple-m4-max-gpu"] == "llamacpp");
  const auto table = test::run_hwplan(q);
  CHECK(table.out.find("engine: each device's default") != std::string::npos);
  CHECK(table.out.find("llamacpp") != std::string::npos);
  // Named, it is the one every row uses.
  const json named = json::parse(test::run_hwplan(q + " --engine llamacpp --format json").out);
  for (const auto& c : named["candidates"]) {
    CHECK(c["stack"] == "llamacpp");
    CHECK_FALSE(c["stack_assumed"].get<bool>());
  }
}

TEST_CASE("fit's verdict on an offload the host cannot hold is the one it gives the same change as advice") {
  const std::string a = "--model mixtral-8x7b --device a100-80gb-sxm --count 8 --task finetune --seq 2048 --global-batch 32";
  // As advice, --offload params is no way to fit: more host memory than a typical host has.
  std::string advice;
  const json advised = json::parse(test::run_hwplan("fit " + a + " --format json").out);
  for (const auto& c : advised["changes"])
    if (c["flags"].get<std::string>() == "--offload params") {
      CHECK_FALSE(c["fits"].get<bool>());
      advice = c["change"].get<std::string>();
    }
  CHECK(advice.find("more host memory than a typical host has") != std::string::npos);
  // As the configuration given, it is not a plain "fits" either, in any format.
  const std::string offload = a + " --offload params";
  CHECK(test::run_hwplan("fit " + offload).out.find("fits the device, but its host needs more memory") != std::string::npos);
  const json j = json::parse(test::run_hwplan("fit " + offload + " --format json").out);
  CHECK(j["fits"].get<bool>());
  CHECK(j["host_memory_short"].get<bool>());
  const auto e = json::parse(test::run_hwplan("estimate " + offload + " --format json").out);
  CHECK(e["memory"]["host_memory_short"].get<bool>());
  CHECK(test::run_hwplan("estimate " + offload).out.find("host memory short") != std::string::npos);
  // CSV and markdown carry what the table prints around its rows: the configuration as given, the largest batch,
  // the warnings.
  const std::string csv = test::run_hwplan("fit " + offload + " --format csv").out;
  CHECK(csv.find("as configured,,host memory short") != std::string::npos);
  CHECK(csv.find("largest micro-batch that fits as configured") != std::string::npos);
  CHECK(csv.find("warning,the host needs") != std::string::npos);
  const std::string md = test::run_hwplan("fit " + offload + " --format markdown").out;
  CHECK(md.find("As configured:") != std::string::npos);
  CHECK(md.find("**warning:** the host needs") != std::string::npos);
}

TEST_CASE("recommend --buy says more consumer cards than a desktop holds need hosts its price leaves out") {
  auto r = test::run_hwplan("recommend --model llama-2-7b --task lora --buy --devices rtx-4060 --count 8 --format json");
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  bool said = false;
  for (const auto& c : j["candidates"])
    for (const auto& reason : c["reasons"]) said = said || reason.get<std::string>().find("8 cards need 4 hosts of 2") != std::string::npos;
  CHECK(said);
  // One card fits a desktop: nothing to add.
  auto one = test::run_hwplan("recommend --model llama-2-7b --task lora --buy --devices rtx-5090 --count 1");
  CHECK(one.out.find("hosts of") == std::string::npos);
  // Hosts of four, as --devices-per-node says.
  auto four = test::run_hwplan("recommend --model llama-2-7b --task lora --buy --devices rtx-4060 --count 8 --devices-per-node 4");
  CHECK(four.out.find("8 cards need 2 hosts of 4") != std::string::npos);
}

TEST_CASE("fit combines a micro-batch of 1 (same global batch) with the other changes where none fits alone") {
  auto r = ::hwplan::test::run_hwplan("fit --model llama-2-13b --device rtx-4090 --task lora --batch 8 --seq 4096 --format json");
  CHECK(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& c : j["combinations"]) {
    if (c["flags"].get<std::string>().find("--batch 1 --grad-accum 8") == std::string::npos) continue;
    found = found || (c["fits"].get<bool>() && !c["changes_numerics"].get<bool>());
  }
  CHECK(found);
}
