// Calibration profiles: written atomically, read back identically, and used by the estimators.
#include <doctest/doctest.h>

#include <cmath>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "calibrate/local_validation.hpp"
#include "estimators/efficiency.hpp"
#include "io/profile_io.hpp"
#include "test_util.hpp"

using namespace hwplan;

namespace {
Profile sample() {
  Profile p;
  p.device_name = "NVIDIA H200";
  p.catalog_id = "h200-sxm";
  p.backend = "cuda";
  p.host = "test";
  p.date = "2026-12-02";
  p.kernel_launch_seconds = 4e-6;
  p.bandwidth = {{1e6, 1.0e12}, {1e9, 4.2e12}};
  p.gemm[Precision::kBf16] = {{2e9, 200e12}, {1e12, 780e12}};
  p.measurements.push_back({"gemm_bf16", "M=8192 N=8192 K=8192", 1.1e12, 780e12, 770e12, 10});
  return p;
}
}  // namespace

TEST_CASE("a profile survives a write and a read") {
  namespace fs = std::filesystem;
  fs::path path = fs::temp_directory_path() / ("hwplan_profile_" + std::to_string(::getpid()) + ".yaml");
  io::save_profile(sample(), path.string());
  Profile back = io::load_profile(path.string());
  CHECK(back.device_name == "NVIDIA H200");
  CHECK(back.catalog_id == "h200-sxm");
  REQUIRE(back.bandwidth.size() == 2);
  CHECK(back.bandwidth[1].achieved == ::hwplan::test::approx(4.2e12));
  REQUIRE(back.gemm.count(Precision::kBf16) == 1);
  CHECK(back.gemm[Precision::kBf16][1].achieved == ::hwplan::test::approx(780e12));
  REQUIRE(back.measurements.size() == 1);
  CHECK(back.measurements[0].repetitions == 10);
  CHECK(back.kernel_launch_seconds == ::hwplan::test::approx(4e-6).scale(0));
  fs::remove(path);
}

TEST_CASE("a profile replaces the default efficiency curves") {
  const Device& h200 = test::registry().device("h200-sxm");
  Profile p = sample();
  DeviceRates plain = device_rates(h200, Precision::kBf16);
  DeviceRates measured = device_rates(h200, Precision::kBf16, &p);
  // A large GEMM: the profile says 780 TFLOP/s, the kernel's fixed cost included.
  double t = gemm_seconds(measured, 8192, 8192, 8192, 1, 2);
  CHECK(2.0 * 8192 * 8192 * 8192 / t == ::hwplan::test::approx(780e12).epsilon(0.005));
  CHECK(std::fabs(gemm_seconds(plain, 8192, 8192, 8192, 1, 2) / t - 1) > 0.01);  // the default curve differs
  // Bandwidth: 4.2 TB/s measured for large transfers.
  CHECK(1e9 / memory_seconds(measured, 1e9) == ::hwplan::test::approx(4.2e12).epsilon(0.001).scale(0));
}

TEST_CASE("a profile's small kernels pay their fixed cost once") {
  // The curve's points are measured times of whole kernels, the 4 us floor (kernel_launch_us) included.
  const Device& h200 = test::registry().device("h200-sxm");
  Profile p = sample();
  p.bandwidth = {{1e5, 1e10}, {1e9, 4e12}};  // 100 KB in 10 us; 1 GB in 250 us
  DeviceRates r = device_rates(h200, Precision::kBf16, &p);
  // Each point is predicted as measured: the 4 us floor comes out of the rate and back in per kernel.
  CHECK(memory_seconds(r, 1e5) == ::hwplan::test::approx(10e-6).scale(0));
  CHECK(memory_seconds(r, 1e9) == ::hwplan::test::approx(250e-6).scale(0));
  // A floor larger than a measured time leaves a tenth of that time as work: bounded, never negative.
  p.kernel_launch_seconds = 20e-6;
  DeviceRates slow = device_rates(h200, Precision::kBf16, &p);
  CHECK(memory_seconds(slow, 1e5) == ::hwplan::test::approx(20e-6 + 1e-6).scale(0));
}

TEST_CASE("estimate warns when the profile is of another device") {
  namespace fs = std::filesystem;
  fs::path path = fs::temp_directory_path() / ("hwplan_profile_w_" + std::to_string(::getpid()) + ".yaml");
  io::save_profile(sample(), path.string());
  auto r = test::run_hwplan("estimate --model gpt2 --device t4 --profile " + path.string() + " --format json");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("profile") != std::string::npos);
  fs::remove(path);
}

TEST_CASE("recommend applies a profile to the device it was measured on only, and reads it once per version") {
  namespace fs = std::filesystem;
  fs::path path = fs::temp_directory_path() / ("hwplan_profile_rec_" + std::to_string(::getpid()) + ".yaml");
  Profile slow = sample();
  // An H200 measured at a quarter of its catalog rates: only the H200's answer may change.
  slow.bandwidth = {{1e6, 0.25e12}, {1e9, 1.0e12}};
  slow.gemm[Precision::kBf16] = {{2e9, 50e12}, {1e12, 200e12}};
  io::save_profile(slow, path.string());
  const std::string flags = "recommend --model llama-2-7b --task lora --batch 1 --seq 1024 --recompute full --devices h200-sxm,h100-sxm "
                            "--count 1 --top 5 --format json";
  auto with = test::run_hwplan(flags + " --profile " + path.string());
  auto without = test::run_hwplan(flags);
  REQUIRE(with.exit_code == 0);
  REQUIRE(without.exit_code == 0);
  auto a = nlohmann::json::parse(with.out), b = nlohmann::json::parse(without.out);
  CHECK(a["query"]["profile_device"] == "h200-sxm");
  CHECK(b["query"]["profile_device"].is_null());
  auto tokens = [](const nlohmann::json& j, const std::string& id) {
    for (const auto& c : j["candidates"])
      if (c["device"] == id) return c["tokens_per_second"].get<double>();
    return -1.0;
  };
  CHECK(tokens(a, "h100-sxm") == ::hwplan::test::approx(tokens(b, "h100-sxm")));
  CHECK(tokens(a, "h200-sxm") < 0.6 * tokens(b, "h200-sxm"));
  // The cache: the same file version is one parse; a rewritten file is read again.
  auto first = io::load_profile_cached(path.string());
  CHECK(io::load_profile_cached(path.string()) == first);
  io::save_profile(sample(), path.string());
  fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(2));
  auto second = io::load_profile_cached(path.string());
  CHECK(second != first);
  CHECK(second->gemm.at(Precision::kBf16).back().achieved == ::hwplan::test::approx(780e12));
  fs::remove(path);
}

TEST_CASE("the H200 profile measured on a lent GPU reproduces its own measurements") {
  // data/profiles/nvidia-h200.yaml: hwplan calibrate --backend cuda on a real H200 (scripts/gpu_check.sh). The
  // estimator's profile path must give back what was measured, each kernel's fixed cost counted once.
  Profile p = io::load_profile(test::source_path("data/profiles/nvidia-h200.yaml"));
  REQUIRE(p.backend == "cuda");
  REQUIRE(p.catalog_id == "h200-sxm");
  CHECK(p.kernel_launch_seconds > 1e-6);
  CHECK(p.sync_latency_seconds > p.kernel_launch_seconds);
  const Device& h200 = test::registry().device("h200-sxm");
  int checked = 0;
  for (const auto& x : p.measurements) {
    CAPTURE(x.kernel);
    CAPTURE(x.shape);
    double predicted = 0;
    if (x.kernel == "triad") {
      predicted = calibrate::predict_memory_seconds(h200, &p, x.size);
    } else if (x.kernel.rfind("gemm_", 0) == 0) {
      long m = 0, n = 0, k = 0;
      std::sscanf(x.shape.c_str(), "M=%ld N=%ld K=%ld", &m, &n, &k);
      auto prec = parse_precision(x.kernel.substr(5));
      if (!prec || m < 256) continue;  // decode-shaped GEMMs are not on the compute curve
      predicted = calibrate::predict_gemm_seconds(h200, &p, *prec, m, n, k);
    } else {
      continue;
    }
    const double measured = x.size / x.median;
    // Within 15% (the worst when last measured: fp32 256^3, -12%; 3 x 85 KiB triads, +11%, where the kernel is
    // all fixed cost).
    CHECK(std::fabs(predicted / measured - 1) <= 0.15);
    ++checked;
  }
  CHECK(checked >= 60);
}

TEST_CASE("a CPU's profile is refused for a GPU, and one of a device not in the catalog is said and applied nowhere else") {
  namespace fs = std::filesystem;
  fs::path cpu = fs::temp_directory_path() / ("hwplan_profile_cpu_" + std::to_string(::getpid()) + ".yaml");
  Profile p = sample();
  p.device_name = "Some CPU";
  p.catalog_id.clear();
  p.backend = "cpu";
  io::save_profile(p, cpu.string());
  auto refused = test::run_hwplan("estimate --model gpt2 --device h100-sxm --profile " + cpu.string());
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("'--profile'") != std::string::npos);
  CHECK(refused.err.find("measured on the CPU") != std::string::npos);
  // A GPU that is not in the catalog: applied to the device asked for, with a warning that says so.
  fs::path other = fs::temp_directory_path() / ("hwplan_profile_unknown_" + std::to_string(::getpid()) + ".yaml");
  Profile q = sample();
  q.device_name = "Unknown GPU";
  q.catalog_id.clear();
  io::save_profile(q, other.string());
  auto named = test::run_hwplan("estimate --model gpt2 --device h200-sxm --profile " + other.string() + " --format json");
  REQUIRE(named.exit_code == 0);
  auto j = nlohmann::json::parse(named.out);
  bool said = false;
  for (const auto& w : j["warnings"]) said = said || w.get<std::string>().find("matches no catalog device") != std::string::npos;
  CHECK(said);
  // Over the catalog it describes none of the devices: recommend's answers are the profile-free ones.
  const std::string flags = "recommend --model gpt2 --task lora --batch 1 --seq 512 --devices h200-sxm,h100-sxm --count 1 --format json";
  auto with = nlohmann::json::parse(test::run_hwplan(flags + " --profile " + other.string()).out);
  auto without = nlohmann::json::parse(test::run_hwplan(flags).out);
  REQUIRE(with["candidates"].size() == without["candidates"].size());
  for (std::size_t i = 0; i < with["candidates"].size(); ++i)
    CHECK(with["candidates"][i]["tokens_per_second"].get<double>() ==
          ::hwplan::test::approx(without["candidates"][i]["tokens_per_second"].get<double>()));
  fs::remove(cpu);
  fs::remove(other);
}
