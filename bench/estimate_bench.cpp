// Micro-benchmarks of the estimators (Google Benchmark). Run: bash bench/run.sh
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "estimators/search.hpp"
#include "estimators/estimate.hpp"
#include "io/batch_io.hpp"
#include "io/gguf_io.hpp"
#include "io/registry.hpp"
#include "recommend/query.hpp"
#include "recommend/recommend.hpp"
#include "recommend/front_end.hpp"

using namespace hwplan;

namespace {

const io::Registry& registry() {
  static io::Registry r;
  return r;
}

Model gpt_1t() {
  // Megatron-LM's 1T configuration (Narayanan et al. 2021, Table 1): 128 layers, d 25600, 160 heads.
  Model m = registry().model("gpt3-175b");
  m.id = "gpt-1t";
  m.layers = 128;
  m.hidden_size = 25600;
  m.attention_heads = m.kv_heads = 160;
  m.head_dim = 160;
  m.ffn_hidden_size = 4 * 25600;
  return m;
}

void BM_TrainingEstimate(benchmark::State& state) {
  Model m = registry().model("llama-2-7b");
  EstimateInput in;
  in.model = &m;
  in.device = &registry().device("h100-sxm");
  in.workload.seq = 4096;
  in.plan.micro_batch = 1;
  for (auto _ : state) benchmark::DoNotOptimize(estimate(in));
}
BENCHMARK(BM_TrainingEstimate);

void BM_InferenceEstimate(benchmark::State& state) {
  Model m = registry().model("llama-3-70b");
  EstimateInput in;
  in.model = &m;
  in.device = &registry().device("h100-sxm");
  in.system.count = 4;
  in.plan.tp = 4;
  in.workload.task = Task::kInfer;
  in.workload.prompt = 2048;
  in.workload.generate = 512;
  in.plan.micro_batch = 16;
  for (auto _ : state) benchmark::DoNotOptimize(estimate(in));
}
BENCHMARK(BM_InferenceEstimate);

// ResNet-50 training with its 54 listed convolutions priced one by one (forward, data and weight gradients, split-K
// candidates): the per-layer CNN model's cost.
void BM_CnnTrainingEstimate(benchmark::State& state) {
  Model m = registry().model("resnet-50");
  EstimateInput in;
  in.model = &m;
  in.device = &registry().device("a100-80gb-sxm");
  in.workload.seq = 1;
  in.workload.precision = Precision::kFp16;
  in.workload.optimizer = Optimizer::kSgd;
  in.plan.micro_batch = 256;
  for (auto _ : state) benchmark::DoNotOptimize(estimate(in));
}
BENCHMARK(BM_CnnTrainingEstimate);

void BM_LayoutSearch1T3072(benchmark::State& state) {
  Model m = gpt_1t();
  EstimateInput in;
  in.model = &m;
  in.device = &registry().device("a100-80gb-sxm");
  in.system.count = 3072;
  in.workload.seq = 2048;
  SearchSpace space;
  space.global_batch = 3072;
  space.prune = state.range(0) != 0;
  long long layouts = 0;
  for (auto _ : state) {
    SearchResult r = search_layouts(in, space);
    layouts += r.layouts_evaluated;
    benchmark::DoNotOptimize(r);
  }
  state.counters["layouts"] = benchmark::Counter(static_cast<double>(layouts) / state.iterations());
  state.counters["layouts_per_s"] = benchmark::Counter(static_cast<double>(layouts), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LayoutSearch1T3072)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_RecommendCatalog(benchmark::State& state) {
  WorkloadSpec w;
  w.model = "llama-2-7b";
  w.task = "lora";
  RecommendSpec spec;  // no constraints: every device at every count up to 64
  for (auto _ : state) benchmark::DoNotOptimize(recommend(registry(), w, spec, 1));
}
BENCHMARK(BM_RecommendCatalog)->Unit(benchmark::kMillisecond);

void BM_Batch10k(benchmark::State& state) {
  std::ostringstream yaml;
  yaml << "scenarios:\n";
  const char* devices[] = {"t4", "a10", "rtx-4090", "a100-80gb-sxm", "h100-sxm", "l4", "mi300x", "rtx-3090"};
  const char* models[] = {"gpt2", "llama-2-7b", "bert-large", "mistral-7b", "llama-3-8b"};
  for (int i = 0; i < 10000; ++i)
    yaml << "  - {name: s" << i << ", model: " << models[i % 5] << ", device: " << devices[i % 8] << ", batch: " << 1 + i % 8
         << ", seq: " << 512 * (1 + i % 4) << (i % 3 == 0 ? ", task: infer" : "") << "}\n";
  std::string text = yaml.str();
  for (auto _ : state) {
    auto scenarios = io::parse_batch(text, "bench.yaml");
    double sum = 0;
    for (const auto& s : scenarios) {
      Query q = resolve_query(registry(), s.workload);
      sum += run_query(q).estimate.memory.total();
    }
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_Batch10k)->Unit(benchmark::kMillisecond);

// A 40 GB GGUF (sparse: only the header is written) shaped like a Llama-3-70B Q4_K_M file: 128,256 tokenizer
// strings and 723 tensor infos. Reading it must cost what the header costs (target < 10 ms).
void BM_Gguf40GbHeader(benchmark::State& state) {
  std::string b = "GGUF";
  auto u32 = [&](std::uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](std::uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
  auto str = [&](const std::string& v) { u64(v.size()); b += v; };
  auto kv = [&](const std::string& k, std::uint32_t v) { str(k); u32(4); u32(v); };
  const int layers = 80;
  u32(3);
  u64(3 + 9 * layers);
  u64(8);
  str("general.architecture"); u32(8); str("llama");
  kv("llama.block_count", layers); kv("llama.embedding_length", 8192); kv("llama.feed_forward_length", 28672);
  kv("llama.attention.head_count", 64); kv("llama.attention.head_count_kv", 8); kv("llama.context_length", 131072);
  str("tokenizer.ggml.tokens"); u32(9); u32(8); u64(128256);
  for (int i = 0; i < 128256; ++i) str("tok" + std::to_string(i));
  auto tensor = [&](const std::string& name, std::uint64_t a, std::uint64_t c, std::uint32_t type) {
    str(name); u32(c ? 2 : 1); u64(a); if (c) u64(c); u32(type); u64(0);
  };
  tensor("token_embd.weight", 8192, 128256, 12);
  tensor("output_norm.weight", 8192, 0, 0);
  tensor("output.weight", 8192, 128256, 14);
  for (int l = 0; l < layers; ++l) {
    std::string p = "blk." + std::to_string(l) + ".";
    tensor(p + "attn_norm.weight", 8192, 0, 0);
    tensor(p + "attn_q.weight", 8192, 8192, 12);
    tensor(p + "attn_k.weight", 8192, 1024, 12);
    tensor(p + "attn_v.weight", 8192, 1024, 14);
    tensor(p + "attn_output.weight", 8192, 8192, 12);
    tensor(p + "ffn_norm.weight", 8192, 0, 0);
    tensor(p + "ffn_gate.weight", 8192, 28672, 12);
    tensor(p + "ffn_up.weight", 8192, 28672, 12);
    tensor(p + "ffn_down.weight", 28672, 8192, 14);
  }
  std::string path = (std::filesystem::temp_directory_path() / "hwplan_bench_40gb.gguf").string();
  {
    std::ofstream out(path, std::ios::binary);
    out.write(b.data(), static_cast<std::streamsize>(b.size()));
  }
  std::filesystem::resize_file(path, 40ull * 1000 * 1000 * 1000);
  for (auto _ : state) {
    Model m = io::load_gguf(path);
    benchmark::DoNotOptimize(m.checkpoint_weight_bytes);
  }
  state.counters["header_bytes"] = static_cast<double>(b.size());
  std::filesystem::remove(path);
}
BENCHMARK(BM_Gguf40GbHeader)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
