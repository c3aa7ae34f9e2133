// Models from where users keep them: Hugging Face config.json files (tests/fixtures/hf, written from the public
// configs), the Hugging Face cache, GGUF and safetensors headers (written by the tests), user YAML files, and the
// zoo YAML round trip.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "estimators/params.hpp"
#include "io/gguf_io.hpp"
#include "io/hf_config.hpp"
#include "io/model_io.hpp"
#include "io/safetensors_io.hpp"
#include "test_util.hpp"

using namespace hwplan;
namespace fs = std::filesystem;

namespace {

Model fixture(const std::string& name) { return io::load_hf_config(test::source_path("tests/fixtures/hf/" + name)); }

fs::path temp_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("hwplan_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Little-endian writers for hand-made GGUF files.
struct Bytes {
  std::string s;
  template <typename T>
  Bytes& put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    s.append(b, sizeof(T));
    return *this;
  }
  Bytes& str(const std::string& v) {
    put<std::uint64_t>(v.size());
    s += v;
    return *this;
  }
  Bytes& kv_u32(const std::string& key, std::uint32_t v) { return str(key).put<std::uint32_t>(4).put(v); }
  Bytes& kv_str(const std::string& key, const std::string& v) { return str(key).put<std::uint32_t>(8).str(v); }
  Bytes& tensor(const std::string& name, std::vector<std::uint64_t> dims, std::uint32_t type) {
    str(name).put<std::uint32_t>(static_cast<std::uint32_t>(dims.size()));
    for (auto d : dims) put(d);
    return put(type).put<std::uint64_t>(0);
  }
};

// A two-layer LLaMA-shaped GGUF: hidden 256, 4 heads (2 KV), FFN 512, vocab 1000, Q4_K / Q6_K / F32 tensors.
std::string tiny_gguf() {
  Bytes b;
  b.s = "GGUF";
  const std::uint64_t h = 256, f = 512, v = 1000;
  std::vector<std::tuple<std::string, std::vector<std::uint64_t>, std::uint32_t>> tensors = {
      {"token_embd.weight", {h, v}, 14}, {"output_norm.weight", {h}, 0}, {"output.weight", {h, v}, 14}};
  for (int l = 0; l < 2; ++l) {
    std::string p = "blk." + std::to_string(l) + ".";
    tensors.push_back({p + "attn_norm.weight", {h}, 0});
    tensors.push_back({p + "attn_q.weight", {h, h}, 12});
    tensors.push_back({p + "attn_k.weight", {h, 128}, 12});
    tensors.push_back({p + "attn_v.weight", {h, 128}, 12});
    tensors.push_back({p + "attn_output.weight", {h, h}, 12});
    tensors.push_back({p + "ffn_norm.weight", {h}, 0});
    tensors.push_back({p + "ffn_gate.weight", {h, f}, 12});
    tensors.push_back({p + "ffn_up.weight", {h, f}, 12});
    tensors.push_back({p + "ffn_down.weight", {f, h}, 14});
  }
  b.put<std::uint32_t>(3).put<std::uint64_t>(tensors.size()).put<std::uint64_t>(10);
  b.kv_str("general.architecture", "llama").kv_str("general.name", "tiny llama");
  b.kv_u32("llama.block_count", 2).kv_u32("llama.embedding_length", 256).kv_u32("llama.feed_forward_length", 512);
  b.kv_u32("llama.attention.head_count", 4).kv_u32("llama.attention.head_count_kv", 2);
  b.kv_u32("llama.context_length", 2048).kv_u32("llama.vocab_size", 1000);
  // tokenizer.ggml.tokens: an array of 3 strings (skipped, counted)
  b.str("tokenizer.ggml.tokens").put<std::uint32_t>(9).put<std::uint32_t>(8).put<std::uint64_t>(3);
  b.str("a").str("bb").str("ccc");
  for (const auto& [name, dims, type] : tensors) b.tensor(name, dims, type);
  return b.s;
}

// Expected bytes of tiny_gguf(): Q4_K 144 B / 256, Q6_K 210 B / 256, F32 4 B.
double tiny_gguf_bytes() {
  const double h = 256, f = 512, v = 1000;
  double q6 = (2 * h * v + 2 * f * h) / 256 * 210;
  double q4 = 2 * (2 * h * h + 2 * h * 128 + 2 * h * f) / 256 * 144;
  double f32 = (h + 2 * 2 * h) * 4;
  return q6 + q4 + f32;
}

std::string safetensors_file(const std::string& header_json, std::size_t data_bytes) {
  std::string out(8, '\0');
  std::uint64_t n = header_json.size();
  std::memcpy(out.data(), &n, 8);
  return out + header_json + std::string(data_bytes, '\0');
}

}  // namespace

TEST_CASE("config.json fixtures: parameters within 1% of the published counts") {
  struct Case {
    const char* dir;
    double published;
  };
  // Published totals: Hugging Face safetensors counts of meta-llama/Llama-3.1-8B (8,030,261,248),
  // mistralai/Mistral-7B-v0.1 (7,241,732,096), mistralai/Mixtral-8x7B-v0.1 (46,702,792,704),
  // microsoft/Phi-3-mini-4k-instruct (3,821,079,552), tiiuae/falcon-7b (6,921,720,704), gpt2 (124,439,808);
  // Qwen2.5-7B model card: 7.61B; Gemma 2 report (arXiv:2408.00118) Table 1, 9B: 917,504,000 embedding +
  // 8,324,201,984 non-embedding; Gemma 3 report (arXiv:2503.19786) Table 1, 27B: 1,416M embedding + 25,600M
  // non-embedding (the 417M vision encoder is not planned); DeepSeek-V3 model card: 671B main model + 14B MTP = 685B.
  const Case cases[] = {{"llama-3.1-8b", 8030261248.0},  {"mistral-7b-v0.1", 7241732096.0}, {"mixtral-8x7b", 46702792704.0},
                        {"qwen2.5-7b", 7.61e9},          {"gemma-2-9b", 9241705984.0},     {"gemma-3-27b", 27016e6},
                        {"phi-3-mini", 3821079552.0},    {"falcon-7b", 6921720704.0},      {"gpt2", 124439808.0},
                        {"deepseek-v3", 685e9}};
  for (const auto& c : cases) {
    CAPTURE(c.dir);
    Model m = fixture(c.dir);
    CHECK(count_parameters(m).total == ::hwplan::test::approx(c.published).epsilon(0.01));
  }
  // Exact where the checkpoint count is known and the architecture is fully expressed.
  CHECK(count_parameters(fixture("llama-3.1-8b")).total == 8030261248.0);
  CHECK(count_parameters(fixture("falcon-7b")).total == 6921720704.0);
  CHECK(count_parameters(fixture("phi-3-mini")).total == 3821079552.0);
  CHECK(count_parameters(fixture("gpt2")).total == 124439808.0);
  // DeepSeek-V3: main model 671B (tech report, arXiv:2412.19437), MTP module ~14B; 37B activated per token.
  // The report's 37B is rounded to 1B (+/-1.4%); the zoo convention counts the embedding lookup as active.
  ParameterCounts ds = count_parameters(fixture("deepseek-v3"));
  CHECK(ds.total - ds.mtp == ::hwplan::test::approx(671e9).epsilon(0.01));
  CHECK(ds.mtp == ::hwplan::test::approx(14e9).epsilon(0.05));
  CHECK(ds.active == ::hwplan::test::approx(37e9).epsilon(0.02));
  CHECK(count_parameters(fixture("mixtral-8x7b")).active == ::hwplan::test::approx(12.9e9).epsilon(0.01));
}

TEST_CASE("config.json fixtures: architectures mapped") {
  Model gemma3 = fixture("gemma-3-27b");
  CHECK(gemma3.head_dim == 128);  // explicit head_dim != 5376 / 32
  CHECK(gemma3.sliding_window == 1024);
  CHECK(gemma3.sliding_window_layers == 52);  // 5 of every 6 of 62 layers are local
  CHECK(gemma3.tied_embeddings);
  CHECK(gemma3.ffn_activation == Activation::kGeglu);
  CHECK(gemma3.ingest_notes.size() >= 1);  // the language model of a multimodal checkpoint: said so
  Model gemma2 = fixture("gemma-2-9b");
  CHECK(gemma2.sliding_window_layers == 21);
  Model qwen = fixture("qwen2.5-7b");
  CHECK(qwen.linear_bias == LinearBias::kQkv);
  CHECK(qwen.sliding_window == 0);  // use_sliding_window false
  Model falcon = fixture("falcon-7b");
  CHECK(falcon.kv_heads == 1);
  CHECK(falcon.parallel_attention);
  Model ds = fixture("deepseek-v3");
  REQUIRE(ds.mla);
  REQUIRE(ds.moe);
  CHECK(ds.moe->dense_layers == 3);
  CHECK(ds.moe->expert_ffn_hidden_size == 2048);
  CHECK(ds.moe->shared_experts == 1);
  CHECK(ds.mtp_layers == 1);
  REQUIRE(ds.weight_format);
  CHECK(*ds.weight_format == WeightFormat::kFp8);  // quantization_config fp8 (block-scaled)
  CHECK(fixture("mistral-7b-v0.1").sliding_window == 4096);
}

TEST_CASE("KV-cache bytes per token per attention kind") {
  // bf16 = 2 bytes. GQA (Llama-3.1-8B): 32 layers x 2 (K, V) x 8 heads x 128 = 65,536 elements -> 131,072 B.
  CHECK(kv_cache_elements(fixture("llama-3.1-8b"), 1) * 2 == 131072.0);
  // MQA (Falcon-7B): 32 x 2 x 1 x 64 x 2 B = 8,192 B.
  CHECK(kv_cache_elements(fixture("falcon-7b"), 1) * 2 == 8192.0);
  // MHA (GPT-2): 12 x 2 x 768 x 2 B = 36,864 B.
  CHECK(kv_cache_elements(fixture("gpt2"), 1) * 2 == 36864.0);
  // MLA (DeepSeek-V3): 61 layers x (512 + 64) latent elements x 2 B = 70,272 B (issue 13).
  CHECK(kv_cache_elements(fixture("deepseek-v3"), 1) * 2 == 70272.0);
  // Explicit head_dim (Gemma-2-9B: 256, not 3584 / 16 = 224): 42 x 2 x 8 x 256 x 2 B = 344,064 B.
  CHECK(kv_cache_elements(fixture("gemma-2-9b"), 1) * 2 == 344064.0);
  // Sliding windows: Mistral-7B-v0.1 holds at most 4096 tokens on every layer.
  Model mistral = fixture("mistral-7b-v0.1");
  CHECK(kv_cache_elements(mistral, 32768) == kv_cache_elements(mistral, 4096));
  // Gemma-3-27B at 32k: 10 global layers hold 32,768 tokens, 52 local layers 1,024; 2 x 16 x 128 per layer-token.
  Model gemma3 = fixture("gemma-3-27b");
  CHECK(kv_cache_elements(gemma3, 32768) == 4096.0 * (10 * 32768 + 52 * 1024));
  // Against a single formula over all 62 layers the hybrid cache is 5.3x smaller.
  CHECK(4096.0 * 62 * 32768 / kv_cache_elements(gemma3, 32768) == ::hwplan::test::approx(5.34).epsilon(0.01));
}

TEST_CASE("estimates use the sliding window and the MLA latent for the KV cache") {
  auto run = [](const std::string& model, const std::string& extra) {
    return test::run_hwplan("estimate --model " + test::source_path("tests/fixtures/hf/" + model) +
                            " --device h100-sxm --task infer --prompt 32768 --generate 1 --format json " + extra);
  };
  auto r = run("gemma-3-27b", "");
  REQUIRE(r.exit_code == 0);
  // 4096 elements x (10 x 32769 + 52 x 1024) x 2 bytes
  CHECK(r.out.find("\"kv_cache\": " + std::to_string(static_cast<long long>(4096.0 * (10 * 32769 + 52 * 1024) * 2)) + ".0") !=
        std::string::npos);
  CHECK(r.out.find("multimodal checkpoint") != std::string::npos);  // the assumption travels as a warning
  auto ds = run("deepseek-v3", "--count 8");
  REQUIRE(ds.exit_code == 0);
  CHECK(ds.out.find("weights assumed fp8") != std::string::npos);
}

TEST_CASE("Hugging Face cache: org/name resolves to the refs/main snapshot") {
  fs::path cache = temp_dir("hf_cache");
  fs::path repo = cache / "models--test-org--Tiny-Llama";
  fs::create_directories(repo / "snapshots" / "aaa111");
  fs::create_directories(repo / "snapshots" / "bbb222");
  fs::create_directories(repo / "refs");
  write(repo / "refs" / "main", "bbb222\n");
  std::ifstream llama(test::source_path("tests/fixtures/hf/llama-3.1-8b/config.json"));
  std::stringstream text;
  text << llama.rdbuf();
  write(repo / "snapshots" / "bbb222" / "config.json", text.str());
  // The older snapshot is a GPT-2: picking it would be wrong.
  std::ifstream gpt2(test::source_path("tests/fixtures/hf/gpt2/config.json"));
  std::stringstream text2;
  text2 << gpt2.rdbuf();
  write(repo / "snapshots" / "aaa111" / "config.json", text2.str());
  ::setenv("HF_HUB_CACHE", cache.c_str(), 1);
  Model m = test::registry().model("test-org/Tiny-Llama");
  CHECK(m.id == "test-org/tiny-llama");
  CHECK(count_parameters(m).total == 8030261248.0);
  auto r = test::run_hwplan("estimate --model test-org/Tiny-Llama --device h100-sxm --task infer --prompt 128 --generate 16");
  CHECK(r.exit_code == 0);
  // Not cached: where it looked and how to fetch the file, exit 2.
  auto missing = test::run_hwplan("estimate --model test-org/Missing --device h100-sxm");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find(cache.string()) != std::string::npos);
  CHECK(missing.err.find("huggingface-cli download test-org/Missing config.json") != std::string::npos);
  ::unsetenv("HF_HUB_CACHE");
  fs::remove_all(cache);
}

TEST_CASE("GGUF: exact weight bytes from the ggml types, header only") {
  std::string bytes = tiny_gguf();
  io::GgufInfo info;
  Model m = io::parse_gguf(bytes, "tiny.gguf", &info);
  CHECK(info.architecture == "llama");
  CHECK(m.layers == 2);
  CHECK(m.hidden_size == 256);
  CHECK(m.kv_heads == 2);
  CHECK(m.vocab_size == 1000);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(info.total_bytes == tiny_gguf_bytes());
  CHECK(m.checkpoint_weight_bytes == tiny_gguf_bytes());
  CHECK(info.total_elements == count_parameters(m).total);  // the architecture accounts for every stored weight
  // The same file on disk with 1 GB of (sparse) tensor data after the header: only the header is read.
  fs::path dir = temp_dir("gguf");
  {
    std::ofstream out(dir / "tiny.gguf", std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  fs::resize_file(dir / "tiny.gguf", 1ull << 30);
  auto r = test::run_hwplan("models show " + (dir / "tiny.gguf").string() + " --format json");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"weight_bytes\": " + std::to_string(static_cast<long long>(tiny_gguf_bytes()))) != std::string::npos);
  // Truncated anywhere: an error naming the file and the byte offset, never a crash.
  for (std::size_t cut : {std::size_t{3}, std::size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
    CAPTURE(cut);
    CHECK_THROWS_AS(io::parse_gguf(bytes.substr(0, cut), "cut.gguf"), InputError);
  }
  // A tensor count of 2^63: rejected before anything is allocated.
  std::string hostile = bytes;
  std::uint64_t huge = 1ull << 63;
  std::memcpy(hostile.data() + 8, &huge, 8);
  CHECK_THROWS_WITH_AS(io::parse_gguf(hostile, "hostile.gguf"), doctest::Contains("tensor_count"), InputError);
  fs::remove_all(dir);
}

TEST_CASE("safetensors: dtypes and bytes from the header, config.json beside it") {
  fs::path dir = temp_dir("safetensors");
  fs::copy_file(test::source_path("tests/fixtures/hf/gpt2/config.json"), dir / "config.json");
  // Two tensors: a 4x8 BF16 matrix (64 bytes) and an 8-element F32 vector (32 bytes).
  std::string header = R"({"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,64]},)"
                       R"("b":{"dtype":"F32","shape":[8],"data_offsets":[64,96]}})";
  write(dir / "model.safetensors", safetensors_file(header, 96));
  io::SafetensorsInfo info;
  Model m = io::load_safetensors((dir / "model.safetensors").string(), &info);
  CHECK(info.total_bytes == 96.0);
  CHECK(info.tensors == 2);
  CHECK(info.by_dtype.at("BF16").second == 64.0);
  CHECK(m.checkpoint_weight_bytes == 96.0);
  CHECK(m.hidden_size == 768);  // from the config.json beside it
  // The directory and an index with shards resolve too.
  write(dir / "model.safetensors.index.json", R"({"metadata":{"total_size":96},"weight_map":{"a":"model.safetensors","b":"model.safetensors"}})");
  CHECK(io::load_safetensors((dir / "model.safetensors.index.json").string()).checkpoint_weight_bytes == 96.0);
  CHECK(test::run_hwplan("models show " + dir.string()).exit_code == 0);
  // A header length past the end of the file is an error at byte 0.
  std::string bad = safetensors_file(header, 96);
  std::uint64_t huge = 1ull << 40;
  std::memcpy(bad.data(), &huge, 8);
  io::SafetensorsInfo ignored;
  CHECK_THROWS_WITH_AS(io::parse_safetensors_header(bad, bad.size(), "bad.safetensors", ignored),
                       doctest::Contains("header_length"), InputError);
  fs::remove_all(dir);
}

TEST_CASE("config.json with wrong types or zero heads: exit 2 naming file, line and key") {
  fs::path dir = temp_dir("badjson");
  write(dir / "config.json", "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": \"4096\",\n  \"num_hidden_layers\": 2\n}\n");
  auto r = test::run_hwplan("models show " + (dir / "config.json").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("config.json:3:3: key 'hidden_size'") != std::string::npos);
  write(dir / "config.json", "{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
                             "\"num_attention_heads\": 0, \"intermediate_size\": 128}");
  r = test::run_hwplan("models show " + (dir / "config.json").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("num_attention_heads") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("user YAML files: optional published_parameters and linear_bias, '_' in ids, warnings when off") {
  fs::path dir = temp_dir("user_yaml");
  std::string base = "id: my_model\nname: mine\nfamily: decoder\nsource: me\nlayers: 2\nhidden_size: 256\n"
                     "attention_heads: 4\nffn_hidden_size: 512\nffn_activation: swiglu\nvocab_size: 1000\n"
                     "max_sequence_length: 2048\ntied_embeddings: false\nposition_embedding: rope\nnorm: rmsnorm\n";
  write(dir / "other-name.yaml", base);
  auto r = test::run_hwplan("models show " + (dir / "other-name.yaml").string());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("my_model") != std::string::npos);
  write(dir / "off.yaml", base + "published_parameters: 7000000000\n");
  r = test::run_hwplan("estimate --model " + (dir / "off.yaml").string() + " --device h100-sxm");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("published_parameters is 7.00B but the architecture gives") != std::string::npos);
  // A missing required key is reported as missing, even next to an unrelated unknown key.
  write(dir / "missing.yaml", "id: x\nname: x\nfamily: decoder\nsource: me\nlayers: 2\nhidden_sizes: 256\n");
  r = test::run_hwplan("models show " + (dir / "missing.yaml").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("key 'hidden_size': required key is missing") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("models show --format yaml loads back to the same model, for the whole zoo and the fixtures") {
  std::vector<Model> models = test::registry().models();
  for (const auto& entry : fs::directory_iterator(test::source_path("tests/fixtures/hf")))
    models.push_back(io::load_hf_config(entry.path().string()));
  for (const auto& m : models) {
    CAPTURE(m.id);
    std::string yaml = io::model_to_yaml(m);
    Model back = io::parse_model(yaml, "roundtrip.yaml");
    CHECK(back.id == io::model_id_from(m.id));
    CHECK(back.name == m.name);
    CHECK(back.family == m.family);
    CHECK(back.layers == m.layers);
    CHECK(back.decoder_layers == m.decoder_layers);
    CHECK(back.hidden_size == m.hidden_size);
    CHECK(back.attention_heads == m.attention_heads);
    CHECK(back.kv_heads == m.kv_heads);
    CHECK(back.head_dim == m.head_dim);
    CHECK(back.ffn_hidden_size == m.ffn_hidden_size);
    CHECK(back.ffn_activation == m.ffn_activation);
    CHECK(back.vocab_size == m.vocab_size);
    CHECK(back.max_sequence_length == m.max_sequence_length);
    CHECK(back.tied_embeddings == m.tied_embeddings);
    CHECK(back.position_embedding == m.position_embedding);
    CHECK(back.norm == m.norm);
    CHECK(back.linear_bias == m.linear_bias);
    CHECK(back.parallel_attention == m.parallel_attention);
    CHECK(back.dropout == m.dropout);
    CHECK(back.moe.has_value() == m.moe.has_value());
    if (m.moe && back.moe) {
      CHECK(back.moe->experts == m.moe->experts);
      CHECK(back.moe->experts_per_token == m.moe->experts_per_token);
      CHECK(back.moe->shared_experts == m.moe->shared_experts);
      CHECK(back.expert_ffn() == m.expert_ffn());
      CHECK(back.moe->dense_layers == m.moe->dense_layers);
    }
    CHECK(back.mla.has_value() == m.mla.has_value());
    if (m.mla && back.mla) CHECK(back.mla->kv_lora_rank == m.mla->kv_lora_rank);
    CHECK(back.sliding_window == m.sliding_window);
    CHECK(back.sliding_window_layers == m.sliding_window_layers);
    CHECK(back.mtp_layers == m.mtp_layers);
    CHECK(back.weight_format == m.weight_format);
    CHECK(back.extra_parameters == m.extra_parameters);
    CHECK(back.extra_parameters_note == m.extra_parameters_note);
    CHECK(back.generic_parameters == m.generic_parameters);
    CHECK(back.forward_flops_per_sample == ::hwplan::test::approx(m.forward_flops_per_sample).epsilon(1e-15));
    CHECK(back.activation_bytes_per_sample == ::hwplan::test::approx(m.activation_bytes_per_sample).epsilon(1e-15));
    CHECK(back.inference_activation_bytes_per_sample ==
          ::hwplan::test::approx(m.inference_activation_bytes_per_sample).epsilon(1e-15));
    REQUIRE(back.convolutions.size() == m.convolutions.size());
    for (std::size_t i = 0; i < m.convolutions.size(); ++i) {
      const ConvLayer &a = m.convolutions[i], &b = back.convolutions[i];
      CHECK(a.count == b.count);
      CHECK(a.in_channels == b.in_channels);
      CHECK(a.out_channels == b.out_channels);
      CHECK(a.kernel == b.kernel);
      CHECK(a.stride == b.stride);
      CHECK(a.output_size == b.output_size);
      CHECK(a.groups == b.groups);
    }
    CHECK(back.input == m.input);
    CHECK(back.published_parameters == m.published_parameters);
    CHECK(back.published_active_parameters == m.published_active_parameters);
    CHECK(count_parameters(back).total == count_parameters(m).total);
    CHECK(count_parameters(back).active == count_parameters(m).active);
  }
}

TEST_CASE("models import writes a zoo file that estimate takes") {
  fs::path dir = temp_dir("import");
  std::string out = (dir / "ds.yaml").string();
  auto r = test::run_hwplan("models import " + test::source_path("tests/fixtures/hf/deepseek-v3") + " -o " + out);
  REQUIRE(r.exit_code == 0);
  r = test::run_hwplan("models show " + out + " --format json");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"kv_cache_bytes_per_token_bf16\": 70272") != std::string::npos);
  CHECK(test::run_hwplan("estimate --model " + out + " --device h100-sxm --count 8 --task infer --prompt 512 --generate 64").exit_code == 0);
  fs::remove_all(dir);
}

TEST_CASE("sliding-window layers make long prefill cheaper and the KV cache smaller") {
  fs::path dir = temp_dir("window");
  std::string yaml = io::model_to_yaml(fixture("gemma-3-27b"));
  write(dir / "local.yaml", yaml);
  std::string global = yaml;
  auto cut = global.find("sliding_window:");
  REQUIRE(cut != std::string::npos);
  auto end = global.find('\n', global.find("sliding_window_layers:"));
  global.erase(cut, end + 1 - cut);
  write(dir / "global.yaml", global);
  auto prefill = [&](const std::string& file) {
    auto r = test::run_hwplan("estimate --model " + (dir / file).string() +
                              " --device h100-sxm --task infer --prompt 32768 --generate 1 --format json");
    REQUIRE(r.exit_code == 0);
    auto at = r.out.find("\"prefill_seconds\": ");
    REQUIRE(at != std::string::npos);
    return std::stod(r.out.substr(at + 19));
  };
  double local = prefill("local.yaml"), all_global = prefill("global.yaml");
  CHECK(local < all_global);
  // Attention is only part of the layer: the saving is real but bounded by the projections and the MLP.
  CHECK(local > 0.3 * all_global);
  fs::remove_all(dir);
}

TEST_CASE("quantised checkpoints: weight format and bytes with group scales and zero points") {
  fs::path dir = temp_dir("quant");
  std::ifstream in(test::source_path("tests/fixtures/hf/llama-3.1-8b/config.json"));
  std::stringstream text;
  text << in.rdbuf();
  std::string config = text.str();
  config.insert(config.rfind('}'), R"(, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128})");
  write(dir / "config.json", config);
  Model m = io::load_hf_config(dir.string());
  REQUIRE(m.weight_format);
  CHECK(*m.weight_format == WeightFormat::kInt4);
  ParameterCounts c = count_parameters(m);
  const double kept = c.embedding + c.output;  // embedding, LM head and final norm stay in 16 bits
  // 4 bits per weight + an fp16 scale and a 4-bit zero point per 128 weights.
  CHECK(m.checkpoint_weight_bytes == ::hwplan::test::approx((c.total - kept) * (0.5 + 2.5 / 128) + kept * 2));
  CHECK(m.checkpoint_weight_bytes / 1e9 == ::hwplan::test::approx(5.73).epsilon(0.01));
  CHECK(m.fused_dequant_kernels);
  // An 8-bit GPTQ checkpoint decodes in eager code through one kernel per linear (AutoGPTQ's 8-bit QuantLinear), not
  // through LLM.int8()'s dozen, which a bare --weights int8 means.
  {
    std::string gptq8 = text.str();
    gptq8.insert(gptq8.rfind('}'), R"(, "quantization_config": {"quant_method": "gptq", "bits": 8, "group_size": 128})");
    write(dir / "config.json", gptq8);
    const std::string args = " --device a100-80gb-sxm --task infer --engine hf --prompt 128 --generate 64 --format json";
    auto from_config = nlohmann::json::parse(test::run_hwplan("estimate --model " + dir.string() + args).out);
    auto bare = nlohmann::json::parse(test::run_hwplan("estimate --model " + dir.string() + args + " --weights int8").out);
    CHECK(from_config["workload"]["weights"] == "int8");
    CHECK(from_config["inference"]["decode_tokens_per_second"].get<double>() >
          1.5 * bare["inference"]["decode_tokens_per_second"].get<double>());
  }
  // A ModelOpt hf_quant_config.json beside a plain config: NVFP4 (fp8 scale per 16 values).
  write(dir / "config.json", text.str());
  write(dir / "hf_quant_config.json", R"({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "group_size": 16}})");
  Model fp4 = io::load_hf_config(dir.string());
  REQUIRE(fp4.weight_format);
  CHECK(fp4.checkpoint_weight_bytes == ::hwplan::test::approx((c.total - kept) * (0.5 + 1.0 / 16) + kept * 2));
  auto r = test::run_hwplan("estimate --model " + dir.string() + " --device rtx-4090 --task infer --prompt 128 --generate 16");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("hf_quant_config.json NVFP4") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("GGUF: DeepSeek-V2 metadata gives MLA, shared experts and dense first layers") {
  // llama.cpp's deepseek2 keys for DeepSeek-V2-Lite (config.json: kv_lora_rank 512, qk 128 + 64, v 128,
  // 64 routed + 2 shared experts of 1408, 6 per token, first_k_dense_replace 1).
  Bytes b;
  b.s = "GGUF";
  b.put<std::uint32_t>(3).put<std::uint64_t>(1).put<std::uint64_t>(16);
  b.kv_str("general.architecture", "deepseek2");
  b.kv_u32("deepseek2.block_count", 27).kv_u32("deepseek2.embedding_length", 2048);
  b.kv_u32("deepseek2.feed_forward_length", 10944).kv_u32("deepseek2.attention.head_count", 16);
  b.kv_u32("deepseek2.attention.head_count_kv", 16).kv_u32("deepseek2.attention.kv_lora_rank", 512);
  b.kv_u32("deepseek2.attention.key_length", 192).kv_u32("deepseek2.attention.value_length", 128);
  b.kv_u32("deepseek2.rope.dimension_count", 64).kv_u32("deepseek2.expert_count", 64);
  b.kv_u32("deepseek2.expert_used_count", 6).kv_u32("deepseek2.expert_shared_count", 2);
  b.kv_u32("deepseek2.expert_feed_forward_length", 1408).kv_u32("deepseek2.leading_dense_block_count", 1);
  b.kv_u32("deepseek2.vocab_size", 102400);
  b.tensor("output.weight", {2048, 102400}, 8);
  Model m = io::parse_gguf(b.s, "ds.gguf");
  REQUIRE(m.mla);
  CHECK(m.mla->qk_nope_head_dim == 128);
  CHECK(kv_cache_elements(m, 1) == 27.0 * 576);
  // DeepSeek-V2 paper, appendix B: 15.7B total.
  CHECK(count_parameters(m).total == ::hwplan::test::approx(15.7e9).epsilon(0.01));
}
