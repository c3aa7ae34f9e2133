// Serving: the step model against the estimators, the simulator's queueing identities, the capacity search's
// monotonicity, traces, and the hwplan serve command (contract, determinism, bad rows).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/assumptions.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "estimators/comm.hpp"
#include "estimators/estimate.hpp"
#include "estimators/inference.hpp"
#include "io/serving_io.hpp"
#include "io/trace_io.hpp"
#include "recommend/query.hpp"
#include "recommend/front_end.hpp"
#include "serve/plan.hpp"
#include "validate/validation.hpp"
#include "test_util.hpp"

using namespace hwplan;
using hwplan::test::run_hwplan;
using nlohmann::json;

namespace {

Query infer_query(const std::string& model, const std::string& device, int tp = 1, long long batch = 1,
                  long long prompt = 512, long long generate = 256) {
  WorkloadSpec s;
  s.model = model;
  s.device = device;
  s.task = "infer";
  s.count = tp;
  s.tp = tp;
  s.pp = 1;
  s.dp = 1;
  s.batch = batch;
  s.prompt = prompt;
  s.generate = generate;
  s.engine = "vllm";
  Query q = resolve_query(test::registry(), s);
  q.input.model = &q.model;
  return q;
}

serve::Traffic fixed_traffic(long long prompt, long long output, long long requests, std::uint64_t seed = 1) {
  serve::Traffic t;
  t.prompt.fixed = prompt;
  t.output.fixed = output;
  t.requests = requests;
  t.seed = seed;
  return t;
}

std::string temp_file(const std::string& name, const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / ("hwplan_serve_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

TEST_CASE("the step model's decode step is inference_time's time per output token") {
  for (long long batch : {1LL, 8LL, 64LL}) {
    Query q = infer_query("llama-3-8b", "h100-sxm", 1, batch, 1000, 200);
    Estimate e = estimate(q.input);
    serve::StepModel m(step_rates(q.input));
    // inference_time prices decode at the mean context prompt + generate / 2.
    CHECK(m.decode_step_seconds(batch, 1000 + 100) == ::hwplan::test::approx(e.infer.time_per_output_token_seconds).epsilon(1e-9));
  }
  Query tp = infer_query("llama-3-70b", "h100-sxm", 4, 16, 2000, 500);
  Estimate e = estimate(tp.input);
  serve::StepModel m(step_rates(tp.input));
  CHECK(m.decode_step_seconds(16, 2250) == ::hwplan::test::approx(e.infer.time_per_output_token_seconds).epsilon(1e-9));
}

TEST_CASE("estimate quotes the TTFT hwplan serve gives a lone request: the same figure from both commands") {
  auto run = [](const std::string& args) { return run_hwplan(args); };
  const std::string work = "--model llama-3-8b --device h100-sxm --engine vllm --prompt 1000 --generate 200";
  auto est = run("estimate --task infer --batch 1 " + work + " --format json");
  REQUIRE(est.exit_code == 0);
  const double prefill = json::parse(est.out)["inference"]["time_to_first_token_seconds"].get<double>();
  auto srv = run("serve --concurrency 1 --requests 50 " + work + " --format json");
  REQUIRE(srv.exit_code == 0);
  const double ttft = json::parse(srv.out)["latency"]["ttft_seconds"]["p50"].get<double>();
  // One client: the request finds the engine idle; the server's handling (10 ms) and the engine's steps come before
  // its first token, and estimate quotes exactly that beside the bare prefill.
  const double handling = 0.010;
  CHECK(ttft >= prefill + handling);
  CHECK(ttft <= prefill + handling + 0.01);
  CHECK(json::parse(est.out)["inference"]["served_time_to_first_token_seconds"].get<double>() == ::hwplan::test::approx(ttft).epsilon(1e-9));
  auto text = run("estimate --task infer --batch 1 " + work);
  CHECK(text.out.find(fmt::format("through a server, {}", human_seconds(ttft))) != std::string::npos);
  // A prompt over the engine's chunk budget takes several steps, on both sides; llama.cpp and a desktop host too.
  // An NPU's runtime, which serve times under llama-server's scheduler, too.
  for (const std::string other : {"--model llama-3-8b --device h100-sxm --engine vllm --prompt 20000 --generate 10",
                                  "--model llama-3-8b --device rtx-4090 --engine llamacpp --weights q4_0 --prompt 700",
                                  "--model qwen2.5-7b --device apple-m4-ane --prompt 1000 --generate 200"}) {
    const double quoted = json::parse(run("estimate --task infer --batch 1 --format json " + other).out)["inference"]
                                                                                                          ["served_time_to_first_token_seconds"];
    const double simulated =
        json::parse(run("serve --concurrency 1 --requests 20 --format json " + other).out)["latency"]["ttft_seconds"]["p50"];
    CHECK(quoted == ::hwplan::test::approx(simulated).epsilon(1e-9));
  }
  // A --headroom given caps the engine's memory in both commands: where serve finds no room for the request, estimate
  // quotes no served TTFT either.
  const std::string capped = "--model llama-3-8b --device rtx-4090 --engine vllm --prompt 2000 --generate 200 --headroom 0.3";
  CHECK(run("serve --concurrency 1 --requests 20 " + capped).exit_code == 3);
  CHECK(json::parse(run("estimate --task infer --batch 1 --format json " + capped).out)["inference"]
                       ["served_time_to_first_token_seconds"]
                           .is_null());
  CHECK(json::parse(run("estimate --task infer --batch 1 --format json " + capped.substr(0, capped.find(" --headroom"))).out)
            ["inference"]["served_time_to_first_token_seconds"]
                .is_number());
  // serve refuses a device without memory of its own: no served TTFT to quote there.
  CHECK(json::parse(run("estimate --task infer --batch 1 --format json --model gpt2 --device coral-edge-tpu --prompt 8 "
                        "--generate 8").out)["inference"]["served_time_to_first_token_seconds"]
            .is_null());
  // Plain Transformers has no server to add.
  auto hf = run("estimate --task infer --batch 1 --model llama-3-8b --device h100-sxm --engine hf --prompt 1000 --generate 200");
  CHECK(hf.out.find("through a server") == std::string::npos);
  CHECK(json::parse(run("estimate --task infer --batch 1 --format json --model llama-3-8b --device h100-sxm --engine hf").out)
            ["inference"]["served_time_to_first_token_seconds"]
                .is_null());
}

TEST_CASE("with an unlimited cache and no step overhead the simulated decode speed is the step model's") {
  Query q = infer_query("llama-3-8b", "a100-80gb-sxm");
  serve::Replica r{&q.input, serve::engine_config(Engine::kVllm, q.device->memory_bytes), {}, 0.0, true};
  const long long clients = 8, prompt = 512, output = 129;
  serve::SimResult s = serve::simulate_replica(r, fixed_traffic(prompt, output, 200), {true, static_cast<double>(clients)});
  REQUIRE(s.measured > 0);
  // Lock-step clients: every decode step holds all 8 sequences; the k-th decode step attends to prompt + k - 1
  // positions, and attention is linear in the context, so the mean step is the step at the mean context.
  serve::StepModel m(step_rates(q.input), 0.0);
  double step = m.decode_step_seconds(clients, prompt + (output - 2) / 2.0);
  CHECK(s.tpot.p50 == ::hwplan::test::approx(step).epsilon(1e-9));
  CHECK(s.tpot.p99 == ::hwplan::test::approx(step).epsilon(1e-9));
  CHECK(s.preemptions == 0);
}

TEST_CASE("Little's law holds in the simulation") {
  Query q = infer_query("llama-3-8b", "h100-sxm");
  serve::EngineConfig e = serve::engine_config(Engine::kVllm, q.device->memory_bytes);
  serve::Replica r{&q.input, e, serve::kv_capacity(q.input, e, 800), -1};
  for (double rate : {2.0, 6.0, 12.0}) {
    serve::Traffic t = fixed_traffic(600, 200, 4000, 7);
    t.prompt = serve::parse_length_dist("--prompt-dist", "uniform:100:1100");
    serve::SimResult s = serve::simulate_replica(r, t, {false, rate});
    // Window: from the 10% arrival to the 90% arrival; L = time-average of requests in the system, lambda =
    // arrivals per second in the window, W = mean time in the system of those arrivals.
    const auto& rec = s.records;
    double t0 = rec[rec.size() / 10].arrival, t1 = rec[rec.size() * 9 / 10].arrival;
    double in_system = 0, arrivals = 0, time_sum = 0;
    for (const auto& x : rec) {
      in_system += std::max(0.0, std::min(x.finish, t1) - std::max(x.arrival, t0));
      if (x.arrival >= t0 && x.arrival < t1) {
        arrivals += 1;
        time_sum += x.finish - x.arrival;
      }
    }
    double L = in_system / (t1 - t0), lambda = arrivals / (t1 - t0), W = time_sum / arrivals;
    INFO("rate " << rate << ": L " << L << ", lambda W " << lambda * W);
    CHECK(L == ::hwplan::test::approx(lambda * W).epsilon(0.03));
    CHECK(lambda == ::hwplan::test::approx(rate).epsilon(0.1));  // Poisson arrivals at the asked rate, within noise
  }
}

TEST_CASE("a full cache preempts and recomputes, and every request still finishes") {
  Query q = infer_query("llama-3-8b", "h100-sxm");
  serve::EngineConfig e = serve::engine_config(Engine::kVllm, q.device->memory_bytes);
  serve::Replica r{&q.input, e, {}, -1};
  r.kv.tokens = 16 * 400;  // room for ~4 requests of 1500 tokens
  serve::SimResult s = serve::simulate_replica(r, fixed_traffic(1000, 500, 300), {false, 20.0});
  CHECK_FALSE(s.unservable);
  CHECK(s.preemptions > 0);
  for (const auto& x : s.records) {
    CHECK(x.finish >= x.first_token);
    CHECK(x.first_token > x.arrival);
  }
  // A request larger than the cache is reported, not simulated forever.
  r.kv.tokens = 1024;
  CHECK(serve::simulate_replica(r, fixed_traffic(1000, 500, 50), {false, 1.0}).unservable);
}

TEST_CASE("reserving a request's KV when it starts never preempts, and on demand prefix caching makes a preemption cheap") {
  Query q = infer_query("llama-3-8b", "a100-80gb-sxm");
  serve::EngineConfig e = serve::engine_config(Engine::kVllm, q.device->memory_bytes, q.device->name);
  e.max_batched_tokens = 2048;  // a 12,000-token prompt is admitted chunk by chunk
  serve::Replica r{&q.input, e, {}, -1};
  r.kv.tokens = 16 * 1200;  // one 12,100-token request fits; a second one's prompt does not
  const serve::Traffic t = fixed_traffic(12000, 100, 12);
  const serve::Load burst{true, 12.0};  // all at once

  // vLLM V1: the next request's chunks fill the cache until it preempts itself, again and again.
  serve::SimResult cached = serve::simulate_replica(r, t, burst);
  CHECK(cached.preemptions > 0);
  // Without prefix caching each re-admission prefills the prompt from the start: the same preemptions, more work.
  r.engine.keep_preempted_kv = false;
  serve::SimResult uncached = serve::simulate_replica(r, t, burst);
  CHECK(uncached.preemptions > 0);
  CHECK(uncached.seconds > 1.2 * cached.seconds);
  CHECK(uncached.tpot.p50 > 1.5 * cached.tpot.p50);

  // TensorRT-LLM's GUARANTEED_NO_EVICT: a request starts only when its prompt and output fit; none is preempted,
  // one runs at a time here, and its decode is not slowed by another's prefill chunks.
  r.engine.kv_admission = serve::KvAdmission::kReserve;
  serve::SimResult reserved = serve::simulate_replica(r, t, burst);
  CHECK(reserved.preemptions == 0);
  CHECK(reserved.mean_batch == ::hwplan::test::approx(1.0).epsilon(0.01));
  CHECK(reserved.seconds < uncached.seconds);
  CHECK(reserved.tpot.p50 < cached.tpot.p50);
  for (const auto& x : reserved.records) CHECK(x.preemptions == 0);

  // SGLang: prefills first, admitted only beside an estimate of the running outputs. A burst that fills the cache
  // with prompts on demand (then retracts decodes to make room) retracts far less with the estimate.
  serve::EngineConfig sg = serve::engine_config(Engine::kSglang, q.device->memory_bytes, q.device->name);
  serve::Replica s{&q.input, sg, {}, -1};
  s.kv.tokens = 40000;
  const serve::Traffic burst_traffic = fixed_traffic(200, 400, 600);
  CHECK(s.engine.kv_admission == serve::KvAdmission::kEstimate);
  serve::SimResult estimated = serve::simulate_replica(s, burst_traffic, {true, 600.0});
  s.engine.kv_admission = serve::KvAdmission::kOnDemand;
  serve::SimResult greedy = serve::simulate_replica(s, burst_traffic, {true, 600.0});
  INFO("preemptions: estimate " << estimated.preemptions << ", on demand " << greedy.preemptions);
  CHECK(greedy.preemptions > 0);
  CHECK(estimated.preemptions * 4 < greedy.preemptions);
  // Every request ends, though a step of prefills never preempts (a chunk that does not fit waits for the decodes).
  for (const serve::SimResult* run : {&estimated, &greedy}) {
    CHECK_FALSE(run->unservable);
    for (const auto& x : run->records) CHECK(x.finish >= x.first_token);
  }
  // Long prompts in chunks against a cache that holds one and a half of them: still every request ends.
  s.kv.tokens = 6000;
  s.engine.max_batched_tokens = 1024;
  serve::SimResult tight = serve::simulate_replica(s, fixed_traffic(4000, 50, 40), {true, 8.0});
  CHECK_FALSE(tight.unservable);
  CHECK(tight.records.size() == 40);
  for (const auto& x : tight.records) CHECK(x.finish > x.first_token);
  CHECK(estimated.requests_per_second > greedy.requests_per_second);
}

TEST_CASE("prefill steps of their own hold the running decodes back: TPOT grows, TTFT shrinks") {
  Query q = infer_query("llama-3-8b", "a100-80gb-sxm");
  serve::EngineConfig e = serve::engine_config(Engine::kVllm, q.device->memory_bytes, q.device->name);
  serve::Replica r{&q.input, e, serve::kv_capacity(q.input, e, 1200), -1};
  serve::Traffic t = fixed_traffic(1000, 200, 1500, 3);
  serve::SimResult mixed = serve::simulate_replica(r, t, {false, 8.0});
  r.engine.separate_prefill = true;
  serve::SimResult separate = serve::simulate_replica(r, t, {false, 8.0});
  INFO("TPOT p50 mixed " << mixed.tpot.p50 << " separate " << separate.tpot.p50);
  CHECK(separate.tpot.p50 > 1.05 * mixed.tpot.p50);
  CHECK(separate.ttft.p50 < mixed.ttft.p50);
  // Every request is still served, in the same number of output tokens.
  double out_mixed = 0, out_separate = 0;
  for (const auto& x : mixed.records) out_mixed += static_cast<double>(x.output_tokens);
  for (const auto& x : separate.records) out_separate += static_cast<double>(x.output_tokens);
  CHECK(out_mixed == out_separate);
}

TEST_CASE("multi-step scheduling pays the CPU overhead once a round and makes new requests wait for the round's end") {
  Query q = infer_query("llama-3-8b", "a100-80gb-sxm");
  serve::EngineConfig e = serve::engine_config(Engine::kVllm, q.device->memory_bytes, q.device->name);
  serve::Replica r{&q.input, e, serve::kv_capacity(q.input, e, 1200), 0.004};  // 4 ms of CPU work per step
  const serve::Traffic t = fixed_traffic(500, 300, 600, 5);
  serve::SimResult one = serve::simulate_replica(r, t, {false, 3.0});
  r.engine.scheduler_steps = 10;
  serve::SimResult ten = serve::simulate_replica(r, t, {false, 3.0});
  INFO("TTFT p50 " << one.ttft.p50 << " -> " << ten.ttft.p50 << ", TPOT p50 " << one.tpot.p50 << " -> " << ten.tpot.p50);
  // A request arriving mid-round waits for the rest of it: about half a round of decode steps on average.
  CHECK(ten.ttft.p50 > one.ttft.p50 + 2 * ten.tpot.p50);
  // The overhead shared by ten steps: decoding is faster per token.
  CHECK(ten.tpot.p50 < one.tpot.p50);
  for (const auto& x : ten.records) CHECK(x.finish > x.first_token);
}

TEST_CASE("the batch never exceeds the engine's cap of sequences") {
  Query q = infer_query("llama-3-8b", "h100-sxm");
  serve::EngineConfig e = serve::engine_config(Engine::kVllm, q.device->memory_bytes);
  e.max_sequences = 4;
  serve::Replica r{&q.input, e, serve::kv_capacity(q.input, e, 700), -1};
  serve::SimResult s = serve::simulate_replica(r, fixed_traffic(500, 200, 300), {false, 50.0});
  CHECK(s.mean_batch <= 4.0 + 1e-9);
  CHECK(s.sequences_blocked_fraction > 0.5);
}

TEST_CASE("the same seed gives the same simulation, another seed another") {
  Query q = infer_query("llama-3-8b", "l40s");
  serve::EngineConfig e = serve::engine_config(Engine::kVllm, q.device->memory_bytes);
  serve::Replica r{&q.input, e, serve::kv_capacity(q.input, e, 700), -1};
  serve::Traffic t = fixed_traffic(500, 200, 500, 42);
  t.arrival = serve::ArrivalKind::kGamma;
  t.burstiness_cv = 2;
  t.output = serve::parse_length_dist("--generate-dist", "lognormal:200:0.8");
  auto a = serve::simulate_replica(r, t, {false, 3.0});
  auto b = serve::simulate_replica(r, t, {false, 3.0});
  REQUIRE(a.records.size() == b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    CHECK(a.records[i].finish == b.records[i].finish);
    CHECK(a.records[i].output_tokens == b.records[i].output_tokens);
  }
  t.seed = 43;
  auto c = serve::simulate_replica(r, t, {false, 3.0});
  CHECK(c.e2e.p95 != a.e2e.p95);
}

TEST_CASE("a tighter target or a higher rate never needs fewer devices") {
  struct Case {
    const char* model;
    const char* device;
  };
  for (Case c : {Case{"llama-3-8b", "l40s"}, Case{"llama-3-8b", "h100-sxm"}, Case{"mistral-7b", "a100-80gb-sxm"}}) {
    std::vector<Query> qs;
    for (int tp : {1, 2, 4}) qs.push_back(infer_query(c.model, c.device, tp));
    std::vector<const EstimateInput*> layouts;
    for (auto& q : qs) {
      q.input.model = &q.model;
      layouts.push_back(&q.input);
    }
    serve::ServeQuestion base;
    base.traffic = fixed_traffic(1000, 200, 300, 3);
    base.engine = serve::engine_config(Engine::kVllm, qs[0].device->memory_bytes);
    base.overhead_seconds = 1e-3;
    const std::vector<double> rates = {1, 4, 12, 30, 80};
    const std::vector<double> tpot = {0.1, 0.05, 0.03};  // loose to tight
    std::vector<std::vector<long long>> devices(rates.size(), std::vector<long long>(tpot.size()));
    for (size_t i = 0; i < rates.size(); ++i)
      for (size_t j = 0; j < tpot.size(); ++j) {
        serve::ServeQuestion q = base;
        q.load = {false, rates[i]};
        q.targets.tpot_p95 = tpot[j];
        q.targets.ttft_p95 = 2.0;
        serve::ServeAnswer a = serve::plan_serving(layouts, q);
        // No layout: infinitely many devices.
        devices[i][j] = a.chosen ? a.layouts[*a.chosen].devices : 1'000'000;
      }
    for (size_t i = 0; i < rates.size(); ++i)
      for (size_t j = 0; j < tpot.size(); ++j) {
        INFO(c.model << " on " << c.device << ": rate " << rates[i] << ", tpot " << tpot[j]);
        if (i > 0) CHECK(devices[i][j] >= devices[i - 1][j]);
        if (j > 0) CHECK(devices[i][j] >= devices[i][j - 1]);
      }
    INFO(c.model << " on " << c.device);
    CHECK(devices.back().front() > devices.front().front());  // the load matters at all
  }
}

TEST_CASE("traces: Azure and vLLM column names, datetimes, and rows sorted by arrival") {
  auto rows = io::parse_trace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-11-16 18:15:47.5,100,10\n"
      "2023-11-16 18:15:46.0,374,44\n"
      "2023-11-16 18:16:46.0,2000,300\n",
      "azure.csv");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].prompt_tokens == 374);
  CHECK(rows[1].arrival_seconds == ::hwplan::test::approx(1.5));
  CHECK(rows[2].arrival_seconds == ::hwplan::test::approx(60.0));
  auto jl = io::parse_trace("{\"arrival_time\": 0.5, \"input_len\": 12, \"output_len\": 3}\n"
                            "{\"arrival_time\": 0.0, \"prompt_tokens\": 7, \"output_tokens\": 9}\n",
                            "bench.jsonl");
  REQUIRE(jl.size() == 2);
  CHECK(jl[0].prompt_tokens == 7);
  long long failed = -1;
  auto result = io::parse_trace("{\"input_lens\": [10, 20, 30], \"output_lens\": [5, 0, 7], \"ttfts\": [0.1, 0.2, 0.3]}", "result.json", &failed);
  REQUIRE(result.size() == 2);  // the failed request (output 0) is skipped, and counted
  CHECK(failed == 1);
  CHECK_FALSE(result[0].has_arrival);
  CHECK_THROWS_AS(io::parse_trace("a,b\n1,2\n", "x.csv"), InputError);
}

TEST_CASE("serve --format json has the documented contract") {
  auto r = run_hwplan("serve --model llama-3-8b --device h100-sxm --rate 8 --prompt 1000 --generate 200 "
                      "--ttft-p95 1 --tpot-p95 0.05 --requests 400 --format json");
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["schema_version"] == 1);
  for (const char* k : {"devices_total", "replicas", "max_rate_per_replica", "meets_targets", "binding_constraint"})
    CHECK(j["serve"].contains(k));
  CHECK(j["serve"]["layout"].contains("tp"));
  CHECK(j["serve"]["layout"].contains("pp"));
  for (const char* m : {"ttft_seconds", "tpot_seconds", "e2e_seconds"})
    for (const char* p : {"p50", "p95", "p99"}) CHECK(j["latency"][m][p].is_number());
  // What the latencies contain is said with them: the server's fixed handling and the engine's time, not the
  // server's queue under load.
  CHECK(j["latency"]["scope"].get<std::string>().find("handling of the request") != std::string::npos);
  CHECK(j["engine"]["request_overhead_seconds"].get<double>() == ::hwplan::test::approx(0.010));
  for (const char* k : {"requests_per_second", "output_tokens_per_second", "total_tokens_per_second"})
    CHECK(j["throughput"][k].is_number());
  CHECK(j["kv_cache"]["capacity_tokens"].get<long long>() > 100000);
  CHECK(j["kv_cache"]["max_sequences"].get<long long>() > 0);
  CHECK(j["cost"]["usd_per_million_output_tokens"].is_number());  // the H100 has a cloud price
  CHECK(j["energy"]["kwh_per_million_output_tokens"].get<double>() > 0);
  CHECK(j["simulation"]["requests"] == 400);
  CHECK(j["simulation"]["seconds"].get<double>() > 0);
  CHECK(j["serve"]["meets_targets"] == true);
  CHECK(j["serve"]["devices_total"].get<long long>() >= 1);
  CHECK(j["serve"]["binding_constraint"].get<std::string>().size() > 10);
  // The per-replica maximum times the replicas covers the asked rate.
  CHECK(j["serve"]["max_rate_per_replica"].get<double>() * j["serve"]["replicas"].get<double>() >= 8.0);

  // A closed loop without targets describes the given count at that load.
  auto c = run_hwplan("serve --model llama-3-8b --device h100-sxm --count 2 --concurrency 16 --requests 200 --format json");
  REQUIRE(c.exit_code == 0);
  json cj = json::parse(c.out);
  CHECK(cj["serve"]["devices_total"] == 2);
  CHECK(cj["serve"]["max_rate_per_replica"].is_null());
}

TEST_CASE("serve output is identical with the same seed on 1 or 2 threads") {
  const std::string args = "serve --model llama-3-8b --device l40s --rate 3 --prompt-dist uniform:200:1800 --generate 150 "
                           "--tpot-p95 0.06 --ttft-p95 1.5 --requests 300 --seed 9 --format json";
  auto one = run_hwplan(args + " --threads 1");
  auto two = run_hwplan(args + " --threads 2");
  REQUIRE(one.exit_code == 0);
  CHECK(one.out == two.out);
  auto other = run_hwplan("serve --model llama-3-8b --device l40s --rate 3 --prompt-dist uniform:200:1800 --generate 150 "
                          "--tpot-p95 0.06 --ttft-p95 1.5 --requests 300 --seed 10 --format json");
  CHECK(other.out != one.out);
}

TEST_CASE("serve: bad trace rows and bad flags exit 2 naming file:line") {
  std::string csv = temp_file("bad.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.0,374,44\n"
                                         "2023-11-16 18:15:47.0,abc,12\n");
  auto r = run_hwplan("serve --model llama-3-8b --device h100-sxm --trace " + csv);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(csv + ":3:") != std::string::npos);
  CHECK(r.err.find("ContextTokens") != std::string::npos);

  std::string jsonl = temp_file("bad.jsonl", "{\"timestamp\": 0, \"input_len\": 10, \"output_len\": 5}\n"
                                             "{\"timestamp\": 1, \"input_len\": 10}\n");
  auto j = run_hwplan("serve --model llama-3-8b --device h100-sxm --trace " + jsonl);
  CHECK(j.exit_code == 2);
  CHECK(j.err.find(jsonl + ":2:") != std::string::npos);

  std::string time = temp_file("badtime.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.0,374,44\nyesterday,10,10\n");
  auto t = run_hwplan("serve --model llama-3-8b --device h100-sxm --trace " + time);
  CHECK(t.exit_code == 2);
  CHECK(t.err.find(time + ":3:") != std::string::npos);

  std::string good = temp_file("good.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.0,374,44\n"
                                           "2023-11-16 18:15:46.5,1200,100\n2023-11-16 18:15:47.2,80,300\n");
  auto g = run_hwplan("serve --model llama-3-8b --device h100-sxm --trace " + good + " --requests 60 --format json");
  CHECK(g.exit_code == 0);

  // A vLLM benchmark result's failed requests (output 0) are left out, and the output says how many.
  std::string result = temp_file("result.json", R"({"input_lens": [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
                                                    "output_lens": [100, 100, 0, 100, 100, 100, 100, 100, 100, 100, 100, 0]})");
  auto v = run_hwplan("serve --model llama-3-8b --device h100-sxm --rate 2 --trace " + result + " --format json");
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("2 of " + result + "'s 12 requests failed in the benchmark") != std::string::npos);
  std::filesystem::remove(result);

  CHECK(run_hwplan("serve --model llama-3-8b --device h100-sxm").exit_code == 2);  // no traffic
  CHECK(run_hwplan("serve --model llama-3-8b --device h100-sxm --rate 5 --concurrency 4").exit_code == 2);
  CHECK(run_hwplan("serve --model llama-3-8b --device h100-sxm --rate 5 --prompt-dist normal:5:1").exit_code == 2);
  CHECK(run_hwplan("serve --model llama-3-8b --device h100-sxm --rate 5 --engine hf").exit_code == 2);
  CHECK(run_hwplan("serve --model llama-3-8b --device h100-sxm --rate -1").exit_code == 2);
  for (const auto& f : {csv, jsonl, time, good}) std::filesystem::remove(f);
}

TEST_CASE("traces: quoted fields, extra cells, impossible dates, time zones and a mistyped year") {
  const std::string head = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  // Ten good rows (a simulation needs at least ten), one second apart from t = 100 s.
  std::string ten;
  for (int i = 0; i < 10; ++i) ten += std::to_string(100 + i) + ",100,50\n";
  auto serve = [](const std::string& file) {
    return run_hwplan("serve --model llama-3-8b --device h100-sxm --requests 20 --format json --trace " + file);
  };
  // A quoted field keeps its comma (RFC 4180): "1,5" is one cell, not a time and a prompt of 5.
  std::string quoted = temp_file("quoted.csv", head + ten + "\"1,5\",100,50\n");
  auto q = serve(quoted);
  CHECK(q.exit_code == 2);
  CHECK(q.err.find(quoted + ":12:1: key 'TIMESTAMP': '1,5' is not a time") != std::string::npos);
  std::string quoted_good = temp_file("quoted_good.csv", head + ten + "\"110\",\"1,00\",50\n");
  CHECK(serve(quoted_good).exit_code == 2);  // "1,00" is one cell: not a whole number
  std::string doubled = temp_file("doubled.csv", head + ten + "\"110\",\"1200\",50\n");
  const auto d = serve(doubled);
  REQUIRE(d.exit_code == 0);
  CHECK(json::parse(d.out)["traffic"]["mean_prompt_tokens"].get<double>() == doctest::Approx((1000.0 + 1200) / 11));
  // More cells than the header: which value is whose is not known.
  std::string extra = temp_file("extra.csv", head + ten + "111,100,50,5\n");
  auto e = serve(extra);
  CHECK(e.exit_code == 2);
  CHECK(e.err.find(extra + ":12:") != std::string::npos);
  // February 30 does not exist; nor does a negative time.
  std::string feb30 = temp_file("feb30.csv", head + "2023-02-30 18:15:46,100,50\n");
  CHECK(serve(feb30).exit_code == 2);
  std::string negative = temp_file("neg.csv", head + "-5,100,50\n" + ten);
  CHECK(serve(negative).exit_code == 2);
  // Offsets put rows of different zones on one clock: 00:00:1x+05:00 is 19:00:1x UTC the day before, as is
  // 14:00:1x-05:00. Without them the rows would span ten hours, not 33 seconds.
  std::string rows;
  for (int i = 0; i < 4; ++i)
    rows += fmt::format("2024-05-10 00:00:1{0}+05:00,100,50\n2024-05-09 19:00:2{0}Z,100,50\n2024-05-09 14:00:3{0}-05:00,100,50\n", i);
  std::string zones = temp_file("zones.csv", head + rows);
  const auto z = serve(zones);
  REQUIRE(z.exit_code == 0);
  CHECK(json::parse(z.out)["traffic"]["requests_per_second"].get<double>() == doctest::Approx(11.0 / 23));
  // A year mistyped in one row spans years: refused, naming that row's line.
  std::string typo = temp_file("typo.csv", head + ten + "999999999,100,50\n");
  auto t = serve(typo);
  CHECK(t.exit_code == 2);
  CHECK(t.err.find(typo + ":12:1: key 'TIMESTAMP': the arrivals span") != std::string::npos);
  // Mistyped early (a year too small), the row named is still the one apart from the rest, not the latest.
  std::string later;
  for (int i = 0; i < 10; ++i) later += "2024-05-10 00:00:1" + std::to_string(i) + ",100,50\n";
  std::string early = temp_file("early.csv", head + "2014-05-10 00:00:10,100,50\n" + later);
  auto te = serve(early);
  CHECK(te.exit_code == 2);
  CHECK(te.err.find(early + ":2:1: key 'TIMESTAMP'") != std::string::npos);
  std::filesystem::remove(early);
  // A length file from a spreadsheet may start with a byte-order mark.
  std::string lengths = temp_file("lengths.txt", "\xEF\xBB\xBF" "100\n300\n");
  CHECK(run_hwplan("serve --model llama-3-8b --device h100-sxm --rate 2 --requests 20 --prompt-dist file:" + lengths)
            .exit_code == 0);
  for (const auto& f : {quoted, quoted_good, doubled, extra, feb30, negative, zones, typo, lengths}) std::filesystem::remove(f);
}

TEST_CASE("serve exits 3 when no layout meets the targets") {
  // A 1 ms time per output token is beyond any single H100 layout for a 70B model.
  auto r = run_hwplan("serve --model llama-3-70b --device h100-sxm --rate 1 --tpot-p95 0.001 --requests 100");
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("No layout") != std::string::npos);
}

TEST_CASE("serve against published serving measurements (data/measurements/serving.yaml)") {
  const std::string file = test::source_path("data/measurements/serving.yaml");
  io::ServingSet set = io::load_serving_measurements(file);
  REQUIRE(set.cases.size() >= 5);
  // The rows `hwplan validate --measurements data/measurements/serving.yaml` prints.
  auto rows = validate::validate_serving_file(test::registry(), file);
  std::vector<double> throughput_errors, low_load_ttft_missing, stated_version_ttft_missing;
  std::map<std::string, const io::ServingCase*> cases;
  for (const auto& c : set.cases) cases[c.name] = &c;
  std::size_t measured = 0;
  for (const auto& c : set.cases) measured += c.measured.size();
  CHECK(rows.size() == measured);
  std::string table = "case                              metric                      measured   hwplan   error\n";
  for (const auto& r : rows) {
    table += fmt::format("{:<33} {:<27} {:>8.4g} {:>8.4g} {:>+6.0f}%\n", r.name, r.quantity, r.measured, r.predicted, 100 * r.error);
    CHECK(r.regime == (r.quantity.rfind("ttft", 0) == 0 ? "serving-ttft" : "serving"));
    const io::ServingCase& c = *cases.at(r.name);
    if (r.quantity == "output_tokens_per_second" || r.quantity == "tpot_median_seconds") throughput_errors.push_back(std::fabs(r.error));
    // The RTX A6000 rows' harness reaches the server through kubectl port-forward and opens a new connection per
    // request from a thread pool: latency the server never sees (printed above, not bounded here).
    const bool tunnelled = c.note.find("port-forward") != std::string::npos;
    if (r.quantity == "ttft_median_seconds" && c.concurrency && *c.concurrency <= 8 && !tunnelled) {
      low_load_ttft_missing.push_back(r.measured - r.predicted);
      if (c.note.find("vLLM v0.23") != std::string::npos) stated_version_ttft_missing.push_back(r.measured - r.predicted);
    }
  }
  MESSAGE(table);
  // Output-token throughput and TPOT at fixed concurrency: the issue's bar is a median error <= 20%.
  CHECK(serve::percentile(throughput_errors, 0.5) <= 0.20);
  CHECK(serve::percentile(throughput_errors, 1.0) <= 0.30);
  // TTFT while the engine is lightly loaded (concurrency <= 8): the server's fixed request handling (10 ms, vLLM's
  // client TTFT less its own) and the engine's time (the wait for the steps already formed, the prefill). On the L4
  // rows, whose vLLM release is stated (0.23, async scheduling on), within 15 ms: what is left is the host's (a
  // 4-vCPU cloud node). The RTX 4090 rows (release not given) measured ~30 ms less than the overlapped scheduler's
  // extra step and the handling predict, as an engine without it would: within 35 ms. Under heavy load the measured
  // TTFT grows far faster, printed above and in the README.
  REQUIRE_FALSE(stated_version_ttft_missing.empty());
  for (double missing : stated_version_ttft_missing) CHECK(std::fabs(missing) <= 0.015);
  for (double missing : low_load_ttft_missing) CHECK(std::fabs(missing) <= 0.035);
  // The command line reads the same file by its `kind: serving` and prints the same rows with their regimes.
  auto r = run_hwplan("validate --measurements " + file + " --format json");
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  REQUIRE(j["cases"].size() == rows.size());
  CHECK(j["cases"][0]["predicted"].get<double>() == ::hwplan::test::approx(rows[0].predicted));
}

TEST_CASE("serve against the second public set (data/measurements/serving-public.yaml): held to its figures") {
  // Sourced after the simulator was built; its first comparison was off by a median 29.1% (README). The schedulers'
  // admission and preemption rules, MoE decode as a grouped GEMM, vLLM's cache accounting and multi-step scheduling
  // took it to 13.7%, and the Qwen3-32B "H100" page taken as the H100 PCIe its decode steps show to 10.3%. The bounds
  // are a little above the figures measured when they were set, so that a change that
  // loses them shows here; the bursts of a thousand short requests (the server's front end, not modelled) are not
  // bounded.
  const std::string file = test::source_path("data/measurements/serving-public.yaml");
  auto rows = validate::validate_serving_file(test::registry(), file);
  CHECK(rows.size() == 189);
  std::vector<double> all, offline, fixed_load_tpot, fixed_load_throughput;
  for (const auto& r : rows) {
    const double e = std::fabs(r.error);
    all.push_back(e);
    const bool burst = r.name.find("burst") != std::string::npos, batch = r.name.find("offline") != std::string::npos;
    if (batch) offline.push_back(e);
    if (!burst && !batch && r.quantity == "tpot_median_seconds") fixed_load_tpot.push_back(e);
    if (!burst && !batch && r.quantity == "output_tokens_per_second") fixed_load_throughput.push_back(e);
  }
  MESSAGE("serving-public: median |error| " << 100 * serve::percentile(all, 0.5) << "%, offline throughput "
                                            << 100 * serve::percentile(offline, 0.5) << "%, TPOT at fixed load "
                                            << 100 * serve::percentile(fixed_load_tpot, 0.5) << "%");
  // 12.3% after the engines' one-kernel all-reduce was first priced at NCCL's bandwidth (Stack::custom_allreduce);
  // 11.1% since its slower data path is priced (custom_allreduce_bandwidth_share): the tensor-parallel rows
  // (Llama 3.1 70B on 4 H100, Qwen3-235B on 8 A100) were fast.
  CHECK(serve::percentile(all, 0.5) <= 0.12);
  CHECK(serve::percentile(offline, 0.5) <= 0.06);                   // 3.3%
  CHECK(serve::percentile(fixed_load_tpot, 0.5) <= 0.10);           // 7.9%
  CHECK(serve::percentile(fixed_load_throughput, 0.5) <= 0.15);     // the issue's bar for throughput is 15%
}

TEST_CASE("serve against public MoE serving runs (data/measurements/serving-moe.yaml): held to its figure") {
  // gpt-oss-120b on H100 / A100 and DeepSeek-R1 on 8 H200 / 8 MI300X under vLLM 0.7-0.11, SGLang 0.4-0.5 and
  // TensorRT-LLM 0.17, compared as found: median 75.7%, nearly all predicted too fast (README). Bounded where it
  // stands so that a change that loses ground shows here; the concurrency-4 rows' TPOT is the part the estimators
  // should reach first.
  const std::string file = test::source_path("data/measurements/serving-moe.yaml");
  auto rows = validate::validate_serving_file(test::registry(), file);
  CHECK(rows.size() == 150);
  std::vector<double> all, low_load_tpot;
  for (const auto& r : rows) {
    all.push_back(std::fabs(r.error));
    if (r.name.ends_with("-c4") && r.quantity == "tpot_median_seconds") low_load_tpot.push_back(r.error);
  }
  MESSAGE("serving-moe: median |error| " << 100 * serve::percentile(all, 0.5) << "%");
  CHECK(serve::percentile(all, 0.5) <= 0.78);  // 75.1%
  // Predicted too fast at low load: every concurrency-4 TPOT below the measured one (the kernels a fused engine's MoE
  // and MLA layers issue moved them 5-10 points up, none past it).
  REQUIRE(!low_load_tpot.empty());
  for (double e : low_load_tpot) CHECK(e < 0);
}

TEST_CASE("--warmup sets the share of requests left out of the statistics, and benchmark rows keep every request") {
  // A closed loop starts with every client sending at once: that burst queues for prefill. vllm bench serve reports
  // over every request, so its TTFT p99 holds the burst; the default warm-up leaves it out.
  const std::string base = "serve --model mistral-7b --device rtx-4090 --engine vllm --prompt 256 --generate-dist uniform:72:128 "
                           "--requests 300 --concurrency 32 --format json";
  auto all = json::parse(run_hwplan(base + " --warmup 0").out);
  auto def = json::parse(run_hwplan(base).out);
  CHECK(all["simulation"]["measured_requests"].get<long long>() == 300);
  CHECK(all["simulation"]["warmup_fraction"].get<double>() == 0);
  // The default warm-up: 10% of the requests or the first round of 32 clients if more, and the last round (each
  // client's final request, under a falling load): 300 - 32 - 32.
  CHECK(def["simulation"]["measured_requests"].get<long long>() == 236);
  CHECK(all["latency"]["ttft_seconds"]["p99"].get<double>() > 2 * def["latency"]["ttft_seconds"]["p99"].get<double>());
  // The same simulation: only the statistics differ.
  CHECK(all["simulation"]["steps"].get<long long>() == def["simulation"]["steps"].get<long long>());
  auto bad = run_hwplan(base + " --warmup 1");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--warmup") != std::string::npos);
  // Serving measurement cases default to 0 and take a `warmup` key.
  io::ServingSet set = io::parse_serving_measurements(
      "kind: serving\nsource: s\ncases:\n"
      "  - {name: a, model: mistral-7b, device: rtx-4090, engine: vllm, prompt: 256, generate: 100, concurrency: 4, measured: {ttft_median_seconds: 0.05}, source: s}\n"
      "  - {name: b, model: mistral-7b, device: rtx-4090, engine: vllm, prompt: 256, generate: 100, concurrency: 4, warmup: 0.2, measured: {ttft_median_seconds: 0.05}, source: s}\n",
      "t.yaml");
  CHECK(set.cases[0].warmup == 0);
  CHECK(set.cases[1].warmup == ::hwplan::test::approx(0.2));
  CHECK_THROWS_AS(io::parse_serving_measurements(
                      "kind: serving\nsource: s\ncases:\n"
                      "  - {name: a, model: m, device: d, engine: vllm, prompt: 1, generate: 1, concurrency: 1, warmup: 2, measured: {ttft_median_seconds: 1}, source: s}\n",
                      "t.yaml"),
                  InputError);
}

TEST_CASE("throughput is the work done in the run's window: a warm-up left out does not dilute it") {
  // A closed loop kept saturated delivers the same throughput whatever the share left out and however many more
  // clients than the batch holds (the warm-up requests' service used to sit in the denominator, not the numerator).
  const std::string base = "serve --model llama-3-8b --device rtx-4090 --engine llamacpp --weights int4 --prompt 1000 --generate 200 "
                           "--requests 300 --format json";
  auto rate = [&](const std::string& extra) {
    return json::parse(run_hwplan(base + " " + extra).out)["throughput"]["output_tokens_per_second"].get<double>();
  };
  const double all = rate("--concurrency 32 --warmup 0");
  CHECK(rate("--concurrency 32") == ::hwplan::test::approx(all).epsilon(0.02));
  CHECK(rate("--concurrency 128") == ::hwplan::test::approx(all).epsilon(0.02));
  CHECK(rate("--concurrency 128 --warmup 0.5") == ::hwplan::test::approx(all).epsilon(0.03));
  // An open loop kept up with, in the steady state, is served as it arrives: its throughput is the load.
  auto steady = json::parse(run_hwplan("serve --model llama-3-8b --device h100-sxm --engine vllm --rate 10 --prompt 1000 "
                                       "--generate 200 --format json").out);
  CHECK(steady["serve"]["sustainable"] == true);
  CHECK(steady["throughput"]["requests_per_second"].get<double>() == ::hwplan::test::approx(10));
  CHECK(steady["throughput"]["output_tokens_per_second"].get<double>() == ::hwplan::test::approx(2000));
  CHECK(steady["throughput"]["total_tokens_per_second"].get<double>() == ::hwplan::test::approx(12000));
  // A full batch of a large-batch engine (vLLM on an A100: 256 sequences) saturates at the same rate whatever the run
  // the user asked for: the saturation run leaves out its own first round.
  auto saturated = [](const std::string& extra) {
    return json::parse(run_hwplan("serve --model llama-3-8b --device a100-80gb-sxm --engine vllm --rate 50 --prompt 1000 --generate 200 "
                                  "--format json " + extra).out)["serve"]["saturated_rate_per_replica"].get<double>();
  };
  const double five_thousand = saturated("--requests 5000");
  CHECK(saturated("--requests 500") == ::hwplan::test::approx(five_thousand).epsilon(0.03));
  CHECK(saturated("--requests 500 --warmup 0") == ::hwplan::test::approx(five_thousand).epsilon(0.03));
  CHECK(saturated("--requests 1000") == ::hwplan::test::approx(five_thousand).epsilon(0.03));
  // The capacity search no longer depends on the run's length: the same devices at 2,000 and 5,000 requests.
  const std::string search = "serve --model llama-3-8b --device h100-sxm --engine vllm --rate 24 --prompt 1000 --generate 200 "
                             "--ttft-p95 5 --tpot-p95 0.2 --format json";
  auto short_run = json::parse(run_hwplan(search).out), long_run = json::parse(run_hwplan(search + " --requests 5000").out);
  CHECK(short_run["serve"]["devices_total"] == long_run["serve"]["devices_total"]);
  CHECK(short_run["serve"]["max_rate_per_replica"].get<double>() ==
        ::hwplan::test::approx(long_run["serve"]["max_rate_per_replica"].get<double>()).epsilon(0.05));
}

TEST_CASE("an open loop the replicas cannot keep up with is overloaded, not met: serve says so and recommend adds replicas") {
  // Without targets, serve describes --count devices at the load: 40 requests/s of 1,000 / 200 tokens is more than
  // one H100 completes saturated (about 25), so its queue grows without bound however the percentiles of a finite
  // run look.
  auto over = run_hwplan("serve --model llama-3-8b --device h100-sxm --engine vllm --rate 40 --prompt 1000 --generate 200 --format json");
  CHECK(over.exit_code == 3);
  auto j = json::parse(over.out);
  CHECK(j["serve"]["sustainable"] == false);
  CHECK(j["serve"]["meets_targets"] == false);
  const double saturated = j["serve"]["saturated_rate_per_replica"].get<double>();
  CHECK(saturated < 40);
  CHECK(saturated > 15);
  auto text = run_hwplan("serve --model llama-3-8b --device h100-sxm --engine vllm --rate 40 --prompt 1000 --generate 200");
  CHECK(text.out.find("OVERLOADED") != std::string::npos);
  CHECK(text.out.find("2 replica(s) would keep up") != std::string::npos);
  // Two devices keep up.
  auto two = run_hwplan("serve --model llama-3-8b --device h100-sxm --engine vllm --rate 40 --prompt 1000 --generate 200 --count 2 "
                        "--format json");
  CHECK(two.exit_code == 0);
  CHECK(json::parse(two.out)["serve"]["sustainable"] == true);
  // recommend without targets or --count ranks each device at the replicas that keep up with the rate.
  auto rec = json::parse(run_hwplan("recommend --task serve --model llama-3.2-1b --rate 50 --prompt 300 --generate 100 --engine trtllm "
                                    "--weights int4 --requests 300 --devices jetson-orin-nano-8gb,h100-sxm --format json").out);
  REQUIRE(rec["candidates"].size() == 2);
  for (const auto& c : rec["candidates"]) {
    // Without targets the capacity is the rate a replica saturates at, named as serve names it.
    CHECK(c["max_rate_per_replica"].is_null());
    const double per_replica = c["saturated_rate_per_replica"].get<double>();
    CHECK(per_replica * c["replicas"].get<double>() >= 50);
    CHECK(per_replica * (c["replicas"].get<double>() - 1) < 50);
    if (c["device"] == "jetson-orin-nano-8gb") CHECK(c["devices_total"].get<long long>() > 1);
  }
}

TEST_CASE("serve: the engine's memory fraction sizes the cache, a --headroom given caps it, and estimate quotes what serve runs") {
  const std::string base = "serve --model llama-3-8b --device h100-sxm --engine vllm --rate 5 --requests 300 --format json";
  auto tokens = [&](const std::string& extra) {
    return json::parse(run_hwplan(base + " " + extra).out)["kv_cache"]["capacity_tokens"].get<long long>();
  };
  const long long engine_own = tokens("");
  CHECK(tokens("--headroom 0") == engine_own);      // vLLM's 0.90 already leaves 10% free
  CHECK(tokens("--headroom 0.05") == engine_own);
  CHECK(tokens("--headroom 0.2") < engine_own);    // keeping 20% free takes from the cache
  auto bad = run_hwplan(base + " --headroom 0.99");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--headroom") != std::string::npos);
  // Llama 3 70B in bf16 on one H200 under TensorRT-LLM: estimate keeps 5% free and says it does not fit, the engine
  // takes 90% of what the weights leave and runs it; estimate's served TTFT is serve's lone request.
  const std::string work = "--model llama-3-70b --device h200-sxm --weights bf16 --engine trtllm";
  auto est = json::parse(run_hwplan("estimate --task infer --format json " + work).out);
  auto srv = json::parse(run_hwplan("serve --concurrency 1 --requests 20 --format json " + work).out);
  CHECK(est["memory"]["fits"] == false);
  REQUIRE(est["inference"]["served_time_to_first_token_seconds"].is_number());
  CHECK(srv["latency"]["ttft_seconds"]["p50"].get<double>() ==
        ::hwplan::test::approx(est["inference"]["served_time_to_first_token_seconds"].get<double>()).epsilon(1e-9));
}

TEST_CASE("standalone devices: several serve as independent inference replicas in every command, never split a model") {
  // serve and recommend --task serve price fleets of Macs or Jetsons as replicas; tco and estimate take the same fleet.
  auto tco = run_hwplan("tco --model llama-3-8b --device apple-m3-ultra-gpu --count 2 --task infer --format json");
  CHECK(tco.exit_code == 0);
  auto est = json::parse(run_hwplan("estimate --model llama-3-8b --device apple-m3-ultra-gpu --count 3 --task infer --format json").out);
  CHECK(est["plan"]["dp"] == 3);
  CHECK(est["plan"]["tp"] == 1);
  // Training would need gradients to cross a link the device has not; a split layout too.
  for (const std::string& bad : {std::string("--count 2"), std::string("--count 2 --task infer --tp 2")}) {
    auto r = run_hwplan("estimate --model llama-3-8b --device apple-m3-ultra-gpu " + bad);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--task infer --dp 2") != std::string::npos);
  }
  // recommend --task infer ranks the same fleet; serve refuses a split replica, naming --tp.
  auto rec = json::parse(run_hwplan("recommend --model llama-3-8b --task infer --count 4 --devices apple-m4-max-gpu --format json").out);
  REQUIRE_FALSE(rec["candidates"].empty());
  auto split = run_hwplan("serve --model llama-3-8b --device apple-m4-max-gpu --rate 1 --tp 2 --count 2");
  CHECK(split.exit_code == 2);
  CHECK(split.err.find("key '--tp'") != std::string::npos);
}

TEST_CASE("serve: what was not simulated or does not exist is null, and a long prompt without chunked prefill does not wait") {
  // Llama 3 70B in bf16 does not fit an RTX 4090: nothing is simulated, so no latency, throughput or power is 0.
  auto none = run_hwplan("serve --model llama-3-70b --device rtx-4090 --rate 1 --requests 50 --format json");
  CHECK(none.exit_code == 3);
  auto j = json::parse(none.out);
  CHECK(j["latency"]["ttft_seconds"]["p50"].is_null());
  CHECK(j["throughput"]["output_tokens_per_second"].is_null());
  CHECK(j["energy"]["power_fraction_of_tdp"].is_null());
  // One-token replies have no time per output token.
  auto one = json::parse(run_hwplan("serve --model llama-3-8b --device h100-sxm --rate 2 --generate 1 --requests 50 --format json").out);
  CHECK(one["latency"]["tpot_seconds"]["p95"].is_null());
  CHECK(one["latency"]["ttft_seconds"]["p95"].is_number());
  // A request longer than the cache (a lognormal tail): nothing simulated, nothing claimed.
  auto tail = run_hwplan("serve --model llama-3-8b --device rtx-4090 --rate 1 --prompt-dist lognormal:20000:2 --generate 300 --weights int4");
  CHECK(tail.exit_code == 3);
  CHECK(tail.out.find("CANNOT SERVE") != std::string::npos);
  CHECK(tail.out.find("Throughput:") == std::string::npos);
  auto tail_json = json::parse(run_hwplan("serve --model llama-3-8b --device rtx-4090 --rate 1 --prompt-dist lognormal:20000:2 "
                                          "--generate 300 --weights int4 --format json").out);
  CHECK(tail_json["serve"]["sustainable"].is_null());
  CHECK(tail_json["energy"]["kwh_per_million_output_tokens"].is_null());
  // Without chunked prefill a prompt longer than the step budget runs as its step's only prefill (engines start only
  // with a budget that holds their longest prompt): it does not wait for the running batch to drain.
  const std::string base = "serve --model llama-3.1-8b --device h100-sxm --engine vllm --rate 1 --prompt 10000 --generate 100 "
                           "--requests 100 --format json";
  const double chunked = json::parse(run_hwplan(base).out)["latency"]["ttft_seconds"]["p95"].get<double>();
  const double whole = json::parse(run_hwplan(base + " --chunked-prefill off").out)["latency"]["ttft_seconds"]["p95"].get<double>();
  CHECK(whole < 1.5 * chunked);
}

TEST_CASE("serve: --count must be at least one whole replica of the layout asked") {
  const std::string base = "serve --model llama-3-8b --device h100-sxm --engine vllm --rate 5 --requests 300";
  for (const std::string& bad : {std::string("--count -2"), std::string("--count 0"), std::string("--tp 2"),
                                 std::string("--count 5 --tp 2")}) {
    auto r = run_hwplan(base + " " + bad);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--count") != std::string::npos);
  }
  CHECK(run_hwplan(base + " --count 5 --tp 2").err.find("--count 4 or 6") != std::string::npos);
  CHECK(run_hwplan(base + " --count 4 --tp 2").exit_code == 0);
  // A trace too short to simulate names the trace, not a --requests nobody gave.
  const std::string two_rows = temp_file("two_rows.csv", "prompt_tokens,output_tokens\n100,50\n200,60\n");
  auto short_trace = run_hwplan("serve --model llama-3-8b --device h100-sxm --rate 2 --trace " + two_rows);
  CHECK(short_trace.exit_code == 2);
  CHECK(short_trace.err.find("key '--trace'") != std::string::npos);
  std::filesystem::remove(two_rows);
  // serve's help lists the engines it simulates; recommend's keeps every inference preset (its --task infer takes them).
  const std::string help = run_hwplan("serve --help").out;
  CHECK(help.find("Serving engine preset: vllm | sglang | trtllm | llamacpp") != std::string::npos);
  const size_t at = help.find("--engine TEXT");
  REQUIRE(at != std::string::npos);
  CHECK(help.substr(at, help.find('\n', at) - at).find("exllama") == std::string::npos);
  CHECK(run_hwplan("recommend --help").out.find("hf | vllm | sglang") != std::string::npos);
}

TEST_CASE("overlap scheduling hides the engine's per-step CPU work and costs a new request one step of TTFT") {
  // The step: without overlap the CPU work follows the GPU's; with it only the longer side counts.
  CHECK(engine_step_seconds(0.010, 0, 0.001, false) == ::hwplan::test::approx(0.011).scale(0));
  CHECK(engine_step_seconds(0.010, 0, 0.001, true) == ::hwplan::test::approx(0.010).scale(0));
  CHECK(engine_step_seconds(0.0005, 0, 0.001, true) == ::hwplan::test::approx(0.001).scale(0));  // CPU-bound: its work paces
  CHECK(engine_step_seconds(0.010, 0.012, 0.001, false) == ::hwplan::test::approx(0.013).scale(0));
  // vLLM's preset overlaps (the default since late 2025); a GPU-bound decode step is shorter by the overhead (1 ms
  // on a server's CPU, desktop_host_time_ratio of it on the RTX 4090's desktop host).
  // Output lengths spread (as in the RTX 4090 measurements) so that clients do not finish in lock step.
  const std::string base = "--model mistral-7b --device rtx-4090 --engine vllm --prompt 256 --generate-dist uniform:72:128 --requests 300 --format json";
  auto on = json::parse(run_hwplan("serve " + base + " --concurrency 4").out);
  auto off = json::parse(run_hwplan("serve " + base + " --concurrency 4 --overlap-scheduling off").out);
  const double tpot_on = on["latency"]["tpot_seconds"]["p50"].get<double>();
  const double tpot_off = off["latency"]["tpot_seconds"]["p50"].get<double>();
  CHECK(tpot_off - tpot_on == ::hwplan::test::approx(0.001 * assumptions().desktop_host_time_ratio).epsilon(0.2).scale(0));
  // A request that arrives while a step runs joins the step after next: about one decode step more TTFT.
  const double extra = on["latency"]["ttft_seconds"]["p50"].get<double>() - off["latency"]["ttft_seconds"]["p50"].get<double>();
  CHECK(extra > 0.5 * tpot_on);
  CHECK(extra < 1.5 * tpot_on);
  // One client: the request meets an idle engine, so it starts at once, and the hidden overhead only helps.
  auto on1 = json::parse(run_hwplan("serve " + base + " --concurrency 1").out);
  auto off1 = json::parse(run_hwplan("serve " + base + " --concurrency 1 --overlap-scheduling off").out);
  CHECK(on1["latency"]["ttft_seconds"]["p50"].get<double>() <= off1["latency"]["ttft_seconds"]["p50"].get<double>());
  CHECK(on1["engine"]["overlap_scheduling"].get<bool>());
  CHECK_FALSE(off1["engine"]["overlap_scheduling"].get<bool>());
}

TEST_CASE("serving measurement sets: kind serving required, one of generate or its distribution, bad rows name file and line") {
  CHECK(io::is_serving_document("kind: serving\ncases: []\n"));
  CHECK_FALSE(io::is_serving_document("source: x\ncases: []\n"));
  CHECK_FALSE(io::is_serving_document("kind: [serving\n"));
  const std::string head = "kind: serving\nsource: s\ncases:\n";
  const std::string row = "  - {name: a, model: llama-3-8b, device: h100-sxm, engine: vllm, prompt: 100, ";
  auto error_of = [](const std::string& text) {
    try {
      io::parse_serving_measurements(text, "s.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of(head + row + "generate: 10, concurrency: 1, measured: {requests_per_second: 1}, source: x}\n").empty());
  CHECK(error_of("source: s\ncases:\n" + row + "generate: 10, concurrency: 1, measured: {requests_per_second: 1}, source: x}\n")
            .find("kind") != std::string::npos);
  std::string both = error_of(head + row + "generate: 10, generate_dist: 'uniform:1:2', concurrency: 1, measured: {requests_per_second: 1}, source: x}\n");
  CHECK(both.find("s.yaml:4") != std::string::npos);
  CHECK(both.find("generate") != std::string::npos);
  CHECK(error_of(head + row + "generate: 10, concurrency: 1, rate: 2, measured: {requests_per_second: 1}, source: x}\n")
            .find("concurrency") != std::string::npos);
  // The server's settings where they differ from the preset: typed on reading, checked (naming the case's key and
  // line) when the case is resolved.
  const std::string engine_keys =
      "generate: 10, concurrency: 1, chunked_prefill: false, separate_prefill: true, preempted_kv: freed, "
      "overlap_scheduling: false, max_sequences: 40, max_batched_tokens: 8192, block_size: 128, kv_memory_fraction: 0.8, "
      "prompt_dist: 'uniform:50:150', measured: {requests_per_second: 1}, source: x}\n";
  io::ServingSet set = io::parse_serving_measurements(head + row + "kv_admission: reserve, " + engine_keys, "s.yaml");
  REQUIRE(set.cases.size() == 1);
  const io::ServingCase& c = set.cases[0];
  CHECK(c.chunked_prefill == std::optional<bool>(false));
  CHECK(c.separate_prefill == std::optional<bool>(true));
  CHECK(c.preempted_kv == std::optional<std::string>("freed"));
  CHECK(c.max_sequences == std::optional<long long>(40));
  CHECK(c.block_size == std::optional<long long>(128));
  CHECK(c.kv_admission == std::optional<std::string>("reserve"));
  CHECK(c.prompt_dist == std::optional<std::string>("uniform:50:150"));
  CHECK(error_of(head + row + "generate: 10, concurrency: 1, separate_prefill: maybe, measured: {requests_per_second: 1}, source: x}\n")
            .find("s.yaml:4") != std::string::npos);
  // Checked when the case is resolved, a bad value still names its own line (here the row's second).
  const std::string bad = temp_file("bad_admission.yaml", head + row + "\n     kv_admission: sometimes, " + engine_keys);
  auto r = run_hwplan("validate --measurements " + bad);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad_admission.yaml:5:") != std::string::npos);
  CHECK(r.err.find("cases[].kv_admission") != std::string::npos);
}

TEST_CASE("plot serve draws p95 TTFT and TPOT per device with the targets and the knee") {
  auto path = std::filesystem::temp_directory_path() / ("hwplan_serve_plot_" + std::to_string(::getpid()) + ".svg");
  auto r = run_hwplan("plot serve --model llama-3-8b --devices h100-sxm,l40s --prompt 1000 --generate 200 --rate 10 "
                      "--ttft-p95 1 --tpot-p95 0.05 --requests 300 -o " + path.string());
  REQUIRE(r.exit_code == 0);
  auto contents = [&] {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string svg = contents();
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t p = svg.find(needle); p != std::string::npos; p = svg.find(needle, p + 1)) ++n;
    return n;
  };
  CHECK(count("class=\"series\"") == 4);  // two devices x two panels
  CHECK(count("class=\"target\"") == 2);
  CHECK(count("class=\"knee\"") == 4);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  std::filesystem::remove(path);
  CHECK(run_hwplan("plot serve --model llama-3-8b --rate 5 -o /tmp/x.svg").exit_code == 2);  // no device
  // p99 targets: the panels plot the p99 the knee answers to, and draw those targets; --device adds to --devices.
  auto p99 = run_hwplan("plot serve --model llama-3-8b --device h100-sxm --devices l40s --prompt 1000 --generate 200 --rate 10 "
                        "--ttft-p99 1 --tpot-p99 0.05 --requests 300 -o " + path.string());
  REQUIRE(p99.exit_code == 0);
  const std::string tail = contents();
  CHECK(tail.find("p99 TTFT (s)") != std::string::npos);
  CHECK(tail.find("p99 TPOT (ms)") != std::string::npos);
  CHECK(tail.find("class=\"target\"") != std::string::npos);
  CHECK(tail.find("h100-sxm") != std::string::npos);
  CHECK(tail.find("l40s") != std::string::npos);
  // One-token answers have no TPOT: the TTFT panel is drawn, the TPOT panel says why it is empty.
  auto one = run_hwplan("plot serve --model llama-3-8b --devices h100-sxm,l40s --prompt 1000 --generate 1 --rate 10 "
                        "--requests 300 -o " + path.string());
  REQUIRE(one.exit_code == 0);
  const std::string first = contents();
  CHECK(first.find("class=\"series\" data-label=\"h100-sxm") != std::string::npos);
  CHECK(first.find("data-metric=\"ttft\"") != std::string::npos);
  CHECK(first.find("no TPOT: no answer has a second token") != std::string::npos);
  CHECK(first.find(">no data<") == std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("recommend --task serve ranks the devices that meet the targets by cost per million output tokens") {
  auto r = run_hwplan("recommend --model llama-3-8b --task serve --rate 20 --prompt 1000 --generate 200 --ttft-p95 1 "
                      "--tpot-p95 0.05 --vendor nvidia --class datacenter --requests 200 --format json --threads 2 --rent");
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["schema_version"] == 1);
  CHECK(j["task"] == "serve");
  CHECK(j["cost_basis"] == "rent");
  REQUIRE(j["candidates"].size() >= 2);
  double last = 0;
  for (const auto& c : j["candidates"]) {
    if (c["usd_per_million_output_tokens"].is_null()) continue;
    double usd = c["usd_per_million_output_tokens"].get<double>();
    CHECK(usd >= last);
    last = usd;
    CHECK(c["tpot_p95_seconds"].get<double>() <= 0.05);
    CHECK(c["ttft_p95_seconds"].get<double>() <= 1.0);
  }
  // The same answer as hwplan serve for the top device (same requests and seed).
  std::string top = j["candidates"][0]["device"];
  auto s = run_hwplan("serve --model llama-3-8b --device " + top + " --rate 20 --prompt 1000 --generate 200 --ttft-p95 1 "
                      "--tpot-p95 0.05 --requests 200 --format json");
  REQUIRE(s.exit_code == 0);
  json sj = json::parse(s.out);
  CHECK(sj["serve"]["devices_total"] == j["candidates"][0]["devices_total"]);
  CHECK(sj["cost"]["usd_per_million_output_tokens"].get<double>() ==
        ::hwplan::test::approx(j["candidates"][0]["usd_per_million_output_tokens"].get<double>()));
  // Serving flags on another task are an error, not ignored.
  CHECK(run_hwplan("recommend --model llama-2-7b --task lora --rate 5").exit_code == 2);
  CHECK(run_hwplan("recommend --model llama-3-8b --task serve --rate 5 --buy --rent").exit_code == 2);
  CHECK(run_hwplan("recommend --model llama-3-8b --task serve --rate 5 --own-years 0").exit_code == 2);
}

TEST_CASE("serving cost per million tokens owned: hwplan tco's owned total over the tokens of the horizon, ranked on it with --own-years") {
  const std::string flags = " --model llama-3-8b --rate 4 --prompt 500 --generate 200 --ttft-p95 1 --tpot-p95 0.05 --requests 200";
  auto three = run_hwplan("serve --device rtx-4090" + flags + " --format json");
  auto five = run_hwplan("serve --device rtx-4090" + flags + " --own-years 5 --format json");
  REQUIRE(three.exit_code == 0);
  REQUIRE(five.exit_code == 0);
  json a = json::parse(three.out), b = json::parse(five.out);
  CHECK(a["cost"]["own_years"] == 3);
  const double own3 = a["cost"]["own_usd_per_million_output_tokens"].get<double>();
  const double own5 = b["cost"]["own_usd_per_million_output_tokens"].get<double>();
  // The purchase spreads over more tokens in five years than in three; running costs per token stay the same.
  CHECK(own5 < own3);
  CHECK(own3 > 0);
  // The owned fleet: the tco command's total for the same devices around the clock, over the tokens served.
  const long long devices = a["serve"]["devices_total"].get<long long>();
  auto t = run_hwplan("tco --model llama-3-8b --device rtx-4090 --task infer --count " + std::to_string(devices) +
                      " --utilization 1 --format json");
  REQUIRE(t.exit_code == 0);
  json tj = json::parse(t.out);
  const double capex = tj["tco"]["own"]["capex_usd"].get<double>();
  const double tokens = a["throughput"]["output_tokens_per_second"].get<double>() * 3600 * 8760 * 3;
  CHECK(own3 * tokens / 1e6 > capex * 0.3);  // at least the part of the purchase not recovered by resale
  // The same owned total as tco's: both draw 60% of TDP while serving.
  CHECK(tj["inputs"]["device_power_fraction"].get<double>() == ::hwplan::test::approx(0.6));
  CHECK(own3 * tokens / 1e6 == ::hwplan::test::approx(tj["tco"]["own"]["total_usd"].get<double>()).epsilon(1e-6));
  // A device without a purchase price has no owned cost (and says null, not 0).
  auto priced = run_hwplan("recommend --task serve" + flags + " --own-years 5 --class consumer --format json");
  REQUIRE(priced.exit_code == 0);
  json pj = json::parse(priced.out);
  CHECK(pj["cost_basis"] == "own");
  CHECK(pj["own_years"] == 5);
  double last = 0;
  for (const auto& c : pj["candidates"]) {
    if (c["usd_per_million_output_tokens"].is_null()) continue;
    CHECK(c["usd_per_million_output_tokens"] == c["own_usd_per_million_output_tokens"]);
    CHECK(c["usd_per_million_output_tokens"].get<double>() >= last);
    last = c["usd_per_million_output_tokens"].get<double>();
  }
  CHECK(pj["candidates"][0]["device"].is_string());
  auto same = run_hwplan("serve --device " + pj["candidates"][0]["device"].get<std::string>() + flags + " --own-years 5 --format json");
  REQUIRE(same.exit_code == 0);
  CHECK(json::parse(same.out)["cost"]["own_usd_per_million_output_tokens"].get<double>() ==
        ::hwplan::test::approx(pj["candidates"][0]["own_usd_per_million_output_tokens"].get<double>()));
}

TEST_CASE("serve: pipeline stages for models beyond a node, as vLLM's virtual engines") {
  // Llama 3.1 405B in bf16 (810 GB) does not fit 8 x 80 GB: the search goes to two or more pipeline stages.
  auto big = run_hwplan("serve --model llama-3.1-405b --device h100-sxm --rate 1 --prompt 1000 --generate 200 --ttft-p95 3 "
                        "--tpot-p95 0.2 --requests 200 --format json");
  REQUIRE(big.exit_code == 0);
  json b = json::parse(big.out);
  const long long pp = b["serve"]["layout"]["pp"].get<long long>(), tp = b["serve"]["layout"]["tp"].get<long long>();
  CHECK(pp >= 2);
  CHECK(b["serve"]["devices_total"].get<long long>() == tp * pp * b["serve"]["replicas"].get<long long>());
  for (const auto& l : b["layouts"])
    if (l["pp"] == 1 && l["tp"].get<long long>() <= 8) CHECK(l["fits"] == false);
  // The same model on one node with and without a second stage: the stage adds the send between stages to each
  // token (never faster per token) and holds twice the KV cache.
  const std::string flags = " --model llama-3-8b --device h100-sxm --concurrency 4 --prompt 500 --generate 100 --requests 200 --format json";
  auto one = run_hwplan("serve --tp 1 --pp 1 --count 1" + flags);
  auto two = run_hwplan("serve --tp 1 --pp 2 --count 2" + flags);
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  json o = json::parse(one.out), t = json::parse(two.out);
  CHECK(t["serve"]["layout"]["pp"] == 2);
  CHECK(t["latency"]["tpot_seconds"]["p50"].get<double>() >= 0.95 * o["latency"]["tpot_seconds"]["p50"].get<double>());
  CHECK(t["kv_cache"]["capacity_tokens"].get<double>() > 1.9 * o["kv_cache"]["capacity_tokens"].get<double>());
  CHECK(run_hwplan("serve" + flags + " --pp 0").exit_code == 2);
  // One client keeps one batch in flight however many stages there are: no more throughput than one stage group.
  const std::string single = " --model llama-3-8b --device h100-sxm --concurrency 1 --prompt 500 --generate 100 --requests 100 --format json";
  auto flat1 = run_hwplan("serve --tp 1 --pp 1 --count 1" + single);
  auto piped1 = run_hwplan("serve --tp 1 --pp 2 --count 2" + single);
  REQUIRE(flat1.exit_code == 0);
  REQUIRE(piped1.exit_code == 0);
  CHECK(json::parse(piped1.out)["throughput"]["output_tokens_per_second"].get<double>() <=
        1.01 * json::parse(flat1.out)["throughput"]["output_tokens_per_second"].get<double>());
}

TEST_CASE("each engine sizes its KV cache from its memory fraction as it documents it") {
  Query q = infer_query("llama-2-7b", "a100-80gb-sxm");
  const double device = q.device->memory_bytes;
  serve::EngineConfig vllm = serve::engine_config(Engine::kVllm, device, q.device->name);
  CHECK(vllm.kv_budget == serve::KvBudget::kShareOfDevice);
  // vLLM keeps its small step budget on an A100 even of 80 GB ("a100" in the device name), the large one on an
  // H100 of the same memory.
  CHECK(vllm.max_batched_tokens == 2048);
  CHECK(vllm.max_sequences == 256);
  CHECK(serve::engine_config(Engine::kVllm, device, "NVIDIA H100 SXM5 80GB").max_batched_tokens == 8192);
  CHECK(serve::engine_config(Engine::kVllm, device, "NVIDIA H100 SXM5 80GB").max_sequences == 1024);
  // vLLM before 0.6.5: 0.90 of the whole device less all it used after its profiling pass (weights, one step's
  // activations, the runtime; no cache yet). Its own log for this model and GPU at the default 0.90
  // (vllm-project/vllm pull request #2031, Dec 2023): 7,351 blocks of 16 tokens = 117,616 tokens.
  serve::EngineConfig old_vllm = vllm;
  old_vllm.kv_profile = serve::KvProfile::kDeviceUsed;
  const serve::KvCapacity o = serve::kv_capacity(q.input, old_vllm, 1000);
  CHECK(std::fabs(static_cast<double>(o.tokens) / 117616.0 - 1) < 0.02);
  CHECK(o.kv_bytes == ::hwplan::test::approx(0.9 * device - (device - o.free_bytes)).epsilon(1e-12));
  // Since 0.6.5 (the default): 0.90 of the total the driver reports less the weights, the pass's allocated peak and
  // the non-PyTorch memory it added; the context and the allocator's reserve do not count.
  CHECK(vllm.kv_profile == serve::KvProfile::kAllocatedPeak);
  const serve::KvCapacity v = serve::kv_capacity(q.input, vllm, 1000);
  CHECK(v.kv_bytes > o.kv_bytes);
  CHECK(std::fabs(static_cast<double>(v.tokens) / 117616.0 - 1) < 0.03);
  // Its memory profile of Llama 3 8B on an 80 GB GPU with 8,192-token steps (pull request #10511): 53.29 GiB of
  // cache after 14.96 GiB of weights, 1.26 GiB of activation peak and 1.79 GiB outside PyTorch, of 0.9 x 79.22 GiB.
  Query l3 = infer_query("llama-3-8b", "h100-sxm");
  const serve::KvCapacity h = serve::kv_capacity(l3.input, serve::engine_config(Engine::kVllm, l3.device->memory_bytes, l3.device->name), 1000);
  CHECK(std::fabs(h.kv_bytes / (53.29 * 1073741824.0) - 1) < 0.05);
  // Qwen3-32B (61 GiB of weights) with vLLM 0.11 on an A100 80GB: gpustack's performance lab had to cap the context
  // at 32,768 tokens to start it, so the cache held at least 32,768 tokens and fewer than its default 40,960.
  Query q32 = infer_query("qwen3-32b", "a100-80gb-sxm");
  const serve::KvCapacity c32 = serve::kv_capacity(q32.input, serve::engine_config(Engine::kVllm, q32.device->memory_bytes, q32.device->name), 1000);
  CHECK(c32.tokens >= 32768);
  CHECK(c32.tokens < 40960);
  // The same fraction of what is free instead (TensorRT-LLM's rule) leaves more here: 10% of the free memory rather
  // than 10% of the whole device is held back.
  serve::EngineConfig free_share = vllm;
  free_share.kv_budget = serve::KvBudget::kShareOfFree;
  const serve::KvCapacity t = serve::kv_capacity(q.input, free_share, 1000);
  CHECK(t.kv_bytes == ::hwplan::test::approx(0.9 * t.free_bytes).epsilon(1e-12));
  CHECK(t.tokens > v.tokens);
  // SGLang: mem_fraction_static of the device holds the weights and the pool; never more than is free.
  serve::EngineConfig sglang = serve::engine_config(Engine::kSglang, device);
  CHECK(sglang.kv_budget == serve::KvBudget::kStaticShareOfDevice);
  const serve::KvCapacity s = serve::kv_capacity(q.input, sglang, 1000);
  CHECK(s.kv_bytes <= s.free_bytes);
  CHECK(s.kv_bytes > 0.8 * device - 14e9);
  // Its default fraction falls with tensor parallelism (server_args.py); a fraction the user gives is used as is.
  CHECK(serve::kv_fraction_for(sglang, 1) == ::hwplan::test::approx(0.88));
  CHECK(serve::kv_fraction_for(sglang, 2) == ::hwplan::test::approx(0.87));
  CHECK(serve::kv_fraction_for(sglang, 4) == ::hwplan::test::approx(0.85));
  CHECK(serve::kv_fraction_for(sglang, 8) == ::hwplan::test::approx(0.81));
  CHECK(serve::kv_fraction_for(sglang, 16) == ::hwplan::test::approx(0.79));
  CHECK(serve::kv_fraction_for(vllm, 8) == ::hwplan::test::approx(0.90));
  auto tp8 = json::parse(run_hwplan("serve --model llama-3-70b --device h100-sxm --engine sglang --tp 8 --pp 1 --count 8 "
                                    "--concurrency 2 --requests 40 --format json").out);
  CHECK(tp8["engine"]["kv_memory_fraction"].get<double>() == ::hwplan::test::approx(0.81));
  auto given = json::parse(run_hwplan("serve --model llama-3-70b --device h100-sxm --engine sglang --tp 8 --pp 1 --count 8 "
                                      "--concurrency 2 --requests 40 --kv-memory-fraction 0.9 --format json").out);
  CHECK(given["engine"]["kv_memory_fraction"].get<double>() == ::hwplan::test::approx(0.9));
  CHECK(given["kv_cache"]["capacity_tokens"].get<double>() > tp8["kv_cache"]["capacity_tokens"].get<double>());
  // A card whose weights leave little: the 10% vLLM holds back of the whole device weighs more (an RTX 4090 with a
  // 7B model: about 15% less cache than the free-memory rule would give it).
  Query small = infer_query("llama-2-7b", "rtx-4090");
  serve::EngineConfig e4090 = serve::engine_config(Engine::kVllm, small.device->memory_bytes);
  const serve::KvCapacity a = serve::kv_capacity(small.input, e4090, 1000);
  e4090.kv_budget = serve::KvBudget::kShareOfFree;
  const serve::KvCapacity b = serve::kv_capacity(small.input, e4090, 1000);
  CHECK(a.tokens > 0);
  CHECK(a.tokens < b.tokens);
  // The JSON says what the fraction is of.
  auto j = json::parse(run_hwplan("serve --model llama-2-7b --device rtx-4090 --concurrency 2 --requests 40 --format json").out);
  CHECK(j["engine"]["kv_memory_fraction_of"] == "device");
}

TEST_CASE("the server's request handling is in every TTFT and E2E, and in a closed-loop client's cycle") {
  const std::string base = "serve --model llama-3-8b --device h100-sxm --prompt 500 --generate 100 --requests 200 --format json";
  auto zero = json::parse(run_hwplan(base + " --concurrency 1 --request-overhead-ms 0").out);
  auto some = json::parse(run_hwplan(base + " --concurrency 1 --request-overhead-ms 25").out);
  // One client: the engine is idle when each request reaches it, so the handling adds exactly its time.
  for (const char* p : {"p50", "p95"}) {
    CHECK(some["latency"]["ttft_seconds"][p].get<double>() - zero["latency"]["ttft_seconds"][p].get<double>() ==
          ::hwplan::test::approx(0.025).epsilon(1e-6));
    CHECK(some["latency"]["e2e_seconds"][p].get<double>() - zero["latency"]["e2e_seconds"][p].get<double>() ==
          ::hwplan::test::approx(0.025).epsilon(1e-6));
  }
  // The client waits for it too: fewer requests a second.
  const double e2e = zero["latency"]["e2e_seconds"]["p50"].get<double>();
  CHECK(some["throughput"]["requests_per_second"].get<double>() ==
        ::hwplan::test::approx(zero["throughput"]["requests_per_second"].get<double>() * e2e / (e2e + 0.025)).epsilon(0.01));
  CHECK(some["engine"]["request_overhead_seconds"].get<double>() == ::hwplan::test::approx(0.025));
  CHECK(run_hwplan(base + " --concurrency 1 --request-overhead-ms -1").exit_code == 2);
  // The handling is the API server's Python work: a GeForce card's desktop does it in the desktop's time, and
  // estimate's TTFT row quotes the same figure.
  auto desktop = json::parse(run_hwplan("serve --model llama-3-8b --device rtx-4090 --concurrency 1 --requests 50 --format json").out);
  CHECK(desktop["engine"]["request_overhead_seconds"].get<double>() ==
        ::hwplan::test::approx(0.010 * assumptions().desktop_host_time_ratio));
  auto quoted = json::parse(run_hwplan("estimate --model llama-3-8b --device rtx-4090 --task infer --batch 1 --format json").out);
  CHECK(quoted["inference"]["served_time_to_first_token_seconds"].get<double>() ==
        ::hwplan::test::approx(desktop["latency"]["ttft_seconds"]["p50"].get<double>()).epsilon(1e-9));
}

TEST_CASE("with no --engine serve prices the stack estimate assumes, on an edge device too") {
  const std::string work = "--model llama-3-8b --device jetson-agx-orin-64gb --weights int4 --prompt 256 --generate 64";
  const json est = json::parse(run_hwplan("estimate --task infer --batch 1 --format json " + work).out);
  const json srv = json::parse(run_hwplan("serve --concurrency 1 --requests 20 --format json " + work).out);
  // The edge runtime's quantized output projection on both sides: the same decode step, the same first token.
  CHECK(est["stack"]["quantized_head"] == true);
  // (The simulated steps walk the context from prompt + 1 to prompt + generate - 1; the estimate prices its midpoint:
  // 3e-5 apart.)
  CHECK(srv["latency"]["tpot_seconds"]["p50"].get<double>() ==
        ::hwplan::test::approx(est["inference"]["time_per_output_token_seconds"].get<double>()).epsilon(1e-4));
  CHECK(srv["latency"]["ttft_seconds"]["p50"].get<double>() ==
        ::hwplan::test::approx(est["inference"]["served_time_to_first_token_seconds"].get<double>()).epsilon(1e-9));
}

TEST_CASE("the engines' own all-reduce: a fixed latency inside NVIDIA's and AMD's fabrics, NCCL's steps elsewhere") {
  const auto& reg = test::registry();
  System node;
  node.count = 8;
  const GroupLink nvlink = group_link(reg.device("h100-sxm"), node, 8, 1);
  REQUIRE(std::string(nvlink.medium) == "scale-up fabric");
  const double small = 8192 * 2;  // one decode token's hidden state of an 8B model
  const double custom = engine_allreduce_seconds(small, 8, nvlink, true), nccl = engine_allreduce_seconds(small, 8, nvlink, false);
  CHECK(nccl == ::hwplan::test::approx(allreduce_seconds(small, 8, nvlink)));
  // (Approx's default scale of 1 would accept any two microsecond figures: compare ratios.)
  const double own_rate = nvlink.bytes_per_s * assumptions().custom_allreduce_bandwidth_share;
  CHECK(custom / (2.0 * 7 / 8 * small / own_rate + assumptions().custom_allreduce_latency_seconds) == ::hwplan::test::approx(1.0));
  CHECK(custom < nccl);
  // Its data path is slow (sglang pull request #2904, H100: 20-34 us for 512 KB-1 MB at 4-8 GPUs), so larger messages
  // go to NCCL where that is faster, and the time never falls as the message grows.
  const GroupLink four = group_link(reg.device("h100-sxm"), node, 4, 1);
  const double half_mb = engine_allreduce_seconds(512.0 * 1024, 4, four, true);
  CHECK(half_mb > 12e-6);
  CHECK(half_mb < 25e-6);
  CHECK(half_mb <= allreduce_seconds(512.0 * 1024, 4, four));
  double previous = 0;
  for (double bytes = 1024; bytes <= 256e6; bytes *= 2) {
    const double t = engine_allreduce_seconds(bytes, 8, nvlink, true);
    CHECK(t >= previous);
    previous = t;
  }
  // Large messages go to NCCL: its time exactly.
  CHECK(engine_allreduce_seconds(64e6, 8, nvlink, true) / allreduce_seconds(64e6, 8, nvlink) == doctest::Approx(1.0));
  // Flat in the group size: 2 or 8 ranks pay the same latency (NCCL's grows with log2 of it).
  const GroupLink pair = group_link(reg.device("h100-sxm"), node, 2, 1);
  CHECK(engine_allreduce_seconds(0, 2, pair, true) == 0);
  CHECK(engine_allreduce_seconds(1, 2, pair, true) / assumptions().custom_allreduce_latency_seconds == ::hwplan::test::approx(1.0).epsilon(0.01));
  // Over PCIe (GeForce cards) the engines fall back to NCCL.
  const GroupLink pcie = group_link(reg.device("rtx-4090"), node, 2, 1);
  CHECK(engine_allreduce_seconds(small, 2, pcie, true) == ::hwplan::test::approx(allreduce_seconds(small, 2, pcie)));
  // The vllm preset uses it on NVIDIA and AMD devices only: a tensor-parallel decode step is faster with it.
  auto tpot = [](const std::string& args) {
    return json::parse(run_hwplan("estimate --task infer --batch 1 --format json --model llama-3-70b " + args).out)["inference"]
                                 ["time_per_output_token_seconds"].get<double>();
  };
  CHECK(tpot("--device h100-sxm --count 8 --tp 8 --engine vllm") <
        tpot("--device h100-sxm --count 8 --tp 8 --engine vllm --custom-allreduce off"));
  CHECK(tpot("--device gaudi2 --count 8 --tp 8 --engine vllm") ==
        ::hwplan::test::approx(tpot("--device gaudi2 --count 8 --tp 8 --engine vllm --custom-allreduce off")).epsilon(1e-12));
  CHECK(json::parse(run_hwplan("estimate --task infer --model 8b --device gaudi2 --engine vllm --format json").out)["stack"]
                   ["custom_allreduce"] == false);
}

TEST_CASE("serve: bad layout and workload inputs name their flag, in serve, recommend --task serve and plot serve") {
  for (const std::string cmd : {"serve --device h100-sxm", "recommend --task serve --devices h100-sxm,l40s"}) {
    CAPTURE(cmd);
    auto tp0 = run_hwplan(cmd + " --model llama-3-8b --rate 5 --ttft-p95 1 --tp 0");
    CHECK(tp0.exit_code == 2);
    CHECK(tp0.err.find("'--tp'") != std::string::npos);
    auto weights = run_hwplan(cmd + " --model llama-3-8b --rate 5 --ttft-p95 1 --weights int3");
    CHECK(weights.exit_code == 2);
    CHECK(weights.err.find("'--weights'") != std::string::npos);
    auto kv = run_hwplan(cmd + " --model llama-3-8b --rate 5 --kv-cache int3");
    CHECK(kv.exit_code == 2);
    CHECK(kv.err.find("'--kv-cache'") != std::string::npos);
  }
  auto plot = run_hwplan("plot serve --model llama-3-8b --device h100-sxm --rate 5 --ttft-p95 1 --tp 0 -o /dev/null");
  CHECK(plot.exit_code == 2);
  auto node = run_hwplan("serve --model llama-3-8b --device h100-sxm --rate 5 --devices-per-node 0");
  CHECK(node.exit_code == 2);
  CHECK(node.err.find("'--devices-per-node'") != std::string::npos);
}

TEST_CASE("serve: a closed loop's capacity stops at the clients a replica batches, or at the requests simulated") {
  // Only a TPOT target: clients beyond the batch wait before their first token, which nothing limits.
  auto j = nlohmann::json::parse(run_hwplan("serve --model llama-3-8b --device apple-m2-ultra-gpu --concurrency 1 --prompt 500 "
                                            "--generate 200 --tpot-p95 0.1 --format json").out);
  const double cap = j["serve"]["max_concurrency_per_replica"].get<double>();
  CHECK(cap == 4);  // llama-server's 4 slots
  CHECK(j["serve"]["binding_constraint"].get<std::string>().find("more only wait for a place in the batch") != std::string::npos);
  // More clients than requests: the simulation says nothing beyond them.
  auto k = nlohmann::json::parse(run_hwplan("serve --model llama-3-8b --device h100-sxm --concurrency 5000 --requests 100 --prompt 500 "
                                            "--generate 200 --ttft-p95 100 --format json").out);
  CHECK(k["serve"]["max_concurrency_per_replica"].get<double>() <= 100);
  CHECK(k["serve"]["binding_constraint"].get<std::string>().find("give --requests above it") != std::string::npos);
}

TEST_CASE("serve: clients that do not split evenly over the replicas are priced as given, not rounded up") {
  auto tput = [](int clients) {
    auto j = nlohmann::json::parse(run_hwplan("serve --model llama-3-8b --device h100-sxm --count 3 --prompt 2000 --generate 300 "
                                              "--format json --concurrency " + std::to_string(clients)).out);
    return j["throughput"]["requests_per_second"].get<double>();
  };
  const double nine = tput(9), ten = tput(10), twelve = tput(12), two = tput(2), three = tput(3);
  CHECK(nine < ten);
  CHECK(ten < twelve);
  // Two clients on three replicas: one replica idle, two thirds of three clients' throughput.
  CHECK(two == ::hwplan::test::approx(three * 2 / 3).epsilon(1e-9));
}

TEST_CASE("serve: inputs it would ignore are errors or warnings, never silently dropped") {
  const std::string base = "serve --model llama-3-8b --device h100-sxm --rate 2 ";
  auto both = run_hwplan(base + "--prompt-dist uniform:10:20 --prompt 3000");
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("'--prompt'") != std::string::npos);
  auto gamma = run_hwplan("serve --model llama-3-8b --device h100-sxm --trace " + std::string(HWPLAN_SOURCE_DIR) +
                          "/data/examples/trace.csv --burstiness 8");
  CHECK(gamma.exit_code == 2);
  CHECK(gamma.err.find("'--burstiness'") != std::string::npos);
  auto profile = run_hwplan(base + "--engine sglang --kv-profile device-used");
  CHECK(profile.exit_code == 2);
  CHECK(profile.err.find("'--kv-profile'") != std::string::npos);
  CHECK(run_hwplan(base + "--burstiness 0.05").exit_code == 0);  // the bound its message states
  auto seq = run_hwplan(base + "--seq 4096 --tokens 1e9");
  CHECK(seq.exit_code == 0);
  CHECK(seq.out.find("ignored by serve: --seq (training inputs") != std::string::npos);
  // The longest lengths of a distribution are checked against the model's context, as a fixed --prompt is.
  auto longest = run_hwplan(base + "--prompt-dist uniform:9000:10000");
  CHECK(longest.out.find("beyond llama-3-8b's trained context of 8192") != std::string::npos);
  for (const char* flag : {"--budget-usd 100", "--deadline 1d", "--min-decode-tps 100", "--top 0", "--max-count 0"}) {
    CAPTURE(flag);
    auto r = run_hwplan(std::string("recommend --task serve --model llama-3-8b --rate 5 --ttft-p95 1 --devices h100-sxm,l40s ") + flag);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(std::string("'") + std::string(flag).substr(0, std::string(flag).find(' ')) + "'") != std::string::npos);
  }
  // recommend lists what serve would say on each device: the engine it assumed.
  auto ranked = run_hwplan("recommend --task serve --model llama-3-8b --rate 5 --ttft-p95 1 --devices h100-sxm,l40s");
  CHECK(ranked.out.find("no --engine given: vLLM's scheduler defaults assumed") != std::string::npos);
  // --tp checked on a device that takes it, whatever the order of the candidates.
  CHECK(run_hwplan("recommend --task serve --model llama-3-8b --rate 5 --tp 2 --ttft-p95 1 --devices apple-m2-ultra-gpu,h100-sxm").exit_code == 0);
}

TEST_CASE("traces: a JSON array mixing rows with and without arrival times is refused, a byte-order mark is skipped") {
  CHECK_THROWS_WITH_AS(io::parse_trace(R"([{"timestamp": 0, "prompt_tokens": 5, "output_tokens": 3}, {"prompt_tokens": 5, "output_tokens": 3}])", "t.json"),
                       doctest::Contains("t.json [row 2]"), InputError);
  const auto rows = io::parse_trace("\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\n0,10,5\n1.5,20,6\n", "bom.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].arrival_seconds == 1.5);
}

TEST_CASE("serve: a profile it cannot read is the error, not the device count") {
  // Every layout refused for the same keyless reason: it said "no tensor-parallel layout of llama-3-8b fits 1 devices".
  auto r = test::run_hwplan("serve --model llama-3-8b --device h100-sxm --rate 5 --profile no-such-profile.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no-such-profile.yaml") != std::string::npos);
  CHECK(r.err.find("cannot read profile") != std::string::npos);
  CHECK(r.err.find("--count") == std::string::npos);
}

TEST_CASE("serve prices a prefill with eager attention or unfused kernels as estimate does") {
  // serve's step model priced fused kernels only: with --attention eager its TTFT (216.5 ms on an RTX 4090) came out
  // below estimate's bare prefill of the same prompt (269.5 ms), which it must include.
  double fused_gap = -1;  // the served TTFT over the bare prefill: the request handling and the engine's step
  for (const std::string extra : {"", " --attention eager", " --fused-kernels off", " --fused-kernels off --attention eager"}) {
    CAPTURE(extra);
    const std::string w = " --model llama-3-8b --device rtx-4090 --prompt 2000 --generate 300 --engine vllm" + extra;
    auto e = run_hwplan("estimate --task infer --batch 1 --format json" + w);
    auto s = run_hwplan("serve --concurrency 1 --format json" + w);
    REQUIRE(e.exit_code == 0);
    REQUIRE(s.exit_code == 0);
    const auto ej = nlohmann::json::parse(e.out), sj = nlohmann::json::parse(s.out);
    const double prefill = ej["inference"]["prefill_seconds"].get<double>();
    const double served = sj["latency"]["ttft_seconds"]["p50"].get<double>();
    CHECK(served > prefill);
    // The same gap whatever the stack: its unfused kernels' fixed costs are counted once.
    if (fused_gap < 0) fused_gap = served - prefill;
    CHECK(served - prefill == ::hwplan::test::approx(fused_gap).epsilon(0.01));
    CHECK(ej["inference"]["served_time_to_first_token_seconds"].get<double>() == ::hwplan::test::approx(served).epsilon(0.01));
  }
}

TEST_CASE("serve on a given count tries every pipeline depth that splits it, not only powers of two") {
  // Llama 3 70B does not fit one H100 and its 64 heads do not split three ways: three devices serve it as a pipeline
  // of three, and the answer describes the count given.
  auto r = run_hwplan("serve --model llama-3-70b --device h100-sxm --concurrency 16 --prompt 1000 --generate 200 --count 3 "
                      "--requests 50 --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = json::parse(r.out);
  CHECK(j["serve"]["devices_total"] == 3);
  CHECK(j["serve"]["layout"]["tp"] == 1);
  CHECK(j["serve"]["layout"]["pp"] == 3);
}

TEST_CASE("serve: an explicit Poisson arrival with a burstiness is a conflict, and a closed loop's names the flag given") {
  const std::string base = "serve --model llama-3-8b --device h100-sxm --requests 20 ";
  auto poisson = run_hwplan(base + "--rate 5 --arrival poisson --burstiness 2");
  CHECK(poisson.exit_code == 2);
  CHECK(poisson.err.find("key '--burstiness'") != std::string::npos);
  CHECK(run_hwplan(base + "--rate 5 --burstiness 2").exit_code == 0);  // burstiness alone: gamma arrivals
  auto closed = run_hwplan(base + "--concurrency 4 --arrival gamma");
  CHECK(closed.exit_code == 2);
  CHECK(closed.err.find("key '--arrival'") != std::string::npos);
}

TEST_CASE("recommend --task serve names a closed loop's capacity as clients, as serve does") {
  const std::string q = "--model llama-3-8b --concurrency 64 --prompt 2000 --generate 300 --ttft-p95 1 --requests 200";
  const auto rec = json::parse(run_hwplan("recommend --task serve --devices h100-sxm " + q + " --format json").out);
  REQUIRE(rec["candidates"].size() == 1);
  const auto& c = rec["candidates"][0];
  CHECK(c["max_rate_per_replica"].is_null());
  const auto srv = json::parse(run_hwplan("serve --device h100-sxm " + q + " --format json").out);
  CHECK(c["max_concurrency_per_replica"] == srv["serve"]["max_concurrency_per_replica"]);
  CHECK(run_hwplan("recommend --task serve --devices h100-sxm " + q).out.find("max clients per replica") != std::string::npos);
}

TEST_CASE("a lognormal length's mean is that of the whole tokens drawn, at least one each") {
  auto mean = [](const std::string& dist) {
    return json::parse(run_hwplan("serve --model llama-3.2-1b --device h100-sxm --rate 2 --requests 50 --prompt 100 "
                                  "--format json --generate-dist " + dist).out)["traffic"]["mean_output_tokens"].get<double>();
  };
  // Monte Carlo of max(round(X), 1) over 2e7 draws: 2.0066 and 3.2874.
  CHECK(mean("lognormal:2:0.5") == doctest::Approx(2.0066).epsilon(0.002));
  CHECK(mean("lognormal:3:1.5") == doctest::Approx(3.2874).epsilon(0.003));
  CHECK(mean("lognormal:221:1.0") == doctest::Approx(221).epsilon(1e-6));  // large means: X's own
}

TEST_CASE("serve sizes a token's KV cache as estimate holds it: MLA's latent, sliding-window layers at most the window") {
  // deepseek-v2-lite caches a compressed latent; gemma-3-27b and gemma-2-9b keep only a window in some layers (4,096
  // tokens in Gemma 2's, exceeded by the 6,000-token prompt). A running sequence holds its prompt and, on average
  // over its decode, half its output: serve charges each token what estimate holds for a sequence of that length.
  struct Case {
    const char* model;
    long long prompt, generate;
  };
  for (const Case& c : {Case{"deepseek-v2-lite", 1000, 200}, Case{"gemma-3-27b", 1000, 200}, Case{"gemma-2-9b", 6000, 400},
                        Case{"llama-3-8b", 1000, 200}}) {
    CAPTURE(c.model);
    const auto s = run_hwplan(fmt::format("serve --model {} --device h100-sxm --prompt {} --generate {} --concurrency 4 --format json",
                                          c.model, c.prompt, c.generate));
    REQUIRE(s.exit_code == 0);
    const long long occupied = c.prompt + c.generate / 2;
    const auto e = run_hwplan(fmt::format("estimate --model {} --device h100-sxm --task infer --batch 1 --prompt {} --generate 1 --format json",
                                          c.model, occupied - 1));
    REQUIRE(e.exit_code == 0);
    const nlohmann::json sj = nlohmann::json::parse(s.out), ej = nlohmann::json::parse(e.out);
    const double per_token = sj["kv_cache"]["bytes_per_token"].get<double>();
    CHECK(per_token == ::hwplan::test::approx(ej["memory"]["breakdown"]["kv_cache"].get<double>() / static_cast<double>(occupied)).epsilon(1e-9));
  }
}

TEST_CASE("a closed loop of one client completes one request per end-to-end latency: no completion counted twice") {
  const auto r = run_hwplan("serve --model llama-3-8b --device a100-80gb-sxm --concurrency 1 --prompt 1000 --generate 200 --requests 50 --format json");
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const double rps = j["throughput"]["requests_per_second"].get<double>();
  CHECK(rps * j["latency"]["e2e_seconds"]["p50"].get<double>() == ::hwplan::test::approx(1.0).epsilon(1e-6));
  CHECK(rps * 200 == ::hwplan::test::approx(j["throughput"]["output_tokens_per_second"].get<double>()).epsilon(1e-9));
}

TEST_CASE("serve says when the engine named does not run on the device, as estimate does") {
  const auto s = run_hwplan("serve --model llama-3-8b --device mi300x --engine trtllm --rate 1 --requests 50");
  REQUIRE(s.exit_code == 0);
  const auto e = run_hwplan("estimate --model llama-3-8b --device mi300x --engine trtllm --task infer");
  REQUIRE(e.exit_code == 0);
  const std::string said = "trtllm does not run on mi300x";
  CHECK(s.out.find(said) != std::string::npos);
  CHECK(e.out.find(said) != std::string::npos);
  CHECK(run_hwplan("serve --model llama-3-8b --device h100-sxm --engine trtllm --rate 1 --requests 50").out.find("does not run on") ==
        std::string::npos);
}

TEST_CASE("a closed loop's latencies leave out its first and last rounds: Little's law holds at a thousand clients") {
  // 1,000 clients by default simulate ten rounds of requests; the burst of the first round and the falling load of the
  // last are not the steady state (with 2,000 requests the mean latency came out 10% below it).
  const auto r = run_hwplan("serve --model llama-3-8b --device h100-sxm --concurrency 1000 --prompt 1500 --generate 300 --format json");
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["simulation"]["requests"].get<long long>() == 10000);
  CHECK(j["simulation"]["measured_requests"].get<long long>() == 8000);
  CHECK(j["simulation"]["last_round_left_out"].get<bool>());
  CHECK_FALSE(j["simulation"]["first_round_left_out"].get<bool>());  // the 10% warm-up is the first round here
  const double concurrency = j["throughput"]["requests_per_second"].get<double>() * j["latency"]["e2e_seconds"]["mean"].get<double>();
  CHECK(concurrency == ::hwplan::test::approx(1000).epsilon(0.02));
  // An explicit --requests is kept.
  const auto few = run_hwplan("serve --model llama-3-8b --device h100-sxm --concurrency 1000 --prompt 1500 --generate 300 --requests 3000 --format json");
  CHECK(nlohmann::json::parse(few.out)["simulation"]["requests"].get<long long>() == 3000);
}

TEST_CASE("a closed loop's capacity does not depend on recommend's shorter default run: serve and recommend agree") {
  const std::string flags = "--concurrency 300 --prompt 2000 --generate 300 --ttft-p95 20 --format json";
  const auto s = run_hwplan("serve --model llama-3-8b --device h100-sxm " + flags);
  const auto r = run_hwplan("recommend --model llama-3-8b --task serve --devices h100-sxm " + flags);
  REQUIRE(s.exit_code == 0);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json sj = nlohmann::json::parse(s.out), rj = nlohmann::json::parse(r.out);
  const nlohmann::json& c = rj["candidates"][0];
  CHECK(c["max_concurrency_per_replica"].get<double>() == sj["serve"]["max_concurrency_per_replica"].get<double>());
  CHECK(c["devices_total"].get<long long>() == sj["serve"]["devices_total"].get<long long>());
}
