// The estimators against recorded measurements (data/measurements, each case cites its source). The error
// distribution is printed so the test log doubles as the report; tolerances are stated per assertion.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <unistd.h>
#include <map>
#include <nlohmann/json.hpp>

#include "estimators/uncertainty.hpp"
#include "io/measurements_io.hpp"
#include "validate/validation.hpp"
#include "test_util.hpp"

using namespace hwplan;

namespace {
// A training set's two regimes, peak memory and throughput (tokens/s, samples/s), each with its errors; printed.
struct MemoryAndSpeed {
  validate::GroupError memory, speed;
};
MemoryAndSpeed memory_and_speed(const std::string& file, std::size_t rows_expected) {
  auto rows = validate::validate_measurement_file(test::registry(), test::source_path("data/measurements/" + file));
  REQUIRE(rows.size() == rows_expected);
  auto groups = validate::group_errors(rows, &validate::ValidationRow::regime);
  REQUIRE(groups.size() == 2);
  const bool memory_first = groups[0].key == "memory";
  MemoryAndSpeed r{groups[memory_first ? 0 : 1], groups[memory_first ? 1 : 0]};
  REQUIRE(r.memory.key == "memory");
  REQUIRE(r.speed.key == "throughput");
  std::printf("%s memory: median |error| %.1f%%, bias %+.1f%%; speed: median |error| %.1f%%, bias %+.1f%%\n", file.c_str(),
              100 * r.memory.median_abs, 100 * r.memory.bias, 100 * r.speed.median_abs, 100 * r.speed.bias);
  return r;
}

validate::ValidationSummary check_set(const std::string& file) {
  auto rows = validate::validate_measurement_file(test::registry(), test::source_path(file));
  auto s = validate::summarize(rows);
  std::printf("%s: %d comparisons, median |error| %.1f%%, mean %.1f%%, worst %.1f%% (%s), %d within 10%%, %d within 35%%\n",
              file.c_str(), s.count, 100 * s.median_abs, 100 * s.mean_abs, 100 * s.worst_abs, s.worst_name.c_str(),
              s.within_10, s.within_35);
  for (const auto& r : rows) {
    CAPTURE(r.name);
    CHECK(std::isfinite(r.predicted));
    CHECK(r.predicted > 0);
  }
  return s;
}
}  // namespace

TEST_CASE("fp32 step latencies of real PyTorch models (NeuSight, ASPLOS 2025)") {
  auto s = check_set("data/measurements/step-latency-neusight.yaml");
  CHECK(s.count == 43);
  // Tolerances: median |error| <= 9%; every case within 30% (the MI100 rows are the worst: rocBLAS's fp32 on the
  // matrix cores, for which no published SGEMM measurement gives the achieved fraction).
  CHECK(s.median_abs <= 0.09);
  CHECK(s.worst_abs <= 0.30);
  CHECK(s.within_35 == s.count);
}

TEST_CASE("published training throughput and decode speeds") {
  auto s = check_set("data/measurements/published-throughput.yaml");
  CHECK(s.count == 59);
  // Tolerances: median |error| <= 11% (7.2% when last measured, with the 13 Megatron-LM rows of Korthikanti et al. and
  // MegaScale added after the model was built: +1% to +15%); at most one case off by more than 35% (MT-NLG 530B,
  // +78%: its recomputation is not stated and the search runs without it; see the README's accuracy section).
  CHECK(s.median_abs <= 0.11);
  CHECK(s.within_35 >= s.count - 1);
}

TEST_CASE("decode speed in the engine each measurement used (gpt-fast, torchao, AutoAWQ, MLC, vLLM, NIM, premAI)") {
  auto s = check_set("data/measurements/decode-engines.yaml");
  CHECK(s.count == 48);
  // Tolerances: median |error| <= 20% (18.1% when last measured: 14.8% over the first 37 rows, 16.3% before GeForce
  // cards' hosts were taken to be desktops; premAI's 11 A100 rows, compared as sourced, 30.7%); at most 10 rows off
  // by more than 35% (9 when last measured: AutoAWQ's fused modules on both cards, gpt-fast at tp 8 and its 70B int4,
  // Transformers and vLLM without CUDA graphs on premAI's faster host; see the README).
  CHECK(s.median_abs <= 0.20);
  CHECK(s.within_35 >= s.count - 10);
}

TEST_CASE("hwplan's own measurements on a lent H200 (scripts/gpu_measure.py)") {
  auto rows = validate::validate_measurement_file(test::registry(), test::source_path("data/measurements/measured-h200.yaml"));
  REQUIRE(rows.size() == 47);
  std::vector<validate::ValidationRow> step, memory;
  for (const auto& r : rows) {
    if (r.regime == "step") step.push_back(r);
    if (r.regime == "memory") memory.push_back(r);
  }
  // Step latencies on a GPU the model had never seen: the first 17 fp32 Hugging Face rows, and 16 measured after
  // the changes they led to (bf16 forward passes, smaller fp32 batches). Median |error| <= 8% (5.5% when last
  // measured); the worst are host-bound eager loops, both ways on the same machine: BERT-Large at batch 1
  // (-23..-41%) and the bf16 forward passes of Llama 2 7B at 512 tokens and Llama 3.2 1B (+18..+21%).
  auto s = validate::summarize(step);
  CHECK(s.count == 33);
  CHECK(s.median_abs <= 0.08);
  CHECK(s.within_35 >= s.count - 3);
  // Peak allocated memory of five bf16 training loops, after the eager-stack terms three of them were measured to
  // check (estimators/memory.cpp; the two Llama 2 7B rows came after): each within 5% (-0.1..+2.0% when last
  // measured).
  REQUIRE(memory.size() == 5);
  for (const auto& r : memory) {
    CAPTURE(r.name);
    CHECK(std::fabs(r.error) <= 0.05);
  }
}

TEST_CASE("BERT SQuAD fine-tuning on eight GPUs (Lambda's benchmark of DeepLearningExamples)") {
  auto rows = validate::validate_measurement_file(test::registry(), test::source_path("data/measurements/bert-squad-lambda.yaml"));
  REQUIRE(rows.size() == 32);
  auto s = validate::summarize(rows);
  // Median |error| <= 12% (9.9% when last measured), every row within 35% (worst -25.5%, BERT-Base fp16 on the
  // RTX 4090). Without the span head (--lm-head off) the BERT-Base rows were 20-25% slow; without the BertAdam loop
  // (--foreach-optimizer off) the TF32 rows 13-38% fast.
  CHECK(s.median_abs <= 0.12);
  CHECK(s.within_35 == s.count);
  // The power-limited cards without a published GEMM measurement are where the rest is (see the README).
  for (const auto& r : rows) {
    CAPTURE(r.name);
    CHECK(std::fabs(r.error) <= 0.30);
  }
}

TEST_CASE("image networks: ResNet-50 and ViT-B/16 images per second across stacks and GPUs") {
  auto s = check_set("data/measurements/cnn-throughput.yaml");
  CHECK(s.count == 66);
  // Tolerance: median |error| <= 20% (17.3% when last measured, p80 of the ResNet-50 rows 27.4%). The spread is mostly the stack: on one A100 the same
  // ResNet-50 trains at 1,582 (Lambda, NCHW) to 2,470 images/s (NVIDIA, channels-last); the layout is an input now
  // (memory_format), the other differences between stacks (TensorFlow XLA, input pipelines) are not.
  CHECK(s.median_abs <= 0.20);
  auto rows = validate::validate_measurement_file(test::registry(), test::source_path("data/measurements/cnn-throughput.yaml"));
  std::vector<validate::ValidationRow> image;
  for (const auto& r : rows) {
    CAPTURE(r.name);
    CHECK(r.unit == "samples/s");
    // ResNet-50 (a generic network) has its own regime; ViT-B/16 is timed as a transformer (throughput or step).
    if (r.name.find("rn50") != std::string::npos) {
      CHECK(r.regime == "image");
      image.push_back(r);
    } else {
      CHECK(r.regime == (r.name.find("-infer-") != std::string::npos ? "step" : "throughput"));
    }
  }
  // The band every CNN estimate prints (estimators/uncertainty.cpp) is this set's p80 (1.5 points).
  auto groups = validate::group_errors(image, &validate::ValidationRow::regime);
  REQUIRE(groups.size() == 1);
  INFO("p80 " << groups[0].p80_abs);
  CHECK(std::fabs(groups[0].p80_abs - band(Regime::kImage).p80_relative_error) <= 0.015);
  CHECK(groups[0].count == band(Regime::kImage).rows);
}

TEST_CASE("fine-tuning recipes: hwplan validate runs every case and reports it") {
  // data/measurements/finetune.yaml (torchtune, PEFT, LLaMA-Factory, NeMo, Megatron-Bridge): the real binary takes
  // the file, exits 0 and prints one row per measured quantity of every case; the median error is held below.
  const std::string file = test::source_path("data/measurements/finetune.yaml");
  io::MeasurementSet set = io::load_measurements(file);
  CHECK(set.cases.size() == 48);
  std::size_t quantities = 0;
  for (const auto& c : set.cases) quantities += c.measured.size();

  auto j = test::run_hwplan("validate --measurements " + file + " --format json");
  REQUIRE(j.exit_code == 0);
  nlohmann::json doc = nlohmann::json::parse(j.out);
  std::map<std::string, std::size_t> rows;
  for (const auto& row : doc["cases"]) ++rows[row["name"].get<std::string>()];
  CHECK(doc["summary"]["cases"] == quantities);
  for (const auto& c : set.cases) {
    CAPTURE(c.name);
    CHECK(rows[c.name] == c.measured.size());
  }

  auto table = test::run_hwplan("validate --measurements " + file);
  REQUIRE(table.exit_code == 0);
  for (const auto& c : set.cases) {
    CAPTURE(c.name);
    CHECK(table.out.find(c.name) != std::string::npos);
  }
  CHECK(table.out.find(std::to_string(quantities) + " comparisons: median |error|") != std::string::npos);
  // Median |error| over memory and tokens/s: 9.5% when last measured; held to 11%.
  CHECK(doc["summary"]["median_abs_error"].get<double>() <= 0.11);
}

TEST_CASE("fine-tuning recipes: memory and speed within stated tolerances") {
  auto rows = validate::validate_measurement_file(test::registry(), test::source_path("data/measurements/finetune.yaml"));
  std::vector<validate::ValidationRow> memory, speed;
  for (const auto& r : rows) (r.regime == "memory" ? memory : speed).push_back(r);
  auto m = validate::summarize(memory), s = validate::summarize(speed);
  std::printf("finetune.yaml memory: median |error| %.1f%%; tokens/s: median |error| %.1f%%\n", 100 * m.median_abs,
              100 * s.median_abs);
  // Tolerances: peak memory median <= 10% (the stack's pure bf16, paged and in-backward optimizers, activation
  // offload and reported metric are modelled); tokens/s median <= 15% (the LLaMA-Factory Hugging Face rows are still
  // predicted 30-65% too fast, see the README's accuracy section).
  CHECK(m.median_abs <= 0.10);
  CHECK(s.median_abs <= 0.15);
}

TEST_CASE("training recipes from other public repositories: memory and speed within stated tolerances") {
  // training-public.yaml was sourced and compared before anything was changed for it: FlashAttention's GPT-3 shapes
  // on 8 A100, PEFT's benchmark on an L40S, Liger-Kernel's HF + FSDP examples on 4 A100, the Transformers docs'
  // BERT-Large sweep on a V100.
  // Its rows fall in two regimes: peak memory, and training throughput (tokens/s, samples/s).
  const auto [m, s] = memory_and_speed("training-public.yaml", 31);
  // When first measured: memory median 8.3% (bias -9.4%: nvidia-smi readings of a near-full V100), speed median
  // 17.5% (bias +14%: the A100 training rows run 6-34% fast; 15.1% and +12% since the FlashAttention rows carry
  // the bf16 autocast their notes give). Held to the first figures, with 2.5 points of slack.
  CHECK(m.median_abs <= 0.108);
  CHECK(s.median_abs <= 0.20);
}

TEST_CASE("pre-training at scale (KempnerForge on 1-160 H200, NeMo Automodel and Megatron-Bridge): held to its figures") {
  // training-scaling.yaml was compared as sourced: memory median 53% (bias -55%), speed 27% (bias +20%). Its
  // KempnerForge rows then gained three behaviours read from that stack's code (fp32 gradient reduction over bf16
  // parameters, accumulation under no_sync holding unsharded fp32 gradients, logits gathered whole for the loss under
  // tensor parallelism); nothing else was changed for them.
  const auto [m, s] = memory_and_speed("training-scaling.yaml", 47);
  // Now memory 5.7% (bias +2%), speed 18.2% (bias +19%: KempnerForge's tensor-parallel-4 rows +8% to +43%, NeMo's
  // MoE rows -58% to +69%; the tensor-parallel pairs on its switchless 4-GPU boards +13%). Held there with slack.
  CHECK(m.median_abs <= 0.08);
  CHECK(std::fabs(m.bias) <= 0.05);
  CHECK(s.median_abs <= 0.22);
}

TEST_CASE("the uncertainty bands are the ones the measurement sets give, and the leave-one-out checks run") {
  std::vector<validate::ValidationRow> rows;
  for (const char* f : {"data/measurements/step-latency-neusight.yaml", "data/measurements/published-throughput.yaml",
                        "data/measurements/finetune.yaml", "data/measurements/measured-h200.yaml",
                        "data/measurements/bert-squad-lambda.yaml", "data/measurements/training-public.yaml",
                        "data/measurements/training-scaling.yaml"}) {
    auto r = validate::validate_measurement_file(test::registry(), test::source_path(f));
    rows.insert(rows.end(), r.begin(), r.end());
  }
  // The decode band also counts the engine decode set: decode in the engines users run, not batch-1 eager alone.
  std::vector<validate::ValidationRow> banded = rows;
  {
    auto r = validate::validate_measurement_file(test::registry(), test::source_path("data/measurements/decode-engines.yaml"));
    banded.insert(banded.end(), r.begin(), r.end());
  }
  for (const auto& g : validate::group_errors(banded, &validate::ValidationRow::regime)) {
    CAPTURE(g.key);
    Regime r = g.key == "step" ? Regime::kStep : g.key == "decode" ? Regime::kDecode : g.key == "memory" ? Regime::kMemory : Regime::kThroughput;
    INFO("p80 " << g.p80_abs);
    // estimators/uncertainty.cpp holds these figures; they must track the current estimators (1.5 points).
    CHECK(std::fabs(g.p80_abs - band(r).p80_relative_error) <= 0.015);
    CHECK(g.count == band(r).rows);
  }
  auto by_device = validate::cross_validate(rows, &validate::ValidationRow::device, "device");
  CHECK(by_device.rows == static_cast<int>(rows.size()));
  CHECK(by_device.groups >= 10);
  // The band fitted without a device covers most of that device's rows (it is a p80 band: about 80% expected).
  CHECK(by_device.covered >= static_cast<int>(0.65 * by_device.rows));
  std::printf("leave-one-device-out: band coverage %d of %d; leave-one-source-out: %d of %d\n", by_device.covered,
              by_device.rows, validate::cross_validate(rows, &validate::ValidationRow::source, "source").covered,
              static_cast<int>(rows.size()));
}

TEST_CASE("the fitted stack constant is refitted inside the leave-one-out loop") {
  std::vector<std::string> files;
  for (const char* f : {"data/measurements/step-latency-neusight.yaml", "data/measurements/published-throughput.yaml",
                        "data/measurements/finetune.yaml"})
    files.push_back(test::source_path(f));
  // The factor changes only eager 16-bit training rows: fp32 step latencies do not move with it.
  auto neusight_1 = validate::validate_measurement_file(test::registry(), files[0], 1.0);
  auto neusight_3 = validate::validate_measurement_file(test::registry(), files[0], 3.0);
  REQUIRE(neusight_1.size() == neusight_3.size());
  for (std::size_t i = 0; i < neusight_1.size(); ++i) CHECK(neusight_1[i].predicted == neusight_3[i].predicted);
  // ...while an eager bf16 fine-tuning row slows down as the factor grows.
  auto ft_1 = validate::validate_measurement_file(test::registry(), files[2], 1.0);
  auto ft_3 = validate::validate_measurement_file(test::registry(), files[2], 3.0);
  bool some_slower = false;
  for (std::size_t i = 0; i < ft_1.size(); ++i)
    if (ft_1[i].quantity == "tokens_per_second_per_device" && ft_3[i].predicted < ft_1[i].predicted) some_slower = true;
  CHECK(some_slower);
  const validate::FactorGrid grid = validate::eager_factor_grid(test::registry(), files);
  for (auto [key, by] : {std::pair{&validate::ValidationRow::device, "device"}, std::pair{&validate::ValidationRow::source, "source"}}) {
    CAPTURE(by);
    auto cv = validate::refit_cross_validate(grid, key, by);
    CHECK(cv.rows == static_cast<int>(ft_1.size() + neusight_1.size() +
                                      validate::validate_measurement_file(test::registry(), files[1]).size()));
    CHECK(cv.factor_min >= 1.0);
    CHECK(cv.factor_max <= 3.0);
    CHECK(cv.factor_min <= cv.factor_max);
    // Held-out tolerances (README, Accuracy): median |error| <= 12%, p90 <= 40%.
    CHECK(cv.median_abs <= 0.12);
    CHECK(cv.p90_abs <= 0.40);
  }
}

TEST_CASE("a decode row starts from its prompt: a long context reads more KV cache per token") {
  const std::string head = "source: s\ncases:\n";
  auto row = [](const std::string& name, const std::string& prompt) {
    return "  - {name: " + name + ", kind: decode, engine: vllm, model: llama-3-8b, device: a100-80gb-sxm, precision: bf16, " +
           prompt + "generate: 200, global_batch: 8, measured: {decode_tokens_per_second: 500}}\n";
  };
  io::MeasurementSet set = io::parse_measurements(head + row("short", "") + row("long", "prompt: 16000, "), "s.yaml");
  REQUIRE(set.cases.size() == 2);
  CHECK(set.cases[0].spec.prompt == 0);
  CHECK(set.cases[1].spec.prompt == 16000);
  const std::string path = "/tmp/hwplan_decode_prompt_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << head + row("short", "") + row("long", "prompt: 16000, ");
  auto rows = validate::validate_measurement_file(test::registry(), path);
  REQUIRE(rows.size() == 2);
  // Eight sequences at ~16,100 tokens read ~16 GiB of KV cache per step beside 15 GiB of weights.
  CHECK(rows[1].predicted < 0.7 * rows[0].predicted);
}

TEST_CASE("a measured figure the case's task does not produce is an error naming the key, not a -100% row") {
  const std::string path = "/tmp/hwplan_mismatch_" + std::to_string(::getpid()) + ".yaml";
  auto write = [&](const std::string& cases) {
    std::ofstream(path) << "source: \"test\"\ndescription: \"test\"\ncases:\n" << cases;
  };
  auto key_of = [&]() -> std::string {
    try {
      validate::validate_measurement_file(test::registry(), path);
    } catch (const InputError& e) {
      return e.key();
    }
    return "";
  };
  write("  - {name: a, kind: training, model: gpt2, device: t4, task: train, precision: fp32, batch: 1, seq: 512, "
        "measured: {decode_tokens_per_second: 10}, confidence: verified, source: \"x\"}\n");
  CHECK(key_of() == "measured.decode_tokens_per_second");
  write("  - {name: b, kind: decode, engine: hf, model: gpt2, device: t4, precision: fp16, prompt: 6, generate: 100, global_batch: 1, "
        "measured: {mfu: 0.4}, confidence: verified, source: \"x\"}\n");
  CHECK(key_of() == "measured.mfu");
  write("  - {name: c, kind: decode, engine: hf, model: gpt2, device: t4, precision: fp16, prompt: 6, generate: 100, global_batch: 1, "
        "measured: {}, confidence: verified, source: \"x\"}\n");
  CHECK(key_of() == "measured");
  // The same case with a figure it produces is compared.
  write("  - {name: d, kind: decode, engine: hf, model: gpt2, device: t4, precision: fp16, prompt: 6, generate: 100, global_batch: 1, "
        "measured: {decode_tokens_per_second: 100}, confidence: verified, source: \"x\"}\n");
  CHECK(key_of().empty());
  std::remove(path.c_str());
}

TEST_CASE("a case's bad value is named as the case's key, at that key's line") {
  const std::string path = "/tmp/hwplan_keyline_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << "source: \"test\"\ncases:\n"
                         "  - name: bad-tp\n"
                         "    device: h100-sxm\n"
                         "    model: llama-2-7b\n"
                         "    count: 8\n"
                         "    kind: train_throughput\n"
                         "    seq: 2048\n"
                         "    tp: 3\n"
                         "    measured: {tokens_per_second_per_device: 1000}\n";
  try {
    validate::validate_measurement_file(test::registry(), path);
    FAIL("a tp that does not divide the heads was compared");
  } catch (const InputError& e) {
    CHECK(e.key() == "cases[].tp");
    CHECK(e.where().line == 9);
    CHECK(std::string(e.what()).find("case 'bad-tp'") != std::string::npos);
  }
  std::remove(path.c_str());
}

TEST_CASE("validate's forms: plain CSV rows, a file given twice counted once, one source's leave-one-out n/a, "
          "a run predicted not to fit marked, the microbenchmark comparison in JSON and CSV") {
  const std::string file = test::source_path("data/measurements/bert-squad-lambda.yaml");
  auto once = nlohmann::json::parse(test::run_hwplan("validate --measurements " + file + " --format json").out);
  auto twice = test::run_hwplan("validate --measurements " + file + " --measurements " + file + " --format json");
  REQUIRE(twice.exit_code == 0);
  CHECK(twice.err.find("given more than once") != std::string::npos);
  CHECK(nlohmann::json::parse(twice.out)["summary"]["cases"] == once["summary"]["cases"]);
  // One source: leaving it out leaves nothing to fit, said as such (null in JSON).
  bool source_checked = false;
  for (const auto& cv : once["cross_validation"])
    if (cv["leave_one_out_by"] == "source") {
      CHECK(cv["groups"] == 1);
      CHECK(cv["held_out_median_abs_error"].is_null());
      source_checked = true;
    }
  CHECK(source_checked);
  auto table = test::run_hwplan("validate --measurements " + file);
  CHECK(table.out.find("leave-one-source-out: n/a") != std::string::npos);
  // Lambda ran BERT-base fp16 at batch 96 on an RTX 3090; hwplan puts it over the usable memory: the row says so.
  bool marked = false;
  for (const auto& c : once["cases"])
    if (c["name"] == "lambda-bert-base-squad-rtx-3090-fp16") marked = c["predicted_fits"] == false;
  CHECK(marked);
  CHECK(table.out.find("lambda-bert-base-squad-rtx-3090-fp16 *") != std::string::npos);
  CHECK(table.out.find("predicts do not fit the device's memory") != std::string::npos);
  auto markdown = test::run_hwplan("validate --measurements " + file + " --format markdown");
  CHECK(markdown.out.find("\nMarked *: ") != std::string::npos);  // not a markdown bullet
  auto csv_sensitivity = test::run_hwplan("validate --measurements " + file + " --format csv --sensitivity");
  CHECK(csv_sensitivity.exit_code == 2);
  CHECK(csv_sensitivity.err.find("'--sensitivity'") != std::string::npos);
  // CSV: a header and one line of plain numbers per comparison, nothing else.
  auto csv = test::run_hwplan("validate --measurements " + file + " --format csv");
  REQUIRE(csv.exit_code == 0);
  std::size_t lines = 0;
  for (char ch : csv.out) lines += ch == '\n';
  CHECK(lines == 1 + once["cases"].size());
  CHECK(csv.out.rfind("case,set,quantity,unit,measured,predicted,error,", 0) == 0);
  CHECK(csv.out.find('%') == std::string::npos);
  // Microbenchmark mode against a committed GPU profile: JSON and CSV are what they say.
  const std::string profile = test::source_path("data/profiles/nvidia-h200.yaml");
  auto mj = test::run_hwplan("validate --profile " + profile + " --format json");
  REQUIRE(mj.exit_code == 0);
  auto m = nlohmann::json::parse(mj.out);
  CHECK(m["catalog_id"] == "h200-sxm");
  REQUIRE(!m["checks"].empty());
  for (const auto& c : m["checks"]) {
    CHECK(c["measured_seconds"].get<double>() > 0);
    CHECK(c["predicted_profile_seconds"].get<double>() > 0);
  }
  CHECK(m["summary"]["checks"] == m["checks"].size());
  auto mc = test::run_hwplan("validate --profile " + profile + " --format csv");
  REQUIRE(mc.exit_code == 0);
  CHECK(mc.out.rfind("kernel,shape,measured_seconds,", 0) == 0);
  CHECK(mc.out.find("profile predictions") == std::string::npos);
}

TEST_CASE("a case's unknown model is named as the case's model key at its line") {
  const std::string path = "/tmp/hwplan_modelline_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << "source: \"test\"\ncases:\n"
                         "  - name: typo\n"
                         "    device: h100-sxm\n"
                         "    kind: train_throughput\n"
                         "    seq: 2048\n"
                         "    model: llama-2-7bb\n"
                         "    measured: {tokens_per_second_per_device: 1000}\n";
  try {
    validate::validate_measurement_file(test::registry(), path);
    FAIL("an unknown model was compared");
  } catch (const InputError& e) {
    CHECK(e.key() == "cases[].model");
    CHECK(e.where().line == 7);
  }
  std::remove(path.c_str());
}

TEST_CASE("edge NPUs through their own runtimes (Coral Edge TPU over USB, Snapdragon 8 Gen 3 under QNN)") {
  auto rows = validate::validate_measurement_file(test::registry(), test::source_path("data/measurements/edge.yaml"));
  REQUIRE(rows.size() == 4);
  for (const auto& r : rows) {
    CAPTURE(r.name);
    CHECK(r.predicted_fits);
    // Tolerances: every row within 25% (when last measured: the Edge TPU's MobileNet v2 -17.2%, cached on chip, and
    // VGG16 +18.0%, streamed over USB; the Hexagon NPU's MobileNet v2 -5.2% and ResNet-50 +14.8%).
    CHECK(std::fabs(r.error) < 0.25);
  }
}

TEST_CASE("edge LLMs: the Jetson Orin Nano Super's MLC decode and the Snapdragon 8 Gen 3 NPU's AI Hub profiles") {
  auto rows = validate::validate_measurement_file(test::registry(), test::source_path("data/measurements/edge-llm.yaml"));
  REQUIRE(rows.size() == 8);
  for (const auto& r : rows) {
    CAPTURE(r.name);
    CHECK(r.predicted_fits);
    // When added: the Orin Nano Super's decode rows +0.6% to +7.0% (Gemma 2 9B, whose settings the source leaves
    // unknown, +79.5%); the Snapdragon NPU's decode +18% and +45% and its 1,024-token prompts -54% and -64%.
    CHECK(std::fabs(r.error) < 0.85);
    if (r.name.rfind("orin-nano-super-", 0) == 0 && r.name.find("gemma") == std::string::npos) CHECK(std::fabs(r.error) < 0.10);
  }
}

TEST_CASE("layers left in host memory: an -ngl sweep of llama.cpp on an RTX 5060 Ti and a desktop's DDR4") {
  auto rows = validate::validate_measurement_file(test::registry(), test::source_path("data/measurements/offload.yaml"));
  REQUIRE(rows.size() == 14);
  for (const auto& r : rows) {
    CAPTURE(r.name);
    CAPTURE(r.quantity);
    CHECK(r.predicted_fits);
    // When added: decode -14.4% (all 48 layers on the GPU) to +5.5% (none), the split rows -12.5% to +0.9%; the GPU's
    // memory -8.0% to +0.6% where layers are on it, +141% with none (a CUDA context and compute buffers the source's
    // tool, on Windows, does not show).
    if (r.quantity == "decode_tokens_per_second") CHECK(std::fabs(r.error) < 0.20);
    if (r.quantity == "peak_memory_gib" && r.name.find("ngl0") == std::string::npos) CHECK(std::fabs(r.error) < 0.12);
  }
}
