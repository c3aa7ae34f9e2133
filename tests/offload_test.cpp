// Inference with layers left in host memory (--gpu-layers, llama.cpp's -ngl): where the weights and the KV cache
// live, what each side of a decode step and of a prefill costs, --gpu-layers auto, fit's suggestion, and the inputs
// refused.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "core/assumptions.hpp"
#include "test_util.hpp"

using namespace hwplan;
using nlohmann::json;

namespace {

const std::string kSeven = "estimate --model llama-2-7b --device rtx-4090 --task infer --format json ";

json json_of(const std::string& command) {
  auto r = test::run_hwplan(command);
  REQUIRE_MESSAGE(r.exit_code == 0, command << "\n" << r.err);
  return json::parse(r.out);
}

double host_link_rate(const std::string& device) {
  const Device& d = test::registry().device(device);
  return d.host_link.bytes_per_s() * assumptions().host_link_efficiency;
}

}  // namespace

TEST_CASE("--gpu-layers above the layer count is the whole model on the device, and at the count llama.cpp keeps the output layer on the host") {
  const json all = json_of(kSeven + "--engine llamacpp");
  const json above = json_of(kSeven + "--engine llamacpp --gpu-layers 99");
  CHECK(above["memory"]["per_device_bytes"].get<double>() == test::approx(all["memory"]["per_device_bytes"].get<double>()));
  CHECK(above["inference"]["time_per_output_token_seconds"].get<double>() ==
        test::approx(all["inference"]["time_per_output_token_seconds"].get<double>()));
  CHECK(above["inference"]["offload"].is_null());

  // -ngl 32 of Llama 2 7B's 32 layers: "offloaded 32/33 layers": the output projection (32,000 x 4,096, bf16) stays.
  const json at = json_of(kSeven + "--engine llamacpp --gpu-layers 32");
  const double head = 32000.0 * 4096 * 2;
  CHECK(all["memory"]["breakdown"]["weights"].get<double>() - at["memory"]["breakdown"]["weights"].get<double>() ==
        test::approx(head).epsilon(1e-4));  // and the final norm's 4,096
  CHECK(at["inference"]["offload"]["output_layer_on_host"].get<bool>());
  CHECK(at["inference"]["offload"]["host_layers"].get<double>() == 0);
}

TEST_CASE("layers left with llama.cpp's CPU: their weights and KV cache in host memory, their time at the host's memory rate") {
  const json all = json_of(kSeven + "--engine llamacpp");
  const json half = json_of(kSeven + "--engine llamacpp --gpu-layers 16 --host-tflops 1000");
  const double head = 32000.0 * 4096 * 2;
  const double layers = all["memory"]["breakdown"]["weights"].get<double>() - head;  // 32 layers (the table is on the host)
  CHECK(half["memory"]["breakdown"]["weights"].get<double>() == test::approx(layers / 2));
  // The device keeps the cache of its own 16 layers; the host the rest, with 16 layers and the output projection.
  CHECK(half["memory"]["breakdown"]["kv_cache"].get<double>() == test::approx(all["memory"]["breakdown"]["kv_cache"].get<double>() / 2));
  const double host_kv = all["memory"]["breakdown"]["kv_cache"].get<double>() / 2;
  CHECK(half["inference"]["offload"]["host_bytes"].get<double>() == test::approx(layers / 2 + head + host_kv));
  // The table llama.cpp keeps on the host anyway is in the memory's host figure, not the offload's.
  CHECK(half["memory"]["host_bytes"].get<double>() ==
        test::approx(layers / 2 + head + host_kv + all["memory"]["host_bytes"].get<double>()));
  CHECK(half["inference"]["offload"]["computed_by"] == "host_cpu");

  // Memory-bound on the host (its CPU made fast): the host's part scales with its memory's rate.
  const json fast = json_of(kSeven + "--engine llamacpp --gpu-layers 16 --host-tflops 1000 --host-memory-gbps 120");
  const json slow = json_of(kSeven + "--engine llamacpp --gpu-layers 16 --host-tflops 1000 --host-memory-gbps 60");
  const double t_fast = fast["inference"]["offload"]["seconds_per_token"].get<double>();
  CHECK(slow["inference"]["offload"]["seconds_per_token"].get<double>() == test::approx(2 * t_fast));
  // What the host reads per token: 16 layers' weights and the output projection, and the cache at the mean context.
  // (--host-memory-gbps is the peak: the CPU reads host_memory_efficiency of it.)
  const double achieved = 120e9 * assumptions().host_memory_efficiency;
  CHECK(t_fast * achieved > layers / 2 + head);
  CHECK(t_fast * achieved < layers / 2 + head + host_kv);
  CHECK(fast["inference"]["offload"]["host_assumed"].is_null());  // both given: nothing assumed, nothing warned
  CHECK(test::run_hwplan(kSeven.substr(0, kSeven.find("--format")) + "--engine llamacpp --gpu-layers 16").out.find("host assumed") !=
        std::string::npos);

  // Each layer moved onto the device shortens the token.
  double previous = 1e9;
  for (int n : {0, 8, 16, 24, 32, 33}) {
    const json j = json_of(kSeven + "--engine llamacpp --gpu-layers " + std::to_string(n));
    const double tpot = j["inference"]["time_per_output_token_seconds"].get<double>();
    CHECK_MESSAGE(tpot < previous, n << " layers on the device");
    previous = tpot;
  }
}

TEST_CASE("a prompt of 32 tokens or more runs every layer on the device, the host's weights crossing the link per 512 tokens") {
  const std::string base = kSeven + "--engine llamacpp --gpu-layers 16 --generate 16 ";
  const json one = json_of(base + "--prompt 512");
  const json two = json_of(base + "--prompt 1024");
  const json all = json_of(kSeven + "--engine llamacpp");
  const double layers = all["memory"]["breakdown"]["weights"].get<double>() - 32000.0 * 4096 * 2;
  // A second ubatch carries the 16 host layers' weights over PCIe once more.
  CHECK(two["inference"]["offload"]["prefill_seconds"].get<double>() - one["inference"]["offload"]["prefill_seconds"].get<double>() ==
        test::approx(layers / 2 / host_link_rate("rtx-4090")));
  // Below the threshold the host's CPU reads the prompt through its layers: no copy over the link.
  const json small = json_of(base + "--prompt 16");
  CHECK(small["inference"]["offload"]["prefill_seconds"].get<double>() < layers / 2 / host_link_rate("rtx-4090"));
  CHECK(small["inference"]["offload"]["prefill_seconds"].get<double>() > 0);
}

TEST_CASE("an engine that streams its offloaded layers: the device computes every layer and keeps every layer's cache") {
  const json all = json_of(kSeven + "--engine hf");
  const json half = json_of(kSeven + "--engine hf --gpu-layers 16");
  CHECK(half["inference"]["offload"]["computed_by"] == "device_streamed");
  CHECK(half["inference"]["offload"]["output_layer_on_host"] == false);
  CHECK(half["memory"]["breakdown"]["kv_cache"].get<double>() == test::approx(all["memory"]["breakdown"]["kv_cache"].get<double>()));
  const double host = half["inference"]["offload"]["host_bytes"].get<double>();
  CHECK(half["inference"]["offload"]["seconds_per_token"].get<double>() == test::approx(host / host_link_rate("rtx-4090")));
  CHECK(half["inference"]["time_per_output_token_seconds"].get<double>() ==
        test::approx(all["inference"]["time_per_output_token_seconds"].get<double>() + host / host_link_rate("rtx-4090")).epsilon(0.02));
}

TEST_CASE("--gpu-layers auto places the most layers that fit, and fit suggests the same placement") {
  const std::string seventy = "estimate --model llama-2-70b --device rtx-4090 --task infer --weights int4 --engine llamacpp --format json ";
  const json placed = json_of(seventy + "--gpu-layers auto");
  CHECK(placed["memory"]["fits"].get<bool>());
  const long long n = std::llround(placed["inference"]["offload"]["device_layers"].get<double>());
  CHECK(n > 0);
  CHECK(n < 80);
  const json given = json_of(seventy + "--gpu-layers " + std::to_string(n));
  CHECK(given["inference"]["time_per_output_token_seconds"].get<double>() ==
        test::approx(placed["inference"]["time_per_output_token_seconds"].get<double>()));
  CHECK_FALSE(json_of(seventy + "--gpu-layers " + std::to_string(n + 1))["memory"]["fits"].get<bool>());
  // Where the whole model fits, auto leaves it whole.
  const json small = json_of(kSeven + "--engine llamacpp --gpu-layers auto");
  CHECK(small["inference"]["offload"].is_null());
  // On a device whose memory is the host's there is nothing to place: auto is the whole model, a number an error.
  CHECK(json_of("estimate --model llama-2-7b --device apple-m2-max-gpu --task infer --gpu-layers auto --format json")["inference"]["offload"].is_null());

  const json fit = json_of("fit --model llama-2-70b --device rtx-4090 --task infer --weights int4 --format json");
  bool found = false;
  for (const auto& c : fit["changes"]) {
    if (c["flags"].get<std::string>().find("--gpu-layers") == std::string::npos) continue;
    found = true;
    CHECK(c["fits"].get<bool>());
    CHECK(c["flags"] == "--engine llamacpp --gpu-layers " + std::to_string(n));
    CHECK(c["seconds"].get<double>() == test::approx(placed["inference"]["time_per_output_token_seconds"].get<double>()));
  }
  CHECK(found);
}

TEST_CASE("--gpu-layers where it cannot apply is refused or said") {
  auto r = test::run_hwplan("estimate --model llama-2-7b --device apple-m2-max-gpu --task infer --gpu-layers 10");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--gpu-layers") != std::string::npos);
  r = test::run_hwplan("estimate --model llama-2-7b --device rtx-4090 --task infer --gpu-layers half");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("not a whole number") != std::string::npos);
  r = test::run_hwplan("estimate --model resnet-50 --device rtx-4090 --task infer --gpu-layers 3");
  CHECK(r.exit_code == 2);
  r = test::run_hwplan("estimate --model llama-2-7b --device rtx-4090 --task infer --host-memory-gbps 0 --gpu-layers 3");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--host-memory-gbps") != std::string::npos);
  r = test::run_hwplan("serve --model llama-2-7b --device rtx-4090 --rate 1 --gpu-layers 20");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--gpu-layers") != std::string::npos);
  // The host's figures where no layer runs on the host's CPU: said to change nothing.
  r = test::run_hwplan("estimate --model llama-2-7b --device rtx-4090 --task infer --host-memory-gbps 50");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("no effect here: --host-memory-gbps") != std::string::npos);
  r = test::run_hwplan("estimate --model llama-2-7b --device rtx-4090 --task infer --engine hf --gpu-layers 10 --host-tflops 3");
  CHECK(r.out.find("no effect here: --host-tflops") != std::string::npos);
  // Training reads none of it: said, not silently dropped.
  r = test::run_hwplan("estimate --model llama-2-7b --device a100-80gb-sxm --task lora --gpu-layers 10");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("ignored for --task lora: --gpu-layers") != std::string::npos);
}

TEST_CASE("the host's CPU reads the experts a token touches, shares the host among replicas, and hands batches of 32 to the device") {
  // Mixtral on the host: a token reads its 2 experts of 8 per layer, not all of them.
  const json moe = json_of("estimate --model mixtral-8x7b --device rtx-4090 --task infer --engine llamacpp --weights q4_k_m "
                           "--gpu-layers 0 --host-tflops 1000 --host-memory-gbps 100 --generate 2 --prompt 1 --format json");
  const double held = moe["inference"]["offload"]["host_bytes"].get<double>();
  const double read = moe["inference"]["offload"]["seconds_per_token"].get<double>() * 100e9 * assumptions().host_memory_efficiency;
  CHECK(read < 0.45 * held);
  CHECK(read > 0.2 * held);

  // Eight replicas on one host: each gets an eighth of its memory.
  const std::string seventy = "estimate --model llama-2-70b --device rtx-4090 --task infer --weights q4_k_m --engine llamacpp "
                              "--gpu-layers 42 --format json ";
  const json one = json_of(seventy);
  const json eight = json_of(seventy + "--count 8 --dp 8");
  CHECK(eight["inference"]["offload"]["seconds_per_token"].get<double>() ==
        test::approx(8 * one["inference"]["offload"]["seconds_per_token"].get<double>()).epsilon(0.01));

  // A decode step of 32 sequences has its host layers run on the device, their weights crossing the link.
  const json wide = json_of(kSeven + "--engine llamacpp --gpu-layers 16 --batch 32");
  const json all = json_of(kSeven + "--engine llamacpp");
  const double layers = all["memory"]["breakdown"]["weights"].get<double>() - 32000.0 * 4096 * 2;
  CHECK(wide["inference"]["offload"]["seconds_per_token"].get<double>() ==
        test::approx((layers / 2 + 32000.0 * 4096 * 2) / host_link_rate("rtx-4090")).epsilon(1e-3));
  CHECK(wide["bound"] == "host-link");

  // auto tries every layer with the output layer on the host, which llama.cpp places apart from the whole model.
  const json tight = json_of("estimate --model llama-2-7b --device rtx-4060 --task infer --weights q4_k_m --engine llamacpp "
                             "--prompt 2048 --generate 2048 --headroom 0.146 --gpu-layers auto --format json");
  if (!json_of("estimate --model llama-2-7b --device rtx-4060 --task infer --weights q4_k_m --engine llamacpp --prompt 2048 "
               "--generate 2048 --headroom 0.146 --format json")["memory"]["fits"].get<bool>() &&
      json_of("estimate --model llama-2-7b --device rtx-4060 --task infer --weights q4_k_m --engine llamacpp --prompt 2048 "
              "--generate 2048 --headroom 0.146 --gpu-layers 32 --format json")["memory"]["fits"].get<bool>())
    CHECK(tight["inference"]["offload"]["device_layers"] == 32);

  // A count given that does not fit: fit offers the most that do. A float with nothing after the point is a count.
  const json fit = json_of("fit --model llama-2-70b --device rtx-4090 --task infer --weights q4_k_m --engine llamacpp "
                           "--gpu-layers 79 --format json");
  CHECK(fit["changes"][0]["flags"] == "--gpu-layers " + std::to_string(one["inference"]["offload"]["device_layers"].get<long long>()));
  CHECK(json_of("estimate --model llama-2-70b --device rtx-4090 --task infer --weights q4_k_m --engine llamacpp --gpu-layers 42.0 "
                "--format json")["inference"]["offload"]["device_layers"] == 42);
  auto r = test::run_hwplan("estimate --model llama-2-7b --device apple-m2-max-gpu --task infer --gpu-layers auto");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("no effect here: --gpu-layers auto") != std::string::npos);
}
