// The real binary on real files: output, formats and exit codes.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <set>

#include "cli/common.hpp"
#include "core/device.hpp"
#include "core/workload_options.hpp"
#include "io/batch_io.hpp"
#include "test_util.hpp"

using hwplan::test::run_hwplan;
using nlohmann::json;

TEST_CASE("catalog list in every format") {
  auto table = run_hwplan("catalog list");
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("h100-sxm") != std::string::npos);
  CHECK(table.out.find("ascend-910b2") != std::string::npos);

  auto j = run_hwplan("catalog list --format json");
  REQUIRE(j.exit_code == 0);
  json doc = json::parse(j.out);
  CHECK(doc["schema_version"] == 1);
  CHECK(doc["devices"].size() >= 40);

  auto csv = run_hwplan("catalog list --class consumer --format csv");
  CHECK(csv.exit_code == 0);
  CHECK(csv.out.rfind("id,name,class", 0) == 0);
  CHECK(csv.out.find("rtx-4090") != std::string::npos);
  CHECK(csv.out.find("h100-sxm") == std::string::npos);

  auto md = run_hwplan("catalog list --vendor amd --format markdown");
  CHECK(md.exit_code == 0);
  CHECK(md.out.find("| mi300x |") != std::string::npos);
}

TEST_CASE("catalog show accepts driver names, case-insensitively, and cites sources") {
  auto r = run_hwplan("catalog show 'nvidia h100 80gb hbm3'");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("h100-sxm") != std::string::npos);
  CHECK(r.out.find("Sources:") != std::string::npos);
  auto j = run_hwplan("catalog show Tesla_T4 --format json");
  REQUIRE(j.exit_code == 0);
  CHECK(json::parse(j.out)["device"]["id"] == "t4");
}

TEST_CASE("a misspelt id suggests the nearest one and exits 2") {
  auto r = run_hwplan("catalog show h100-sxn");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean 'h100-sxm'") != std::string::npos);
  auto m = run_hwplan("models show lama-2-7b");
  CHECK(m.exit_code == 2);
  CHECK(m.err.find("did you mean 'llama-2-7b'") != std::string::npos);
}

TEST_CASE("models list and show") {
  auto r = run_hwplan("models list --format json");
  REQUIRE(r.exit_code == 0);
  json doc = json::parse(r.out);
  CHECK(doc["models"].size() >= 22);
  auto s = run_hwplan("models show 7B");
  CHECK(s.exit_code == 0);
  CHECK(s.out.find("hidden_size") != std::string::npos);
}

TEST_CASE("estimate --format json has the documented contract") {
  auto r = run_hwplan("estimate --model llama-2-7b --device a100-80gb-sxm --batch 2 --seq 2048 --tokens 1e9 --format json");
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["schema_version"] == 1);
  CHECK(j["model"]["parameters"].get<double>() > 6.7e9);
  CHECK(j["device"]["id"] == "a100-80gb-sxm");
  CHECK(j["device"]["count"] == 1);
  for (const char* k : {"tp", "pp", "dp", "zero", "recompute", "micro_batch", "grad_accum", "global_batch"})
    CHECK(j["plan"].contains(k));
  for (const char* k : {"weights", "gradients", "optimizer", "activations", "kv_cache", "runtime"})
    CHECK(j["memory"]["breakdown"].contains(k));
  CHECK(j["memory"].contains("per_device_bytes"));
  CHECK(j["memory"].contains("capacity_bytes"));
  CHECK(j["memory"]["fits"].is_boolean());
  for (const char* k : {"forward_seconds", "backward_seconds", "optimizer_seconds", "communication_seconds",
                        "step_seconds", "tokens_per_second", "mfu", "total_seconds"})
    CHECK(j["time"].contains(k));
  CHECK(j["time"]["total_seconds"].get<double>() > 0);
  CHECK(j["time"]["slowest_device_seconds"].get<double>() == 0);  // one device waits for nobody
  CHECK(j["stack"]["fp8_head"].is_boolean());
  CHECK(j["warnings"].is_array());

  auto no_tokens = run_hwplan("estimate --model gpt2 --device t4 --format json");
  REQUIRE(no_tokens.exit_code == 0);
  CHECK(json::parse(no_tokens.out)["time"]["total_seconds"].is_null());
}

TEST_CASE("estimate --task infer reports prefill and decode") {
  auto r = run_hwplan("estimate --model llama-2-7b --device rtx-4090 --task infer --weights int4 --batch 4 --format json");
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["inference"]["prefill_seconds"].get<double>() > 0);
  CHECK(j["inference"]["decode_tokens_per_second"].get<double>() > 0);
  CHECK(j["inference"]["time_per_output_token_seconds"].get<double>() > 0);
  auto f = run_hwplan("estimate --model gpt2 --device t4 --task infer --generate 0 --prompt 128 --format json");
  REQUIRE(f.exit_code == 0);
  CHECK(json::parse(f.out)["inference"]["prefill_seconds"].get<double>() > 0);
}

TEST_CASE("estimate searches the layout on several devices and reports the search") {
  auto r = run_hwplan("estimate --model llama-2-13b --device a100-80gb-sxm --count 16 --global-batch 128 --format json");
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["search"]["layouts_evaluated"].get<long long>() > 10);
  // Wall-clock time is not part of the output (output is identical whatever the machine or thread count).
  CHECK_FALSE(j["search"].contains("seconds"));
  CHECK(j["plan"]["tp"].get<int>() * j["plan"]["pp"].get<int>() * j["plan"]["dp"].get<int>() == 16);
  CHECK(j["memory"]["fits"] == true);
}

TEST_CASE("bad flags exit 2 with a clear message") {
  struct Case {
    const char* args;
    const char* expect;
  };
  for (const Case& c : {Case{"estimate --model gpt2 --device t4 --batch 0", "--batch"},
                        Case{"estimate --model gpt2 --device t4 --seq -1", "--seq"},
                        Case{"estimate --model gpt2 --device t4 --count 0", "--count"},
                        Case{"estimate --model llama-2-7b --device a100-80gb-sxm --count 3 --tp 3", "--tp"},
                        Case{"estimate --model gpt2 --device t44", "did you mean"},
                        Case{"estimate --model gpt2 --device t4 --precision fp12", "--precision"},
                        Case{"estimate --model gpt2 --device t4 --task infer --zero 2", "--zero"},
                        Case{"estimate --model gpt2 --device t4 --weights int4", "--weights"},
                        Case{"estimate --model gpt2 --device t4 --bogus", "bogus"},
                        Case{"estimate --device t4", "--model"}}) {
    CAPTURE(c.args);
    auto r = run_hwplan(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.expect) != std::string::npos);
    CHECK(r.err.find("hwplan: error:") == 0);
    CHECK(r.out.empty());
  }
}

TEST_CASE("--version and help") {
  auto v = run_hwplan("--version");
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("hwplan") != std::string::npos);
  auto h = run_hwplan("--help");
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("Examples:") != std::string::npos);
  CHECK(h.out.find("Exit codes") != std::string::npos);
}

TEST_CASE("user catalog directories add and override devices (flag and environment)") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hwplan_cat_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ifstream in(hwplan::test::source_path("catalog/rtx-4090.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto replace = [&](const std::string& from, const std::string& to) { text.replace(text.find(from), from.size(), to); };
  replace("id: rtx-4090", "id: my-4090-48g");
  replace("memory_gib: 24", "memory_gib: 48");
  std::string aliases_line = text.substr(text.find("aliases:"), text.find('\n', text.find("aliases:")) - text.find("aliases:"));
  replace(aliases_line, "aliases: [\"Modded RTX 4090 48GB\"]");
  std::ofstream(dir / "my-4090-48g.yaml") << text;
  auto r = run_hwplan("catalog show my-4090-48g --catalog " + dir.string());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("48 GiB") != std::string::npos);
  std::string cmd = "catalog show 'modded rtx 4090 48gb'";
  ::setenv("HWPLAN_CATALOG", dir.string().c_str(), 1);
  auto e = run_hwplan(cmd);
  ::unsetenv("HWPLAN_CATALOG");
  CHECK(e.exit_code == 0);
  fs::remove_all(dir);
}

TEST_CASE("-o writes atomically and a bad directory is a clear error") {
  namespace fs = std::filesystem;
  fs::path out = fs::temp_directory_path() / ("hwplan_out_" + std::to_string(::getpid()) + ".json");
  std::ofstream(out) << "previous content";
  auto r = run_hwplan("catalog list --format json -o " + out.string());
  CHECK(r.exit_code == 0);
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(json::parse(text)["schema_version"] == 1);
  fs::remove(out);
  auto bad = run_hwplan("catalog list -o /nonexistent-dir/x.json");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("/nonexistent-dir") != std::string::npos);
}

TEST_CASE("plot roofline and memory write SVG files with the expected series") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hwplan_plot_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto r = run_hwplan("plot roofline --device h100-sxm --model llama-2-7b --seq 4096 -o " + (dir / "roof.svg").string());
  REQUIRE(r.exit_code == 0);
  std::ifstream in(dir / "roof.svg");
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("class=\"roof-memory\"") != std::string::npos);
  CHECK(svg.find("data-label=\"qkv-proj\"") != std::string::npos);
  CHECK(svg.find("bf16 peak") != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
  auto m = run_hwplan("plot memory --model llama-2-13b --task lora --devices rtx-4090,h100-sxm -o " + (dir / "mem.svg").string());
  REQUIRE(m.exit_code == 0);
  std::ifstream in2(dir / "mem.svg");
  std::string svg2((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  CHECK(svg2.find("data-label=\"rtx-4090 x1\"") != std::string::npos);
  CHECK(svg2.find("data-label=\"h100-sxm x1\"") != std::string::npos);
  CHECK(svg2.find("does not fit") != std::string::npos);  // 13B LoRA without recomputation on 24 GiB
  // --device with --devices draws both.
  REQUIRE(run_hwplan("plot memory --model llama-2-13b --task lora --device a100-80gb-sxm --devices rtx-4090 -o " +
                     (dir / "mem2.svg").string()).exit_code == 0);
  std::ifstream in3(dir / "mem2.svg");
  std::string svg3((std::istreambuf_iterator<char>(in3)), std::istreambuf_iterator<char>());
  CHECK(svg3.find("data-label=\"a100-80gb-sxm x1\"") != std::string::npos);
  CHECK(svg3.find("data-label=\"rtx-4090 x1\"") != std::string::npos);
  // The same device by an alias and by its id is drawn once.
  REQUIRE(run_hwplan("plot memory --model llama-2-13b --task lora --device h100 --devices h100-sxm -o " +
                     (dir / "mem3.svg").string()).exit_code == 0);
  std::ifstream in4(dir / "mem3.svg");
  std::string svg4((std::istreambuf_iterator<char>(in4)), std::istreambuf_iterator<char>());
  std::size_t bars = 0;
  const std::string bar = "class=\"bar\" data-label=\"h100-sxm x1\"";
  for (std::size_t at = svg4.find(bar); at != std::string::npos; at = svg4.find(bar, at + 1)) ++bars;
  CHECK(bars == 1);
  fs::remove_all(dir);
}

TEST_CASE("the CLI's workload flags and the batch keys are the one table of core/workload_options.hpp") {
  CLI::App app;
  hwplan::cli::WorkloadOptions w;
  hwplan::cli::add_workload_options(app, w, false);
  std::set<std::string> table_flags;
  for (const auto& o : hwplan::workload_option_names()) {
    CAPTURE(o.flag);
    table_flags.insert(o.flag);
    CHECK_NOTHROW(app.get_option(o.flag));  // the CLI takes every flag the table names
  }
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& name : opt->get_lnames()) {
      if (name == "help") continue;
      CAPTURE(name);
      CHECK(table_flags.count("--" + name) == 1);  // and the table names every flag the CLI takes
    }
  }
  // Every key of the table is a batch key: a scenario using it is not an "unknown option" (a bad value is another
  // error, which names the key).
  for (const auto& o : hwplan::workload_option_names()) {
    CAPTURE(o.key);
    auto scenarios = hwplan::io::parse_batch(std::string("scenarios:\n  - {model: llama-2-7b, device: h100-sxm, ") + o.key +
                                                 ": [not, a, scalar]}\n",
                                             "t.yaml");
    REQUIRE(scenarios.size() == 1);
    REQUIRE(scenarios[0].error);
    CHECK(scenarios[0].error->find("unknown option") == std::string::npos);
    CHECK(scenarios[0].error->find(o.key) != std::string::npos);
  }
}

TEST_CASE("--fp8-head sets the stack part, shows as set, and slows fp8 megatron training when off") {
  const std::string base = "estimate --model llama-3-8b --device h100-sxm --count 8 --precision fp8 --seq 8192 "
                           "--global-batch 32 --framework megatron --format json";
  auto preset = run_hwplan(base), on = run_hwplan(base + " --fp8-head on");
  REQUIRE(preset.exit_code == 0);
  REQUIRE(on.exit_code == 0);
  json p = json::parse(preset.out), o = json::parse(on.out);
  CHECK_FALSE(p["stack"]["fp8_head"].get<bool>());
  CHECK(o["stack"]["fp8_head"].get<bool>());
  CHECK(o["stack"]["overridden"].dump().find("fp8-head") != std::string::npos);
  CHECK(p["time"]["tokens_per_second"].get<double>() < o["time"]["tokens_per_second"].get<double>());
  CHECK(p["time"]["slowest_device_seconds"].get<double>() > 0);
  CHECK(run_hwplan(base + " --fp8-head maybe").exit_code == 2);
}

TEST_CASE("CSV and markdown keep the warnings the table prints") {
  const std::string est = "estimate --model llama-2-7b --task lora --device ascend-910b";
  const std::string gemm = "large GEMMs assumed to reach";
  auto table = hwplan::test::run_hwplan(est);
  REQUIRE(table.out.find(gemm) != std::string::npos);
  CHECK(hwplan::test::run_hwplan(est + " --format csv").out.find("warning,") != std::string::npos);
  CHECK(hwplan::test::run_hwplan(est + " --format csv").out.find(gemm) != std::string::npos);
  CHECK(hwplan::test::run_hwplan(est + " --format markdown").out.find("**warning:** no published GEMM") != std::string::npos);
  const std::string rec = "recommend --model llama-2-7b --task lora --devices ascend-910b,h100-sxm --count 1";
  auto csv = hwplan::test::run_hwplan(rec + " --format csv").out;
  CHECK(csv.find(",warnings") != std::string::npos);
  CHECK(csv.find(gemm) != std::string::npos);
  CHECK(csv.find("job_tokens_assumed") != std::string::npos);
  CHECK(hwplan::test::run_hwplan(rec + " --format markdown").out.find("(assumed: set --tokens)") != std::string::npos);
  auto serve = hwplan::test::run_hwplan("serve --model llama-3-8b --device h100-sxm --concurrency 4 --requests 50 --format csv").out;
  CHECK(serve.find(",warnings") != std::string::npos);
  CHECK(serve.find("no --engine given") != std::string::npos);
}

TEST_CASE("contradictory or ignored inputs are errors, not silent choices") {
  using hwplan::test::run_hwplan;
  auto jobs = run_hwplan("tco --model llama-3-8b --device h100-sxm --task infer --jobs 5 --utilization 0.5");
  CHECK(jobs.exit_code == 2);
  CHECK(jobs.err.find("--jobs or --utilization") != std::string::npos);
  CHECK(run_hwplan("tco --model llama-3-8b --device h100-sxm --task infer --years 1e9").exit_code == 2);
  auto trace = run_hwplan("serve --model llama-3-8b --device h100-sxm --trace " +
                          hwplan::test::source_path("data/examples/trace.csv") + " --prompt 100");
  CHECK(trace.exit_code == 2);
  CHECK(trace.err.find("'--prompt': the --trace gives the lengths") != std::string::npos);
  // Given at all, even at its default value, a length the trace overrides is refused.
  auto same = run_hwplan("serve --model llama-3-8b --device h100-sxm --trace " +
                         hwplan::test::source_path("data/examples/trace.csv") + " --generate 256");
  CHECK(same.exit_code == 2);
  CHECK(same.err.find("'--generate': the --trace gives the lengths") != std::string::npos);
  // A measurement above the peak is shown as measured and said to be capped, as the estimate caps it.
  CHECK(run_hwplan("catalog show rtx-4090").out.find("estimates take the peak") != std::string::npos);
  auto derived = nlohmann::json::parse(run_hwplan("catalog show rtx-4060 --format json").out)["device"]["sibling_matmul"];
  CHECK(derived["used_fraction"].get<double>() == 1.0);  // the 4090's measured 101% of peak, taken as the peak
  CHECK(derived["fraction"].get<double>() > 1.0);
  // No prompt: a decode from an empty context (llama-bench's tg), said as such rather than a 0 us TTFT.
  CHECK(run_hwplan("estimate --model llama-3-8b --device h100-sxm --task infer --prompt 0").out.find("none: no prompt") !=
        std::string::npos);
  CHECK(nlohmann::json::parse(run_hwplan("estimate --model llama-3-8b --device h100-sxm --task infer --prompt 0 --format json").out)
            ["inference"]["time_to_first_token_seconds"]
                .is_null());
}

TEST_CASE("recommend ranks for training what the catalog says trains, as estimate prices it") {
  using hwplan::test::run_hwplan;
  using nlohmann::json;
  // Apple's GPUs train (the catalog's training: true; MLX and PyTorch's MPS backend): ranked, at estimate's figures.
  auto rec = json::parse(run_hwplan("recommend --model llama-2-7b --task lora --devices apple-m4-max-gpu,apple-m4-ane --format json").out);
  REQUIRE(rec["candidates"].size() == 1);
  CHECK(rec["candidates"][0]["device"] == "apple-m4-max-gpu");
  auto est = json::parse(run_hwplan("estimate --model llama-2-7b --task lora --device apple-m4-max-gpu --format json").out);
  CHECK(est["memory"]["fits"] == true);
  // Its Neural Engine does not (training: false): rejected with the catalog's reason.
  bool ane = false;
  for (const auto& r : rec["rejected"]) ane = ane || r["device"] == "apple-m4-ane";
  CHECK(ane);
}

TEST_CASE("offloaded state is checked against the memory a host of the class typically has") {
  using hwplan::test::run_hwplan;
  const std::string work = "estimate --framework deepspeed --task finetune --recompute full --format json ";
  auto warned = [&](const std::string& args) {
    auto r = run_hwplan(work + args);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    for (const auto& w : j["warnings"])
      if (w.get<std::string>().find("the host needs") != std::string::npos) return true;
    return false;
  };
  CHECK(warned("--model llama-2-13b --device rtx-4090 --offload params"));     // about 218 GiB on a desktop
  CHECK_FALSE(warned("--model llama-2-7b --device rtx-4090 --offload optimizer"));  // about 100 GiB
  CHECK_FALSE(warned("--model llama-2-13b --device h100-sxm --offload params"));    // a server holds it
  // One memory for CPU and GPU: the offloaded state counts against it.
  auto apple = nlohmann::json::parse(
      run_hwplan("estimate --model llama-2-13b --device apple-m2-max-gpu --task finetune --offload optimizer --format json").out);
  CHECK(apple["memory"]["fits"] == false);
  // Nothing crosses a link there: the offloaded state's copies run at the memory's own rate, not at a 1 GB/s floor.
  const std::string small = "estimate --model llama-3.2-1b --device apple-m2-ultra-gpu --task finetune --batch 1 --seq 1024 --format json";
  const auto kept = nlohmann::json::parse(run_hwplan(small).out);
  const auto moved = nlohmann::json::parse(run_hwplan(small + " --offload optimizer").out);
  CHECK(moved["time"]["step_seconds"].get<double>() < 3 * kept["time"]["step_seconds"].get<double>());
  // The note of a miss counts what is offloaded into the same memory, as the verdict does.
  auto jetson = run_hwplan("estimate --model llama-2-7b --device jetson-agx-orin-64gb --task finetune --offload optimizer");
  CHECK(jetson.out.find("offloaded into the same memory") != std::string::npos);
  CHECK(jetson.out.find("allocator variance") == std::string::npos);
}

TEST_CASE("inference-only inputs given to training are said to be ignored, and change nothing") {
  using hwplan::test::run_hwplan;
  using nlohmann::json;
  const std::string work = "estimate --model llama-2-7b --device h100-sxm --task lora --format json";
  const json plain = json::parse(run_hwplan(work).out);
  for (const std::string flag : {"--kv-cache fp8", "--prompt 4000", "--generate 5", "--custom-allreduce on", "--cuda-graphs on",
                                 "--overlap-scheduling on", "--quantized-head on", "--embedding-on-host on"}) {
    auto r = run_hwplan(work + " " + flag);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["time"]["step_seconds"] == plain["time"]["step_seconds"]);
    CHECK(j["memory"]["per_device_bytes"] == plain["memory"]["per_device_bytes"]);
    bool said = false;
    for (const auto& w : j["warnings"])
      said = said || w.get<std::string>().find("ignored for --task lora: " + flag.substr(0, flag.find(' '))) != std::string::npos;
    CHECK(said);
  }
  // A small model whose step is bound by the host's kernel launches: CUDA graphs (an engine's) must not drop them.
  const std::string small = "estimate --model gpt2 --device h100-sxm --task train --batch 1 --seq 32 --format json";
  const json eager = json::parse(run_hwplan(small).out);
  const json graphs = json::parse(run_hwplan(small + " --cuda-graphs on").out);
  CHECK(graphs["time"]["step_seconds"] == eager["time"]["step_seconds"]);
  CHECK(eager["time"]["step_seconds"].get<double>() > 0.01);
  // And the other way: training inputs given to inference, LoRA inputs given to full training.
  const std::string infer = "estimate --model bert-large --device t4 --task infer --batch 8 --format json";
  const json served = json::parse(run_hwplan(infer).out);
  const json with = json::parse(run_hwplan(infer + " --seq 128 --optimizer sgd --tokens 1e9 --lora-rank 64").out);
  CHECK(with["memory"]["per_device_bytes"] == served["memory"]["per_device_bytes"]);
  bool said_infer = false;
  for (const auto& w : with["warnings"])
    said_infer = said_infer || w.get<std::string>().find("ignored for --task infer: --seq, --optimizer, --lora-rank") != std::string::npos;
  CHECK(said_infer);
  CHECK(run_hwplan("estimate --model llama-2-7b --device h100-sxm --task train --lora-rank 64").out.find(
            "ignored for --task train: --lora-rank") != std::string::npos);
  auto tps = run_hwplan("recommend --model llama-2-7b --task lora --min-decode-tps 5");
  CHECK(tps.exit_code == 2);
  CHECK(tps.err.find("'--min-decode-tps'") != std::string::npos);
  auto target = run_hwplan("recommend --model llama-2-7b --task lora --ttft-p95 1");
  CHECK(target.exit_code == 2);
  CHECK(target.err.find("apply to --task serve, not --task lora") != std::string::npos);
}

TEST_CASE("errors name the flag that gave the bad value, and a size says the shape it assumes") {
  using hwplan::test::run_hwplan;
  auto huge = run_hwplan("estimate --model llama-2-7b --device h100-sxm --tokens 1e308");
  CHECK(huge.exit_code == 2);
  CHECK(huge.err.find("'--tokens'") != std::string::npos);
  auto ex = run_hwplan("recommend --model 7b --exclude nonexistent-device");
  CHECK(ex.exit_code == 2);
  CHECK(ex.err.find("'--exclude'") != std::string::npos);
  auto cmp = run_hwplan("compare --model 7b --devices h100-sxm,foo");
  CHECK(cmp.exit_code == 2);
  CHECK(cmp.err.find("'--devices'") != std::string::npos);
  auto sens = run_hwplan("validate --sensitivity");
  CHECK(sens.exit_code == 2);
  CHECK(sens.err.find("give them with --measurements") != std::string::npos);
  auto serve_ex = run_hwplan("recommend --task serve --model 8b --rate 1 --exclude bogus-device");
  CHECK(serve_ex.exit_code == 2);
  CHECK(serve_ex.err.find("'--exclude'") != std::string::npos);
  auto size = run_hwplan("estimate --model 7B --device h100-sxm");
  CHECK(size.out.find("a size, not a model: a LLaMA-3-style shape is assumed") != std::string::npos);
  CHECK(run_hwplan("estimate --model llama-3-8b --device h100-sxm").out.find("a size, not a model") == std::string::npos);
}

TEST_CASE("the layout search builds only what the training stack can: Hugging Face scales by data parallelism") {
  using hwplan::test::run_hwplan;
  auto plan = [](const std::string& args) {
    auto r = run_hwplan("estimate --model llama-2-13b --device rtx-4090 --count 4 --task lora --format json " + args);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["plan"];
  };
  for (const std::string stack : {"", "--framework hf-trainer", "--framework deepspeed", "--framework litgpt"}) {
    const auto p = plan(stack);
    CHECK(p["tp"].get<int>() == 1);
    CHECK(p["pp"].get<int>() == 1);
  }
  CHECK(plan("--framework torchtune")["pp"].get<int>() == 1);
  CHECK(plan("--framework fsdp")["pp"].get<int>() == 1);
  // A degree given is priced as given, and the stack line says what the search left out.
  CHECK(plan("--tp 2")["tp"].get<int>() == 2);
  CHECK(run_hwplan("estimate --model llama-2-13b --device rtx-4090 --count 4 --task lora --format markdown").out.find(
            "layouts without tensor or pipeline parallelism") != std::string::npos);
  // recommend prices every candidate with that stack and says which, as estimate does.
  CHECK(run_hwplan("recommend --model llama-2-13b --devices rtx-4090 --task lora").out.find(
            "hf-trainer stack, assumed: set --framework") != std::string::npos);
  CHECK(run_hwplan("recommend --model llama-2-13b --devices rtx-4090 --task lora --framework torchtune").out.find(
            "torchtune stack)") != std::string::npos);
}

TEST_CASE("estimate and recommend answer one training question alike, and a count with no layout says why") {
  using hwplan::test::run_hwplan;
  using nlohmann::json;
  // No batch flags: estimate takes the global batch recommend compares devices at, and says so.
  const std::string job = "--model llama-3-8b --seq 8192 --tokens 1e10";
  auto est = run_hwplan("estimate --device h100-sxm --count 8 --format json " + job);
  REQUIRE(est.exit_code == 0);
  auto rec = run_hwplan("recommend --device h100-sxm --count 8 --format json " + job);
  REQUIRE(rec.exit_code == 0);
  const json e = json::parse(est.out), r = json::parse(rec.out);
  for (const char* k : {"tp", "pp", "dp", "cp", "zero", "micro_batch", "grad_accum", "global_batch"})
    CHECK(e["plan"][k] == r["candidates"][0]["plan"][k]);
  CHECK(e["time"]["tokens_per_second"].get<double>() ==
        ::hwplan::test::approx(r["candidates"][0]["tokens_per_second"].get<double>()));
  bool said = false;
  for (const auto& w : e["warnings"]) said = said || w.get<std::string>().find("global batch 128 sequences assumed") != std::string::npos;
  CHECK(said);
  // Three devices: 128 does not split over them; one sequence per device as before, nothing assumed.
  const json three = json::parse(run_hwplan("estimate --device h100-sxm --count 3 --format json " + job).out);
  CHECK(three["plan"]["global_batch"] == 3);
  // A count the global batch cannot split over under a data-parallel-only stack: an error naming both, in estimate
  // and fit; recommend ranks the counts that have a layout and shows no empty "needs 0 MiB" miss.
  for (const std::string cmd : {"estimate", "fit"}) {
    auto r2 = run_hwplan(cmd + " --model llama-2-7b --device rtx-4090 --count 8 --task lora --global-batch 4");
    CHECK(r2.exit_code == 2);
    CHECK(r2.err.find("global batch of 4 sequences") != std::string::npos);
    CHECK(r2.err.find("hf-trainer builds no tensor- or pipeline-parallel layouts") != std::string::npos);
  }
  auto miss = run_hwplan("recommend --model llama-2-70b --task finetune --devices rtx-4060,rtx-3060");
  CHECK(miss.out.find("needs 0 MiB") == std::string::npos);
}

TEST_CASE("fit's largest micro-batch holds with a --global-batch, and its suggestion runs and fits with it") {
  using hwplan::test::run_hwplan;
  using nlohmann::json;
  const std::string work = "--model llama-2-7b --device rtx-4090 --task lora --seq 2048 --recompute full";
  auto fits = [&](const std::string& flags) {
    auto r = run_hwplan("estimate " + work + " --format json " + flags);
    return r.exit_code == 0 && json::parse(r.out)["memory"]["fits"] == true;
  };
  // The largest micro-batch is the largest divisor of the global batch that runs and fits: the next divisor up does not.
  auto global = json::parse(run_hwplan("fit " + work + " --global-batch 16 --format json").out);
  REQUIRE(global["fits"] == true);
  REQUIRE(global["max_micro_batch"].is_number());
  const long long b = global["max_micro_batch"].get<long long>();
  CHECK(16 % b == 0);
  CHECK(fits("--global-batch 16 --batch " + std::to_string(b)));
  if (b < 16) CHECK_FALSE(fits("--global-batch 16 --batch " + std::to_string(2 * b)));
  CHECK(json::parse(run_hwplan("fit --model gpt2 --device h100-sxm --task finetune --global-batch 4 --batch 4 --format json").out)
            ["max_micro_batch"] == 4);  // never above the global batch
  // Too large a micro-batch for the card: the suggested one keeps the global batch, runs and fits (on several
  // devices too, where the data-parallel ranks must divide it as well).
  for (const std::string rest : {"--global-batch 32", "--count 8 --global-batch 128"}) {
    auto report = json::parse(run_hwplan("fit " + work + " --format json --batch 16 " + rest).out);
    bool suggested = false;
    for (const auto& c : report["changes"]) {
      const std::string flags = c["flags"];
      if (flags.rfind("--batch ", 0) != 0) continue;
      suggested = true;
      CHECK(c["fits"] == true);
      CHECK(flags.find("--grad-accum") == std::string::npos);
      CHECK(fits(rest + " " + flags));
    }
    CHECK(suggested);
  }
}

TEST_CASE("recommend refuses a bad flag as bad input, not as hardware that cannot do the job") {
  using hwplan::test::run_hwplan;
  for (const std::string flag : {"--framework foo", "--optimizer foo", "--recompute-layers 3", "--engine vllm"}) {
    auto r = run_hwplan("recommend --model llama-2-7b --task lora --devices rtx-4090,h100-sxm " + flag);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("key '" + flag.substr(0, flag.find(' ')) + "'") != std::string::npos);
  }
  // A limit only some devices miss is still a ranking (the others are listed as rejected), not an input error.
  auto mixed = run_hwplan("recommend --model llama-2-7b --task lora --devices rtx-3060,h100-sxm --format json");
  CHECK(mixed.exit_code == 0);
}

TEST_CASE("an expert-parallel degree is checked before the search, and every searched layout holds it") {
  using hwplan::test::run_hwplan;
  auto odd = run_hwplan("estimate --model mixtral-8x7b --device h100-sxm --count 8 --ep 3");
  CHECK(odd.exit_code == 2);
  CHECK(odd.err.find("'--ep': 3-way expert parallelism does not divide the 8 experts") != std::string::npos);
  auto dense = run_hwplan("recommend --model llama-2-7b --devices h100-sxm --count 8 --ep 2");
  CHECK(dense.exit_code == 2);
  CHECK(dense.err.find("'--ep'") != std::string::npos);
  // Searched with --ep 8: the layout's data-parallel ranks hold the 8 expert groups, so the plan it prints runs
  // as given (the same check refuses a plan where they do not).
  for (const std::string cmd : {"estimate --model mixtral-8x7b --device h100-sxm --count 8 --ep 8 --format json",
                                "estimate --model mixtral-8x7b --device h100-sxm --count 8 --ep 8 --framework megatron "
                                "--global-batch 64 --seq 4096 --format json"}) {
    auto r = run_hwplan(cmd);
    REQUIRE(r.exit_code == 0);
    const auto plan = nlohmann::json::parse(r.out)["plan"];
    CHECK(plan["ep"].get<int>() == 8);
    CHECK(plan["dp"].get<int>() % 8 == 0);
  }
  CHECK(run_hwplan("estimate --model mixtral-8x7b --device h100-sxm --count 8 --tp 1 --pp 2 --dp 4 --ep 8").exit_code == 2);
  // Inference prices no expert parallelism: refused rather than searched away.
  auto infer = run_hwplan("estimate --model mixtral-8x7b --device h100-sxm --count 8 --task infer --ep 4");
  CHECK(infer.exit_code == 2);
  CHECK(infer.err.find("'--ep'") != std::string::npos);
}

TEST_CASE("an encoder's inference is one forward pass: a batch latency, no KV cache, nothing to decode or serve") {
  using hwplan::test::run_hwplan;
  auto vit = nlohmann::json::parse(run_hwplan("estimate --model vit-b-16 --device h100-sxm --task infer --batch 8 --format json").out);
  // ViT reads its 197 patches (its whole context), not the 512-token default prompt; eager PyTorch, not vLLM.
  CHECK(vit["workload"]["prompt"].get<long long>() == 197);
  CHECK(vit["workload"]["generate"].get<long long>() == 0);
  CHECK(vit["stack"]["preset"] == "hf");
  CHECK(vit["memory"]["breakdown"]["kv_cache"].get<double>() == 0.0);
  CHECK(vit["inference"]["time_to_first_token_seconds"].is_null());
  const double batch_seconds = vit["inference"]["batch_seconds"].get<double>();
  CHECK(vit["inference"]["samples_per_second"].get<double>() == ::hwplan::test::approx(8 / batch_seconds));
  CHECK(vit["uncertainty"]["time_regime"] == "step");
  auto table = run_hwplan("estimate --model bert-large --device h100-sxm --task infer --batch 8").out;
  CHECK(table.find("input 512 tokens (one forward pass)") != std::string::npos);
  CHECK(table.find("batch latency") != std::string::npos);
  CHECK(table.find("KV cache") == std::string::npos);
  CHECK(table.find("decode tokens/s") == std::string::npos);
  // Asking it to generate is an error, not a silent zero; serving it token by token too.
  auto gen = run_hwplan("estimate --model bert-large --device h100-sxm --task infer --generate 16");
  CHECK(gen.exit_code == 2);
  CHECK(gen.err.find("'--generate': bert-large is an encoder") != std::string::npos);
  auto serve = run_hwplan("serve --model bert-large --device h100-sxm --concurrency 2");
  CHECK(serve.exit_code == 2);
  CHECK(serve.err.find("is an encoder") != std::string::npos);
  // recommend ranks it on the input tokens it reads.
  CHECK(run_hwplan("recommend --model bert-large --task infer --batch 32 --top 2").out.find("input tok/s") != std::string::npos);
}

TEST_CASE("a CNN's fp32 convolutions run in TF32 where cuDNN would: priced as tf32 and said so") {
  using hwplan::test::run_hwplan;
  auto fp32 = nlohmann::json::parse(run_hwplan("estimate --model resnet-50 --device a100-80gb-sxm --task train --batch 256 --precision fp32 --format json").out);
  auto tf32 = nlohmann::json::parse(run_hwplan("estimate --model resnet-50 --device a100-80gb-sxm --task train --batch 256 --precision tf32 --format json").out);
  CHECK(fp32["time"]["step_seconds"].get<double>() == ::hwplan::test::approx(tf32["time"]["step_seconds"].get<double>()));
  CHECK(fp32["warnings"].dump().find("run in TF32") != std::string::npos);
  // No TF32 on a V100; and a language model's fp32 matmuls stay fp32 (PyTorch's matmul flag defaults to off).
  auto v100 = nlohmann::json::parse(run_hwplan("estimate --model resnet-50 --device v100-32gb-sxm --task train --batch 256 --precision fp32 --format json").out);
  CHECK(v100["warnings"].dump().find("TF32") == std::string::npos);
  auto gpt = nlohmann::json::parse(run_hwplan("estimate --model gpt2 --device a100-80gb-sxm --task train --batch 4 --seq 512 --precision fp32 --format json").out);
  CHECK(gpt["plan"]["effective_precision"] == "fp32");
}

TEST_CASE("one forward pass reads the same in every command: recommend, tco, compare, batch, fit") {
  using hwplan::test::run_hwplan;
  // recommend counts the input tokens of the batch over its latency, as estimate gives it.
  auto est = nlohmann::json::parse(run_hwplan("estimate --model bert-large --device b200 --task infer --batch 32 --format json").out);
  auto rec = nlohmann::json::parse(run_hwplan("recommend --model bert-large --task infer --batch 32 --devices b200 --format json").out);
  const double input_rate = 32 * 512 / est["inference"]["batch_seconds"].get<double>();
  CHECK(rec["candidates"][0]["tokens_per_second"].get<double>() == ::hwplan::test::approx(input_rate).epsilon(1e-6));
  CHECK(run_hwplan("recommend --model bert-large --task infer --batch 32 --min-decode-tps 300").exit_code == 2);
  // tco prices them per million input tokens at the same rate.
  auto tco = nlohmann::json::parse(run_hwplan("tco --model bert-large --device b200 --task infer --batch 32 --format json").out);
  CHECK(tco["inputs"]["token_kind"] == "input");
  CHECK(tco["inputs"]["tokens_per_second"].get<double>() == ::hwplan::test::approx(input_rate).epsilon(1e-6));
  // compare and batch speak of a batch latency and samples/s.
  auto cmp = run_hwplan("compare --model bert-large --devices h100-sxm,b200 --task infer --batch 8").out;
  CHECK(cmp.find("batch latency") != std::string::npos);
  CHECK(cmp.find("decode tokens/s") == std::string::npos);
  const std::string file = (std::filesystem::temp_directory_path() / ("hwplan_cli_enc_" + std::to_string(::getpid()) + ".yaml")).string();
  std::ofstream(file) << "scenarios:\n  - {name: g, model: bert-large, device: h100-sxm, task: infer, generate: 8}\n";
  auto batch = run_hwplan("batch " + file);
  CHECK(batch.exit_code != 0);
  CHECK(batch.err.find("is an encoder") != std::string::npos);
  std::filesystem::remove(file);
  // fit searches the encoder's input length, with nothing generated.
  auto fit = nlohmann::json::parse(run_hwplan("fit --model bert-large --device h100-sxm --task infer --format json").out);
  CHECK_FALSE(fit["max_seq"].is_null());
}

TEST_CASE("fp8 inference keeps 16-bit weights where the device has no fp8, and a bad HWPLAN_TODAY is ignored") {
  using hwplan::test::run_hwplan;
  auto t4 = nlohmann::json::parse(run_hwplan("estimate --model llama-3-8b --device t4 --task infer --precision fp8 --format json").out);
  CHECK(t4["workload"]["weights"] == "bf16");
  auto h100 = nlohmann::json::parse(run_hwplan("estimate --model llama-3-8b --device h100-sxm --task infer --precision fp8 --format json").out);
  CHECK(h100["workload"]["weights"] == "fp8");
  CHECK(h100["memory"]["breakdown"]["weights"].get<double>() < 0.6 * t4["memory"]["breakdown"]["weights"].get<double>());
  ::setenv("HWPLAN_TODAY", "garbage", 1);
  const auto today = hwplan::today_year_month();
  ::unsetenv("HWPLAN_TODAY");
  CHECK(today.first >= 2024);
  // vLLM needs compute capability 7.0: a P100 gets llama.cpp with no --engine.
  CHECK(run_hwplan("estimate --model llama-3.2-1b --device p100-16gb-pcie --task infer").out.find("llamacpp (assumed") != std::string::npos);
}

TEST_CASE("an integer-only accelerator stores and reads the weights in the integer format it computes in") {
  using hwplan::test::run_hwplan;
  const std::string work = "estimate --model llama-3.2-3b --device snapdragon-8-gen3-npu --task infer --batch 1 --format json";
  const auto plain = nlohmann::json::parse(run_hwplan(work).out);
  const auto int8 = nlohmann::json::parse(run_hwplan(work + " --weights int8").out);
  CHECK(plain["memory"]["per_device_bytes"] == int8["memory"]["per_device_bytes"]);
  CHECK(plain["inference"]["time_per_output_token_seconds"] == int8["inference"]["time_per_output_token_seconds"]);
  bool said = false;
  for (const auto& w : plain["warnings"]) said = said || w.get<std::string>().find("weights assumed int8") != std::string::npos;
  CHECK(said);
}

TEST_CASE("a deadline search says which smaller counts it passed over for want of a layout") {
  auto r = hwplan::test::run_hwplan("estimate --model llama-2-7b --device h100-sxm --tokens 1e11 --deadline 7d");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("32 x h100-sxm is the smallest count") != std::string::npos);
  CHECK(r.out.find("24 passed over: no layout splits that batch over them") != std::string::npos);
}

TEST_CASE("a count with no layout names the --shard-group or --ep that may leave none") {
  auto r = hwplan::test::run_hwplan("estimate --model llama-2-7b --device h100-sxm --count 16 --shard-group 3 --zero 3 --global-batch 64");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--shard-group 3 must divide the data-parallel ranks") != std::string::npos);
}

TEST_CASE("fit does not suggest offloading more than a host of the class holds") {
  auto r = hwplan::test::run_hwplan("fit --model llama-2-70b --device rtx-4090 --task finetune --format json");
  REQUIRE(r.exit_code == 0);
  // Recomputation with a 70B model's parameters and Adam states offloaded fits the card but needs about a terabyte
  // of host memory: not a desktop's, so not the answer.
  const auto big = nlohmann::json::parse(r.out);
  CHECK(big["combined"]["flags"] != "--recompute full --offload params");
  for (const auto& c : big["combinations"]) CHECK(c["flags"] != "--recompute full --offload params");
  // A 7B model's fit in a desktop's: still offered.
  const auto small = nlohmann::json::parse(hwplan::test::run_hwplan("fit --model llama-2-7b --device rtx-4090 --task finetune --format json").out);
  bool offered = false;
  for (const auto& c : small["changes"]) offered = offered || (c["flags"] == "--offload params" && c["fits"] == true);
  CHECK(offered);
}

TEST_CASE("tco buys the hosts the estimate placed the devices on: --devices-per-node is the host size") {
  using hwplan::test::run_hwplan;
  auto four = nlohmann::json::parse(
      run_hwplan("tco --model llama-2-7b --device h100-sxm --count 16 --devices-per-node 4 --task infer --batch 8 --format json").out);
  auto eight = nlohmann::json::parse(run_hwplan("tco --model llama-2-7b --device h100-sxm --count 16 --task infer --batch 8 --format json").out);
  CHECK(four["inputs"]["devices_per_host"] == 4);
  CHECK(eight["inputs"]["devices_per_host"] == 8);
  const double four_hosts = four["tco"]["own"]["hosts_usd"].get<double>();
  CHECK(four_hosts == hwplan::test::approx(2 * eight["tco"]["own"]["hosts_usd"].get<double>()));
  // --devices-per-host still wins where both are given.
  auto both = nlohmann::json::parse(run_hwplan("tco --model llama-2-7b --device h100-sxm --count 16 --devices-per-node 4 "
                                               "--devices-per-host 8 --task infer --batch 8 --format json").out);
  CHECK(both["inputs"]["devices_per_host"] == 8);
}

TEST_CASE("training-stack flags given to inference are said to be ignored") {
  auto r = hwplan::test::run_hwplan("estimate --model llama-2-7b --device h100-sxm --task infer --fused-optimizer on --chunked-loss on "
                                    "--fp32-grads on --format json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  std::string said;
  for (const auto& w : j["warnings"])
    if (w.get<std::string>().find("ignored for --task infer") != std::string::npos) said = w.get<std::string>();
  CHECK(said.find("--fused-optimizer") != std::string::npos);
  CHECK(said.find("--chunked-loss") != std::string::npos);
  CHECK(said.find("--fp32-grads") != std::string::npos);
}

TEST_CASE("tco of a device that is only rented costs the rent side alone, never owning as free") {
  using hwplan::test::run_hwplan;
  const std::string job = " --model llama-3.2-1b --device tpu-v5e --task lora --batch 4 --seq 1024 --tokens 1e9 --recompute full";
  auto r = run_hwplan("tco" + job + " --format json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["tco"]["own"].is_null());
  CHECK(j["tco"]["cheaper"].is_null());
  CHECK(j["tco"]["usd_per_job"]["own"].is_null());
  const double rate = j["tco"]["rent"]["usd_per_device_hour"].get<double>();
  const double hours = j["inputs"]["job_hours"].get<double>();
  CHECK(j["tco"]["usd_per_job"]["rent"].get<double>() == hwplan::test::approx(rate * hours));
  bool said = false;
  for (const auto& n : j["notes"]) said = said || n.get<std::string>().find("only renting is costed") != std::string::npos;
  CHECK(said);
  auto csv = run_hwplan("tco" + job + " --format csv");
  CHECK(csv.exit_code == 0);
  CHECK(run_hwplan("plot tco" + job + " -o /tmp/hwplan_tco_rent_" + std::to_string(::getpid()) + ".svg").exit_code == 0);
  // A device with neither price still asks for a quote.
  CHECK(run_hwplan("tco --model llama-3.2-1b --device ascend-910b3 --task infer").exit_code == 2);
}

TEST_CASE("a deadline no count meets at the default global batch names that batch as the limit") {
  auto r = ::hwplan::test::run_hwplan("estimate --model qwen2.5-0.5b --device h100-sxm --task finetune --tokens 1e11 --deadline 1d");
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("default global batch of 16 sequences") != std::string::npos);
  CHECK(::hwplan::test::run_hwplan("estimate --model qwen2.5-0.5b --device h100-sxm --task finetune --tokens 1e11 --deadline 1d "
                                   "--global-batch 4096").exit_code == 0);
}
