// The physics assumptions as data (src/core/assumptions.hpp): listed with sources, overridable by name from YAML
// with strict checks, and the estimates follow the override and say so.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/assumptions.hpp"
#include "core/error.hpp"
#include "estimators/estimate.hpp"
#include "io/assumptions_io.hpp"
#include "validate/validation.hpp"
#include "test_util.hpp"

using namespace hwplan;

namespace {
// Restores the defaults when a test ends, whatever it changed.
struct DefaultsGuard {
  ~DefaultsGuard() { set_assumptions(Assumptions{}); }
};

std::string error_of(const std::string& text) {
  try {
    io::parse_assumptions(Assumptions{}, text, "a.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("every assumption has a unique name, a unit, a source and a range holding its default") {
  std::set<std::string> names;
  for (const AssumptionInfo& a : describe_assumptions(Assumptions{})) {
    CAPTURE(a.name);
    CHECK(names.insert(a.name).second);
    CHECK_FALSE(a.unit.empty());
    CHECK(a.source.size() > 20);
    CHECK(a.value == a.default_value);
    CHECK(a.default_value >= a.min);
    CHECK(a.default_value <= a.max);
    Assumptions b;
    CHECK(set_assumption(b, a.name, a.default_value * 0.5 + 1e-9));
  }
  CHECK(names.size() >= 19);
  Assumptions b;
  CHECK_FALSE(set_assumption(b, "no_such_thing", 1));
}

TEST_CASE("an override changes the estimate that uses it, and the estimate says so") {
  DefaultsGuard guard;
  const auto& reg = test::registry();
  Model m = reg.model("llama-2-7b");
  EstimateInput in;
  in.model = &m;
  in.device = &reg.device("h100-sxm");
  in.workload.task = Task::kInfer;
  in.workload.prompt = 128;
  in.workload.generate = 128;
  Estimate base = estimate(in);
  CHECK(assumptions_note().empty());
  Assumptions slow;
  slow.bandwidth_efficiency = 0.85 / 2;
  set_assumptions(slow);
  Estimate halved = estimate(in);
  // Decode is bandwidth-bound: half the achieved bandwidth, well over 1.5x the time per token (the kernel floors
  // and the engine's step overhead do not scale with it).
  CHECK(halved.infer.time_per_output_token_seconds > 1.5 * base.infer.time_per_output_token_seconds);
  CHECK(halved.infer.time_per_output_token_seconds < 2.0 * base.infer.time_per_output_token_seconds);
  bool said = false;
  for (const auto& w : halved.warnings) said |= w.find("bandwidth_efficiency 0.425 (default 0.85)") != std::string::npos;
  CHECK(said);
  set_assumptions(Assumptions{});
  CHECK(estimate(in).infer.time_per_output_token_seconds == ::hwplan::test::approx(base.infer.time_per_output_token_seconds).scale(0));
}

TEST_CASE("assumption files: unknown names with a suggestion, ranges and numbers checked, file and line named") {
  CHECK(error_of("bandwidth_efficiency: 0.8\nnetwork_efficiency: 0.9\n").empty());
  Assumptions a = io::parse_assumptions(Assumptions{}, "bandwidth_efficiency: 0.8\n", "a.yaml");
  CHECK(a.bandwidth_efficiency == ::hwplan::test::approx(0.8));
  CHECK(a.tensor_gemm_efficiency == ::hwplan::test::approx(Assumptions{}.tensor_gemm_efficiency));
  std::string typo = error_of("bandwith_efficiency: 0.8\n");
  CHECK(typo.find("a.yaml:1") != std::string::npos);
  CHECK(typo.find("did you mean 'bandwidth_efficiency'") != std::string::npos);
  CHECK(error_of("kernel_overhead_cycles: 6000\nbandwidth_efficiency: 7\n").find("a.yaml:2") != std::string::npos);
  CHECK_FALSE(error_of("bandwidth_efficiency: fast\n").empty());
  CHECK_FALSE(error_of("- bandwidth_efficiency\n").empty());
}

TEST_CASE("hwplan assumptions lists the active values, which --assumptions overrides") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_assumptions_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "network_efficiency: 0.5\n";
  auto list = test::run_hwplan("--assumptions " + file.string() + " assumptions --format json");
  REQUIRE(list.exit_code == 0);
  auto j = nlohmann::json::parse(list.out);
  bool found = false;
  for (const auto& a : j["assumptions"])
    if (a["name"] == "network_efficiency") {
      found = true;
      CHECK(a["value"].get<double>() == ::hwplan::test::approx(0.5));
      CHECK(a["default"].get<double>() == ::hwplan::test::approx(0.85));
      CHECK(a["overridden"] == true);
    }
  CHECK(found);
  auto plain = test::run_hwplan("assumptions");
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out.find("kernel_overhead_cycles") != std::string::npos);
  std::ofstream(file) << "network_efficency: 0.5\n";
  auto bad = test::run_hwplan("--assumptions " + file.string() + " assumptions");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("network_efficiency") != std::string::npos);
  fs::remove(file);
}

TEST_CASE("validate --sensitivity: which assumption each regime's residuals point at, and nothing left changed") {
  const std::vector<std::string> files = {test::source_path("data/measurements/published-throughput.yaml")};
  const double before = assumptions().bandwidth_efficiency;
  auto s = validate::assumption_sensitivity(test::registry(), files);
  CHECK(assumptions().bandwidth_efficiency == before);
  CHECK(assumptions_note().empty());
  REQUIRE_FALSE(s.empty());
  // More achieved bandwidth: batch-1 decode (bandwidth-bound) predicts more tokens/s; more kernel-floor cycles fewer.
  bool bw = false, floor = false;
  for (const auto& a : s) {
    if (a.assumption == "bandwidth_efficiency" && a.regime == "decode") bw = a.bias_change > 0.02;
    if (a.assumption == "kernel_overhead_cycles" && a.regime == "decode") floor = a.bias_change < -0.01;
    // Assumptions no quantity of the set depends on do not appear.
    CHECK(a.assumption != "restart_seconds");
  }
  CHECK(bw);
  CHECK(floor);
  for (std::size_t i = 1; i < s.size(); ++i) CHECK(std::fabs(s[i - 1].bias_change) >= std::fabs(s[i].bias_change));
  auto cli = test::run_hwplan("validate --measurements " + files[0] + " --sensitivity");
  REQUIRE(cli.exit_code == 0);
  CHECK(cli.out.find("Which assumption the residuals point at") != std::string::npos);
}
