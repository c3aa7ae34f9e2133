// Batch evaluation: every scenario runs, bad ones fail alone with file:line, the order is stable.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "test_util.hpp"

using hwplan::test::run_hwplan;
using nlohmann::json;

TEST_CASE("the example batch file runs every scenario") {
  auto r = run_hwplan("batch " + hwplan::test::source_path("data/examples/batch.yaml") + " --format json");
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["schema_version"] == 1);
  CHECK(j["scenarios"].size() == 5);
  for (const auto& s : j["scenarios"]) CHECK(s["ok"] == true);
  CHECK(j["scenarios"][0]["result"]["memory"]["fits"] == true);
  CHECK(j["scenarios"][4]["command"] == "recommend");
  // The table's fit row names what fit itself names: no single change fits the 13B full fine-tune on a 4090, the
  // fastest combination does.
  auto table = run_hwplan("batch " + hwplan::test::source_path("data/examples/batch.yaml"));
  const std::string combined = j["scenarios"][3]["result"]["combined"]["flags"].get<std::string>();
  CHECK(table.out.find("try: together: ") != std::string::npos);
  CHECK(table.out.find("(" + combined + ")") != std::string::npos);
}

TEST_CASE("bad scenarios fail alone, naming file:line and the key, and the exit code says some failed") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_batch_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "defaults: {seq: 1024}\n"
                         "scenarios:\n"
                         "  - {name: good, model: gpt2, device: t4}\n"
                         "  - {name: typo, model: gpt2, device: t4, bacth: 4}\n"
                         "  - {name: unknown-device, model: gpt2, device: h100-sxn}\n"
                         "  - {name: negative, model: gpt2, device: t4, batch: -3}\n"
                         "  - {name: good2, model: bert-base, device: a10, task: infer}\n";
  auto r = run_hwplan("batch " + file.string() + " --format csv");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("good,estimate,t4") != std::string::npos);
  CHECK(r.out.find("good2,estimate,a10") != std::string::npos);
  CHECK(r.err.find(file.string() + ":4:") != std::string::npos);
  CHECK(r.err.find("bacth") != std::string::npos);
  CHECK(r.err.find("did you mean 'batch'") != std::string::npos);
  CHECK(r.err.find(file.string() + ":5:") != std::string::npos);
  CHECK(r.err.find("did you mean 'h100-sxm'") != std::string::npos);
  CHECK(r.err.find(file.string() + ":6:") != std::string::npos);
  CHECK(r.err.find("3 of 5 scenarios failed") != std::string::npos);
  fs::remove(file);
}

TEST_CASE("a batch of 2,000 scenarios with 1% bad rows reports exactly those rows, identically on 1 or 2 threads") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_big_" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(file);
    out << "scenarios:\n";
    const char* devices[] = {"t4", "a10", "rtx-4090", "a100-80gb-sxm", "h100-sxm"};
    for (int i = 0; i < 2000; ++i) {
      if (i % 100 == 7) out << "  - {name: s" << i << ", model: gpt2, device: t4, batch: 0}\n";
      else out << "  - {name: s" << i << ", model: gpt2, device: " << devices[i % 5] << ", batch: " << 1 + i % 8 << "}\n";
    }
  }
  auto one = run_hwplan("batch " + file.string() + " --format csv --threads 1");
  auto two = run_hwplan("batch " + file.string() + " --format csv --threads 2");
  CHECK(one.exit_code == 2);
  CHECK(one.out == two.out);
  CHECK(one.err == two.err);
  CHECK(one.err.find("20 of 2000 scenarios failed") != std::string::npos);
  fs::remove(file);
}

TEST_CASE("recommend gives identical results with 1 or 2 threads") {
  auto strip_timing = [](json j) {
    j.erase("search");
    return j.dump();
  };
  auto one = run_hwplan("recommend --model llama-2-13b --task lora --max-count 16 --threads 1 --format json");
  auto two = run_hwplan("recommend --model llama-2-13b --task lora --max-count 16 --threads 2 --format json");
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  CHECK(strip_timing(json::parse(one.out)) == strip_timing(json::parse(two.out)));
  json j = json::parse(one.out);
  CHECK(j["candidates"].size() >= 1);
  for (const char* k : {"device", "count", "plan", "fits", "per_device_bytes", "step_seconds", "tokens_per_second",
                        "total_seconds", "cost_usd", "energy_kwh", "score", "reasons"})
    CHECK(j["candidates"][0].contains(k));
  CHECK(j["rejected"].is_array());
}

TEST_CASE("a CNN's batch row counts samples as estimate does, whatever seq the defaults set") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_batch_cnn_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "defaults: {seq: 2048}\n"
                         "scenarios:\n"
                         "  - {name: resnet, model: resnet-50, device: h100-sxm, batch: 256}\n";
  auto table = run_hwplan("batch " + file.string());
  auto est = json::parse(run_hwplan("estimate --model resnet-50 --device h100-sxm --batch 256 --format json").out);
  fs::remove(file);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find(fmt::format("{:.0f} samples/s", est["time"]["samples_per_second"].get<double>())) != std::string::npos);
}

TEST_CASE("a batch scenario answers as the command line does: recommend's device and count, estimate's deadline") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_batch_same_" + std::to_string(::getpid()) + ".yaml");
  const std::string job = "model: llama-3-8b, framework: megatron, global_batch: 128, tokens: 1e10, rent: true";
  std::ofstream(file) << "scenarios:\n"
                         "  - {name: rec, command: recommend, device: h100-sxm, count: 8, " << job << "}\n"
                         "  - {name: list, command: recommend, devices: [h100-sxm, a100-80gb-sxm], count: 8, " << job << "}\n"
                         "  - {name: deadline, model: llama-3-8b, device: h100-sxm, tokens: 1e11, deadline: 7d}\n"
                         "  - {name: both, model: llama-3-8b, device: h100-sxm, count: 8, tokens: 1e11, deadline: 7d}\n";
  auto b = run_hwplan("batch " + file.string() + " --format json");
  CHECK(b.exit_code == 2);  // the last scenario gives a count and a deadline
  CHECK(b.err.find("key 'scenarios[3].count'") != std::string::npos);
  const json s = json::parse(b.out)["scenarios"];
  auto cli_rec = json::parse(run_hwplan("recommend --model llama-3-8b --device h100-sxm --count 8 --framework megatron "
                                        "--global-batch 128 --tokens 1e10 --rent --format json")
                                 .out);
  const json& top = s[0]["result"]["candidates"][0];
  CHECK(top["device"] == "h100-sxm");
  CHECK(top["count"] == 8);
  CHECK(top["cost_usd"].get<double>() == ::hwplan::test::approx(cli_rec["candidates"][0]["cost_usd"].get<double>()));
  for (const auto& c : s[1]["result"]["candidates"]) {
    CHECK(c["count"] == 8);
    CHECK((c["device"] == "h100-sxm" || c["device"] == "a100-80gb-sxm"));
  }
  auto cli_est = json::parse(run_hwplan("estimate --model llama-3-8b --device h100-sxm --tokens 1e11 --deadline 7d --format json").out);
  CHECK(s[2]["result"]["plan"] == cli_est["plan"]);
  CHECK(s[2]["result"]["time"]["total_seconds"].get<double>() ==
        ::hwplan::test::approx(cli_est["time"]["total_seconds"].get<double>()));
  CHECK(s[2]["result"]["time"]["total_seconds"].get<double>() <= 7 * 86400.0);
  fs::remove(file);
}

TEST_CASE("defaults keep their meaning: a device or deadline under defaults does not restrict recommend or estimate") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_batch_defaults_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "defaults: {deadline: 30d, tokens: 2.0e10, model: 1b, device: h100-sxm}\n"
                         "scenarios: [{name: rec, command: recommend}, {name: est8, count: 8}]\n";
  auto b = run_hwplan("batch " + file.string() + " --format json");
  REQUIRE(b.exit_code == 0);
  const json s = json::parse(b.out)["scenarios"];
  std::set<std::string> devices;
  for (const auto& c : s[0]["result"]["candidates"]) devices.insert(c["device"].get<std::string>());
  CHECK(devices.size() > 1);  // the whole catalog, as recommend without --device
  CHECK(s[1]["result"]["plan"]["dp"].get<int>() * s[1]["result"]["plan"]["tp"].get<int>() * s[1]["result"]["plan"]["pp"].get<int>() *
            s[1]["result"]["plan"]["cp"].get<int>() ==
        8);  // the count given, not a deadline's search
  fs::remove(file);
}

TEST_CASE("batch booleans take on / off as the command line does, and a sample-length file that cannot be read names the flag") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_batch_onoff_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "scenarios:\n"
                         "  - {name: on, model: llama-2-7b, device: h100-sxm, task: lora, fused_kernels: on}\n"
                         "  - {name: true, model: llama-2-7b, device: h100-sxm, task: lora, fused_kernels: true}\n";
  auto b = run_hwplan("batch " + file.string() + " --format json");
  REQUIRE(b.exit_code == 0);
  const json s = json::parse(b.out)["scenarios"];
  CHECK(s[0]["result"]["time"]["step_seconds"] == s[1]["result"]["time"]["step_seconds"]);
  fs::remove(file);
  auto missing = run_hwplan("estimate --model llama-2-7b --device h100-sxm --task lora --sample-tokens file:/nonexistent/lengths.txt");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("key '--sample-tokens'") != std::string::npos);
}

TEST_CASE("batch refuses what estimate refuses, keys its command does not read, and keeps a default max_count") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_batch_refuse_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "defaults: {max_count: 8}\n"
                         "scenarios:\n"
                         "  - {name: nolayout, model: llama-2-7b, device: h100-sxm, count: 7, tp: 2}\n"
                         "  - {name: budget, model: llama-2-7b, device: rtx-4090, task: lora, budget_usd: 100}\n"
                         "  - {name: fitdeadline, command: fit, model: llama-2-7b, device: rtx-4090, task: lora, tokens: 1e9, deadline: 1h}\n"
                         "  - {name: short, model: llama-2-7b, device: h100-sxm, tokens: 1e11, deadline: 2d}\n"
                         "  - {name: zero, model: llama-2-7b, device: h100-sxm, task: lora, headroom: 0, zero3_live_params: 0}\n"
                         "  - {name: fitwarn, command: fit, model: llama-3.2-1b, device: t4, task: lora, precision: bf16, batch: 1, seq: 512}\n";
  auto b = run_hwplan("batch " + file.string() + " --format json --threads 64");
  CHECK(b.exit_code == 2);
  const json j = json::parse(b.out);
  const json& s = j["scenarios"];
  // The count estimate refuses (no layout of 7 with tp 2) is a failed scenario, never a row of zeros.
  CHECK(s[0]["ok"] == false);
  CHECK(s[0]["error"].get<std::string>().find("no parallel layout") != std::string::npos);
  CHECK(run_hwplan("estimate --model llama-2-7b --device h100-sxm --count 7 --tp 2").exit_code == 2);
  CHECK(s[1]["ok"] == false);
  CHECK(s[1]["error"].get<std::string>().find("budget_usd") != std::string::npos);
  CHECK(s[2]["ok"] == false);
  CHECK(s[2]["error"].get<std::string>().find("deadline") != std::string::npos);
  // The default max_count bounds the deadline search: nothing up to 8 finishes 1e11 tokens in 2 days, as estimate says.
  CHECK(s[3]["ok"] == true);
  CHECK(s[3]["feasible"] == false);
  CHECK(s[3]["result"]["reason"].get<std::string>().find("up to 8") != std::string::npos);
  CHECK(run_hwplan("estimate --model llama-2-7b --device h100-sxm --tokens 1e11 --deadline 2d --max-count 8").exit_code == 3);
  CHECK(s[4]["ok"] == true);  // zeros the command line accepts
  CHECK(j["summary"]["infeasible"] == 1);
  auto table = run_hwplan("batch " + file.string());
  CHECK(table.out.find("warning: bf16 is not supported") != std::string::npos);  // the fit row carries its warning
  fs::remove(file);
}

TEST_CASE("batch values read as the flags read them: 20B tokens, a 3k budget, a comma-separated exclude") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_batch_suffix_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "scenarios:\n"
                         "  - {name: est, model: llama-2-7b, device: h100-sxm, count: 8, tokens: 20B}\n"
                         "  - {name: rec, command: recommend, model: llama-2-7b, task: lora, budget_usd: 3k, buy: true, "
                         "exclude: \"rtx-4090,rtx-3090\"}\n"
                         "  - {name: bad, model: llama-2-7b, device: h100-sxm, tokens: 20Q}\n";
  auto b = run_hwplan("batch " + file.string() + " --format json");
  CHECK(b.exit_code == 2);
  CHECK(b.err.find(":4:") != std::string::npos);  // the bad suffix, with its line
  CHECK(b.err.find("tokens': expected a finite decimal number, found '20Q'") != std::string::npos);
  const json s = json::parse(b.out)["scenarios"];
  auto cli_est = json::parse(run_hwplan("estimate --model llama-2-7b --device h100-sxm --count 8 --tokens 20B --format json").out);
  REQUIRE(s[0]["ok"] == true);
  CHECK(s[0]["result"]["time"]["total_seconds"].get<double>() ==
        ::hwplan::test::approx(cli_est["time"]["total_seconds"].get<double>()));
  auto cli_rec = json::parse(run_hwplan("recommend --model llama-2-7b --task lora --budget-usd 3k --buy --exclude "
                                        "rtx-4090,rtx-3090 --format json").out);
  REQUIRE(s[1]["ok"] == true);
  REQUIRE(!cli_rec["candidates"].empty());
  CHECK(s[1]["result"]["candidates"][0]["device"] == cli_rec["candidates"][0]["device"]);
  for (const auto& c : s[1]["result"]["candidates"]) CHECK((c["device"] != "rtx-4090" && c["device"] != "rtx-3090"));
  fs::remove(file);
}

TEST_CASE("a scenario's bad value names its key at the key's line, under defaults or in the scenario") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_batch_keyline_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "defaults:\n"
                         "  model: llama-2-7b\n"
                         "  tp: 3\n"
                         "scenarios:\n"
                         "  - name: inherits\n"
                         "    device: h100-sxm\n"
                         "    count: 8\n"
                         "  - name: own\n"
                         "    device: h100-sxm\n"
                         "    count: 8\n"
                         "    pp: 64\n"
                         "    tp: 1\n";
  auto b = run_hwplan("batch " + file.string() + " --format json");
  CHECK(b.exit_code == 2);
  const json s = json::parse(b.out)["scenarios"];
  CHECK(s[0]["error"].get<std::string>().find(":3:3: key 'defaults.tp': scenario 'inherits'") != std::string::npos);
  CHECK(s[1]["error"].get<std::string>().find(":11:5: key 'scenarios[1].pp': scenario 'own'") != std::string::npos);
  fs::remove(file);
}

TEST_CASE("batch: an unknown device names its key line, an inference job row shows the job, a negative count says so") {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("hwplan_batch_review_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "scenarios:\n"
                         "  - name: typo\n"
                         "    model: llama-2-7b\n"
                         "    device: h100-sxx\n"
                         "  - {name: job, model: llama-3-8b, device: h100-sxm, task: infer, batch: 8, tokens: 1e9}\n"
                         "  - {name: neg, model: llama-2-7b, device: h100-sxm, tokens: -5k}\n";
  auto b = run_hwplan("batch " + file.string() + " --format json");
  CHECK(b.exit_code == 2);
  const json s = json::parse(b.out)["scenarios"];
  CHECK(s[0]["error"].get<std::string>().find(":4:5: key 'scenarios[0].device'") != std::string::npos);
  CHECK(s[2]["error"].get<std::string>().find("must be greater than 0, found -5k") != std::string::npos);
  auto est = json::parse(run_hwplan("estimate --model llama-3-8b --device h100-sxm --task infer --batch 8 --tokens 1e9 --format json").out);
  REQUIRE(s[1]["ok"] == true);
  CHECK(s[1]["result"]["inference"]["job"]["total_seconds"].get<double>() ==
        ::hwplan::test::approx(est["inference"]["job"]["total_seconds"].get<double>()));
  auto table = run_hwplan("batch " + file.string() + " --format csv");
  CHECK(table.out.find("11.2 days total") != std::string::npos);  // the job's time, as estimate gives it
  fs::remove(file);
}
