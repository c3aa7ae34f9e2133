// Extremes: huge models, huge sequences, huge clusters, tiny batches. No overflow, no NaN/inf, and a sensible
// "does not fit" when it does not.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "test_util.hpp"

using hwplan::test::run_hwplan;
using nlohmann::json;

namespace {
// nlohmann writes NaN/inf as null: every number in these sections must be a finite number.
void require_numbers(const json& j, const std::string& path) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) require_numbers(it.value(), path + "." + it.key());
  } else if (j.is_number()) {
    CAPTURE(path);
    CHECK(std::isfinite(j.get<double>()));
  } else if (j.is_null()) {
    CAPTURE(path);
    // Only the section that does not apply (time for inference, inference for training), the job totals
    // without --tokens, the served TTFT of a request serve would not run (it does not fit) and the offload of a model
    // wholly on the device may be null.
    CHECK((path == "time" || path == "inference" || path == "time.total_seconds" || path == "time.training_seconds" ||
           path == "time.goodput" || path == "inference.served_time_to_first_token_seconds" ||
           path == "inference.time_to_first_token_seconds" || path == "inference.job" || path == "inference.offload"));
  }
}

json estimate_json(const std::string& args) {
  auto r = run_hwplan("estimate " + args + " --format json");
  CAPTURE(args);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  for (const char* section : {"memory", "plan", "time", "inference", "model"}) require_numbers(j[section], section);
  return j;
}
}  // namespace

TEST_CASE("a 10-trillion-parameter model") {
  json one = estimate_json("--model 10t --device h100-sxm");
  CHECK(one["memory"]["fits"] == false);
  CHECK(one["model"]["parameters"].get<double>() == ::hwplan::test::approx(1e13).epsilon(0.05));
  CHECK(one["memory"]["per_device_bytes"].get<double>() > 1e14);  // 16 bytes per parameter and more
  json many = estimate_json("--model 10t --device h100-sxm --count 100000 --global-batch 100000 --tokens 1e13");
  CHECK(many["search"]["found"] == true);
  CHECK(many["memory"]["fits"] == true);
  CHECK(many["time"]["total_seconds"].get<double>() > 0);
}

TEST_CASE("a 1M-token sequence is estimated (with a context warning) and does not fit one device") {
  json j = estimate_json("--model llama-3-8b --device h100-sxm --seq 1000000");
  CHECK(j["memory"]["fits"] == false);
  CHECK(j["warnings"].size() >= 1);
  json inf = estimate_json("--model llama-3-8b --device h100-sxm --task infer --prompt 1000000 --generate 100");
  CHECK(inf["memory"]["breakdown"]["kv_cache"].get<double>() > 1e11);  // 2 x 32 x 8 x 128 x 1M x 2 B = 131 GB
}

TEST_CASE("100,000 devices and batch 1") {
  json j = estimate_json("--model llama-2-7b --device a100-80gb-sxm --count 100000 --batch 1");
  CHECK(j["plan"]["tp"].get<long long>() * j["plan"]["pp"].get<long long>() * j["plan"]["dp"].get<long long>() == 100000);
  json small = estimate_json("--model llama-3.1-405b --device rtx-4060 --batch 1 --seq 128");
  CHECK(small["memory"]["fits"] == false);
}

TEST_CASE("nothing feasible: recommend exits 3 with the nearest misses") {
  auto r = run_hwplan("recommend --model llama-3.1-405b --task finetune --max-count 2 --class consumer --format json");
  CHECK(r.exit_code == 3);
  json j = json::parse(r.out);
  CHECK(j["candidates"].empty());
  CHECK(j["nearest_misses"].size() >= 1);
}
