// The facade (src/api): a command and its options as the CLI spells them give the document `--format json`
// prints, errors carry the CLI's message, and a reused parser forgets the previous call's options.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/api.hpp"
#include "core/error.hpp"
#include "test_util.hpp"

using hwplan::api::Options;
using hwplan::api::Session;
using nlohmann::json;

namespace {
const Session& session() {
  static const Session s;
  return s;
}
json cli_json(const std::string& args) { return json::parse(hwplan::test::run_hwplan(args + " --format json").out); }
}  // namespace

TEST_CASE("api estimate equals the CLI's JSON, flag names in either spelling") {
  Options o = {{"model", "llama-2-7b"}, {"device", "rtx-4090"}, {"task", "lora"}, {"batch", "4"}, {"seq", "1024"},
               {"--recompute", "full"}, {"fused_kernels", "on"}, {"no-sequence-parallel", "true"}};
  auto r = session().run("estimate", o);
  CHECK(r.exit_code == 0);
  CHECK(r.json == cli_json("estimate --model llama-2-7b --device rtx-4090 --task lora --batch 4 --seq 1024 --recompute full "
                           "--fused-kernels on --no-sequence-parallel"));
  // The same parser, reused: the options of the previous call are gone.
  auto again = session().run("estimate", {{"model", "llama-2-7b"}, {"device", "rtx-4090"}, {"task", "lora"}});
  CHECK(again.json == cli_json("estimate --model llama-2-7b --device rtx-4090 --task lora"));
}

TEST_CASE("api listings, fit and the exit code of nothing feasible") {
  CHECK(session().run("models show 7b").json == cli_json("models show 7b"));
  CHECK(session().run("catalog list", {{"class", "consumer"}}).json == cli_json("catalog list --class consumer"));
  auto fit = session().run("fit", {{"model", "llama-2-13b"}, {"device", "rtx-4090"}, {"task", "finetune"}});
  CHECK(fit.json == cli_json("fit --model llama-2-13b --device rtx-4090 --task finetune"));
  auto none = session().run("recommend", {{"model", "llama-2-70b"}, {"class", "edge"}, {"max-count", "1"}});
  CHECK(none.exit_code == hwplan::kExitNothingFeasible);
  CHECK(none.json["candidates"].empty());
}

TEST_CASE("api errors are InputError with the CLI's message") {
  auto message = [](const std::string& command, const Options& o) -> std::string {
    try {
      session().run(command, o);
    } catch (const hwplan::InputError& e) {
      return e.what();
    }
    return "";
  };
  std::string cli_err = hwplan::test::run_hwplan("estimate --model llama-2-7b --device rtx-4090x").err;
  CHECK(cli_err == "hwplan: error: " + message("estimate", {{"model", "llama-2-7b"}, {"device", "rtx-4090x"}}) + "\n");
  CHECK(message("plot", {}).find("is not one of: ") != std::string::npos);  // pictures are files, not documents
  CHECK(message("serve", {{"model", "llama-3-8b"}, {"device", "h100-sxm"}}).find("--rate") != std::string::npos);
  CHECK(message("estimate", {{"model", "7b"}}).find("--device") != std::string::npos);
  CHECK(message("", {}) != "");
}

TEST_CASE("api serve and tco equal the CLI's JSON, and the facade offers them") {
  auto offered = hwplan::api::commands();
  CHECK(std::find(offered.begin(), offered.end(), "serve") != offered.end());
  CHECK(std::find(offered.begin(), offered.end(), "tco") != offered.end());
  auto serve = session().run("serve", {{"model", "llama-3-8b"}, {"device", "rtx-4090"}, {"concurrency", "8"}, {"prompt", "512"},
                                       {"generate", "128"}, {"requests", "200"}, {"threads", "1"}});
  CHECK(serve.exit_code == 0);
  CHECK(serve.json == cli_json("serve --model llama-3-8b --device rtx-4090 --concurrency 8 --prompt 512 --generate 128 --requests 200"));
  auto tco = session().run("tco", {{"model", "7B"}, {"device", "rtx-4090"}, {"task", "infer"}, {"batch", "4"}, {"years", "2"}});
  CHECK(tco.exit_code == 0);
  CHECK(tco.json == cli_json("tco --model 7B --device rtx-4090 --task infer --batch 4 --years 2"));
  CHECK_THROWS_AS(session().run("tco", {{"model", "llama-3-70b"}, {"device", "rtx-4090"}, {"task", "infer"}}), hwplan::Infeasible);
}

TEST_CASE("api answers from several threads at once, as from one") {
  Options o = {{"model", "llama-3-8b"}, {"device", "h100-sxm"}, {"task", "infer"}, {"batch", "8"}};
  json one = session().run("estimate", o).json;
  std::vector<json> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) got[t] = session().run("estimate", o).json;
    });
  for (auto& t : threads) t.join();
  for (const auto& g : got) CHECK(g == one);
}
