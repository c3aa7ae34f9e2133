// Hugging Face config.json -> Model. Keys and defaults follow the transformers configuration classes of each
// model_type (configuration_llama.py, configuration_gemma2.py, configuration_deepseek_v3.py, ...): a key the
// file omits takes that class's default, and the defaults that change a number are listed in the model's notes.
#include "io/hf_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/strings.hpp"
#include "estimators/params.hpp"
#include "io/model_io.hpp"
#include "io/yaml_map.hpp"

namespace hwplan::io {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::int64_t kMaxDim = 10'000'000;

// Reads typed values from one JSON object; errors name the file, the key and (found by searching the text for
// the quoted key) its line and column.
class JsonObject {
 public:
  JsonObject(const json& object, const std::string& text, const std::string& file, std::string prefix = "",
             SourceLocation at = {})
      : j_(object), text_(text), file_(file), prefix_(std::move(prefix)), at_(at) {
    if (at_.file.empty()) at_ = {file, 1, 1};
  }

  bool has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(where(key), prefix_ + key, message);
  }

  SourceLocation where(const std::string& key) const {
    SourceLocation at{file_, 0, 0};
    auto pos = text_.find("\"" + key + "\"");
    if (pos == std::string::npos || !j_.contains(key)) return at_;  // absent: the object's own position
    at.line = 1 + static_cast<int>(std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    auto line_start = text_.rfind('\n', pos);
    at.column = static_cast<int>(pos - (line_start == std::string::npos ? 0 : line_start + 1)) + 1;
    return at;
  }

  std::optional<std::int64_t> integer(const std::string& key, std::int64_t min = 1, std::int64_t max = kMaxDim) const {
    if (!has(key)) return std::nullopt;
    const json& v = j_.at(key);
    double d = 0;
    if (v.is_number_integer() || v.is_number_unsigned()) {
      d = v.is_number_unsigned() ? static_cast<double>(v.get<std::uint64_t>()) : static_cast<double>(v.get<std::int64_t>());
    } else if (v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>())) {
      d = v.get<double>();
    } else {
      fail(key, "expected a whole number, found " + describe(v));
    }
    if (d < static_cast<double>(min) || d > static_cast<double>(max))
      fail(key, "expected " + std::to_string(min) + ".." + std::to_string(max) + ", found " + v.dump());
    return static_cast<std::int64_t>(d);
  }
  std::int64_t required(const std::string& key, std::int64_t min = 1, std::int64_t max = kMaxDim) const {
    auto v = integer(key, min, max);
    if (!v) throw InputError(at_, prefix_ + key, "required key is missing");
    return *v;
  }
  std::optional<double> number(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = j_.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail(key, "expected a number, found " + describe(v));
    return v.get<double>();
  }
  std::optional<std::string> str(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = j_.at(key);
    if (!v.is_string()) fail(key, "expected text, found " + describe(v));
    return v.get<std::string>();
  }
  std::optional<bool> boolean(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = j_.at(key);
    if (!v.is_boolean()) fail(key, "expected true or false, found " + describe(v));
    return v.get<bool>();
  }
  std::optional<JsonObject> object(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = j_.at(key);
    if (!v.is_object()) fail(key, "expected an object, found " + describe(v));
    return JsonObject(v, text_, file_, prefix_ + key + ".", where(key));
  }
  const json& raw(const std::string& key) const { return j_.at(key); }

  static std::string describe(const json& v) {
    std::string d = v.dump();
    if (d.size() > 40) d = d.substr(0, 37) + "...";
    return std::string(v.type_name()) + " " + d;
  }

 private:
  const json& j_;
  const std::string& text_;
  std::string file_;
  std::string prefix_;
  SourceLocation at_;  // the object itself: where a missing key is reported
};

const std::vector<std::string> kModelTypes = {
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3",
    "gemma3_text", "phi3", "falcon", "gpt2", "gptj", "gpt_neox", "deepseek_v2", "deepseek_v3"};

// Per model_type defaults of the transformers configuration classes, for keys a config.json may omit.
struct Defaults {
  bool tied = false;
  const char* activation = "silu";
  std::int64_t vocab = 32000;
  std::int64_t context = 2048;
  bool gemma = false;
};

Defaults defaults_for(const std::string& type) {
  Defaults d;
  if (type == "gemma" || type == "gemma2") d = {true, "gelu_pytorch_tanh", 256000, 8192, true};
  if (type == "gemma3_text") d = {true, "gelu_pytorch_tanh", 262208, 131072, true};
  if (type == "qwen2" || type == "qwen2_moe" || type == "qwen3" || type == "qwen3_moe") d.vocab = 151936;
  if (type == "phi3") d.vocab = 32064;
  if (type == "deepseek_v2" || type == "deepseek_v3") d.vocab = 102400;
  return d;
}

Activation activation_of(const JsonObject& c, const std::string& key, const std::string& name, bool gated) {
  if (name == "silu" || name == "swish") return gated ? Activation::kSwiglu : Activation::kGelu;
  if (name == "gelu_pytorch_tanh" || name == "gelu_new" || name == "gelu_fast")
    return gated ? Activation::kGeglu : Activation::kGeluTanh;
  if (name == "gelu") return gated ? Activation::kGeglu : Activation::kGelu;
  if (name == "relu") return Activation::kRelu;
  c.fail(key, "activation '" + name + "' is not one of silu, gelu, gelu_new, gelu_pytorch_tanh, relu");
}

void set_heads(Model& m, const JsonObject& c, const char* heads_key, const char* kv_key) {
  m.attention_heads = c.required(heads_key, 1, 1'000'000);
  m.kv_heads = c.integer(kv_key, 1, 1'000'000).value_or(m.attention_heads);
  if (m.attention_heads % m.kv_heads != 0)
    c.fail(kv_key, std::to_string(m.kv_heads) + " key/value heads do not divide " + std::to_string(m.attention_heads) +
                       " attention heads");
  if (auto hd = c.integer("head_dim")) {
    m.head_dim = *hd;
  } else {
    if (m.hidden_size % m.attention_heads != 0)
      c.fail(heads_key, std::to_string(m.attention_heads) + " heads do not divide hidden_size " +
                            std::to_string(m.hidden_size) + " and no head_dim is given");
    m.head_dim = m.hidden_size / m.attention_heads;
  }
}

// Decoder families laid out like LLaMA (RMSNorm, RoPE, gated MLP, no biases unless said).
void map_llama_like(Model& m, const JsonObject& c, const std::string& type, std::vector<std::string>& notes) {
  Defaults d = defaults_for(type);
  std::string absent;
  for (const char* key : {"vocab_size", "max_position_embeddings", "tie_word_embeddings"})
    if (!c.has(key)) absent += std::string(absent.empty() ? "" : ", ") + key;
  if (type == "gemma3_text" && !c.has("sliding_window_pattern") && !c.has("layer_types"))
    absent += std::string(absent.empty() ? "" : ", ") + "sliding_window_pattern";
  if (!absent.empty()) notes.push_back("absent from the config, the transformers defaults for " + type + " were used: " + absent);
  m.hidden_size = c.required("hidden_size");
  m.layers = c.required("num_hidden_layers", 1, 100000);
  set_heads(m, c, "num_attention_heads", "num_key_value_heads");
  m.ffn_hidden_size = c.required("intermediate_size");
  const char* act_key = d.gemma && c.has("hidden_activation") ? "hidden_activation" : "hidden_act";
  m.ffn_activation = activation_of(c, act_key, c.str(act_key).value_or(d.activation), true);
  m.vocab_size = c.integer("vocab_size", 1, 100'000'000).value_or(d.vocab);
  m.max_sequence_length = c.integer("max_position_embeddings", 1, 1'000'000'000).value_or(d.context);
  m.tied_embeddings = c.boolean("tie_word_embeddings").value_or(d.tied);
  m.position_embedding = PositionEmbedding::kRope;
  m.norm = NormKind::kRmsNorm;
  bool qkv_bias = type == "qwen2" || type == "qwen2_moe";  // Qwen2 puts biases on q, k and v (not o)
  if (auto b = c.boolean("attention_bias")) qkv_bias = *b;
  m.linear_bias = qkv_bias ? LinearBias::kQkv : LinearBias::kNone;
  if (type == "phi3" && !c.has("sliding_window")) return;
  // Sliding windows: Mistral v0.1 on every layer; Qwen only with use_sliding_window; Gemma 2 every other layer
  // (even layers); Gemma 3 five of every six (layer_types when the file lists them).
  bool use_window = !(type.rfind("qwen", 0) == 0) || c.boolean("use_sliding_window").value_or(false);
  if (type == "gemma") use_window = false;
  if (use_window && c.has("sliding_window")) {
    m.sliding_window = c.required("sliding_window", 1, 1'000'000'000);
    m.sliding_window_layers = m.layers;
    if (type == "gemma2") m.sliding_window_layers = (m.layers + 1) / 2;
    // Qwen2/3 (modeling_qwen2.py): layers from max_window_layers on use the window.
    if (type.rfind("qwen", 0) == 0 && c.has("max_window_layers"))
      m.sliding_window_layers = m.layers - std::min(m.layers, *c.integer("max_window_layers", 0, 100000));
    if (type == "gemma3_text") {
      auto pattern = c.integer("sliding_window_pattern", 1, 100000).value_or(6);
      m.sliding_window_layers = m.layers - m.layers / pattern;
    }
    if (c.has("layer_types")) {
      const json& types = c.raw("layer_types");
      if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.layers)
        c.fail("layer_types", "expected a list of " + std::to_string(m.layers) + " layer types");
      std::int64_t sliding = 0;
      for (const auto& t : types) {
        if (!t.is_string()) c.fail("layer_types", "expected text entries, found " + JsonObject::describe(t));
        if (t.get<std::string>() == "sliding_attention") ++sliding;
      }
      m.sliding_window_layers = sliding;
    }
    if (m.sliding_window >= m.max_sequence_length) m.sliding_window = m.sliding_window_layers = 0;  // no effect
  }
}

void map_moe(Model& m, const JsonObject& c, const std::string& type) {
  MoeConfig moe;
  if (type == "mixtral") {
    moe.experts = static_cast<int>(c.required("num_local_experts", 1, 100000));
  } else if (type == "deepseek_v2" || type == "deepseek_v3") {
    moe.experts = static_cast<int>(c.required("n_routed_experts", 1, 100000));
    moe.shared_experts = static_cast<int>(c.integer("n_shared_experts", 0, 100000).value_or(0));
    moe.dense_layers = c.integer("first_k_dense_replace", 0, m.layers - 1).value_or(0);
    if (c.integer("moe_layer_freq", 1, 100000).value_or(1) != 1)
      c.fail("moe_layer_freq", "only 1 (every layer after the dense ones) is supported");
  } else {
    moe.experts = static_cast<int>(c.required("num_experts", 1, 100000));
  }
  moe.experts_per_token = static_cast<int>(c.required("num_experts_per_tok", 1, 100000));
  if (moe.experts_per_token > moe.experts)
    c.fail("num_experts_per_tok", "is larger than the number of experts (" + std::to_string(moe.experts) + ")");
  if (auto f = c.integer("moe_intermediate_size")) moe.expert_ffn_hidden_size = *f;
  if (type == "qwen2_moe") {
    // One shared expert of shared_expert_intermediate_size, written as that many expert-sized shared experts.
    auto shared = c.integer("shared_expert_intermediate_size", 0, kMaxDim).value_or(0);
    std::int64_t per = moe.expert_ffn_hidden_size > 0 ? moe.expert_ffn_hidden_size : m.ffn_hidden_size;
    if (shared % per != 0)
      c.fail("shared_expert_intermediate_size", "is not a multiple of moe_intermediate_size " + std::to_string(per));
    moe.shared_experts = static_cast<int>(shared / per);
  }
  if (type == "qwen3_moe" && c.integer("decoder_sparse_step", 1, 100000).value_or(1) != 1)
    c.fail("decoder_sparse_step", "only 1 (every layer MoE) is supported");
  m.moe = moe;
}

void map_deepseek(Model& m, const JsonObject& c, const std::string& type, std::vector<std::string>& notes) {
  map_llama_like(m, c, type, notes);
  MlaConfig a;
  a.q_lora_rank = c.integer("q_lora_rank", 1, kMaxDim).value_or(0);
  a.kv_lora_rank = c.required("kv_lora_rank");
  a.qk_nope_head_dim = c.required("qk_nope_head_dim", 0, kMaxDim);
  a.qk_rope_head_dim = c.required("qk_rope_head_dim", 0, kMaxDim);
  a.v_head_dim = c.required("v_head_dim");
  if (a.qk_nope_head_dim + a.qk_rope_head_dim == 0) c.fail("qk_rope_head_dim", "query/key heads of size 0");
  m.mla = a;
  // Training-time attention runs as multi-head attention on heads of nope + rope.
  m.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
  m.kv_heads = m.attention_heads;
  m.mtp_layers = c.integer("num_nextn_predict_layers", 0, 1000).value_or(0);
  if (c.has("n_routed_experts")) map_moe(m, c, type);
}

void map_gpt2(Model& m, const JsonObject& c) {
  m.hidden_size = c.required("n_embd");
  m.layers = c.required("n_layer", 1, 100000);
  m.attention_heads = c.required("n_head", 1, 1'000'000);
  if (m.hidden_size % m.attention_heads != 0)
    c.fail("n_head", std::to_string(m.attention_heads) + " heads do not divide n_embd " + std::to_string(m.hidden_size));
  m.kv_heads = m.attention_heads;
  m.head_dim = m.hidden_size / m.attention_heads;
  m.ffn_hidden_size = c.integer("n_inner").value_or(4 * m.hidden_size);
  m.ffn_activation = activation_of(c, "activation_function", c.str("activation_function").value_or("gelu_new"), false);
  m.vocab_size = c.integer("vocab_size", 1, 100'000'000).value_or(50257);
  m.max_sequence_length = c.integer("n_positions", 1, 1'000'000'000).value_or(1024);
  m.tied_embeddings = c.boolean("tie_word_embeddings").value_or(true);
  m.position_embedding = PositionEmbedding::kLearned;
  m.norm = NormKind::kLayerNorm;
  m.linear_bias = LinearBias::kAll;
}

void map_gptj(Model& m, const JsonObject& c, std::vector<std::string>& notes) {
  map_gpt2(m, c);
  m.max_sequence_length = c.integer("n_positions", 1, 1'000'000'000).value_or(2048);
  m.tied_embeddings = c.boolean("tie_word_embeddings").value_or(false);
  m.position_embedding = PositionEmbedding::kRope;
  m.parallel_attention = true;
  m.linear_bias = LinearBias::kNone;
  // GPT-J: attention projections without bias, MLP and LM head with bias.
  m.extra_parameters = m.layers * (m.ffn_hidden_size + m.hidden_size) + m.vocab_size;
  m.extra_parameters_note = "GPT-J MLP and LM-head biases";
  notes.push_back("GPT-J MLP and LM-head biases counted as extra parameters");
}

void map_neox(Model& m, const JsonObject& c) {
  m.hidden_size = c.required("hidden_size");
  m.layers = c.required("num_hidden_layers", 1, 100000);
  set_heads(m, c, "num_attention_heads", "num_key_value_heads");
  m.ffn_hidden_size = c.integer("intermediate_size").value_or(4 * m.hidden_size);
  m.ffn_activation = activation_of(c, "hidden_act", c.str("hidden_act").value_or("gelu"), false);
  m.vocab_size = c.integer("vocab_size", 1, 100'000'000).value_or(50432);
  m.max_sequence_length = c.integer("max_position_embeddings", 1, 1'000'000'000).value_or(2048);
  m.tied_embeddings = c.boolean("tie_word_embeddings").value_or(false);
  m.position_embedding = PositionEmbedding::kRope;
  m.norm = NormKind::kLayerNorm;
  m.linear_bias = c.boolean("attention_bias").value_or(true) ? LinearBias::kAll : LinearBias::kNone;
  m.parallel_attention = false;  // NeoX's parallel residual still has two norms per block
}

void map_falcon(Model& m, const JsonObject& c) {
  m.hidden_size = c.required("hidden_size");
  m.layers = c.integer("num_hidden_layers", 1, 100000).value_or(0);
  if (m.layers == 0) m.layers = c.required("n_layer", 1, 100000);
  const char* heads_key = c.has("num_attention_heads") ? "num_attention_heads" : "n_head";
  m.attention_heads = c.required(heads_key, 1, 1'000'000);
  if (m.hidden_size % m.attention_heads != 0)
    c.fail(heads_key, std::to_string(m.attention_heads) + " heads do not divide hidden_size " + std::to_string(m.hidden_size));
  m.head_dim = m.hidden_size / m.attention_heads;
  const bool new_arch = c.boolean("new_decoder_architecture").value_or(false);
  if (new_arch) m.kv_heads = c.integer("num_kv_heads", 1, 1'000'000).value_or(m.attention_heads);
  else m.kv_heads = c.boolean("multi_query").value_or(true) ? 1 : m.attention_heads;
  if (m.attention_heads % m.kv_heads != 0) c.fail("num_kv_heads", "does not divide the attention heads");
  m.ffn_hidden_size = c.integer("ffn_hidden_size").value_or(4 * m.hidden_size);
  m.ffn_activation = Activation::kGelu;
  m.vocab_size = c.integer("vocab_size", 1, 100'000'000).value_or(65024);
  m.max_sequence_length = c.integer("max_position_embeddings", 1, 1'000'000'000).value_or(2048);
  m.tied_embeddings = c.boolean("tie_word_embeddings").value_or(true);
  m.position_embedding = c.boolean("alibi").value_or(false) ? PositionEmbedding::kAlibi : PositionEmbedding::kRope;
  m.norm = NormKind::kLayerNorm;
  m.linear_bias = c.boolean("bias").value_or(false) ? LinearBias::kAll : LinearBias::kNone;
  m.parallel_attention = c.boolean("parallel_attn").value_or(true);
  if (new_arch) {
    // Falcon-40B/180B: two layer norms (attention and MLP branches) feeding the parallel block.
    m.extra_parameters = m.layers * 2 * m.hidden_size;
    m.extra_parameters_note = "second layer norm per block (new_decoder_architecture)";
  }
}

// quantization_config -> weight format.
// Bytes of a quantised checkpoint: the linear layers in the quantised format with its scales (and zero points),
// the embeddings, output head and norms left in 16 bits (GPTQ, AWQ, bitsandbytes and FP8 checkpoints all keep
// them so). The estimate says when it uses the format (src/recommend/query.cpp); models show prints it.
void set_quantised_bytes(Model& m, double linear_bytes_per_param, const std::string& how) {
  ParameterCounts c = count_parameters(m);
  const double unquantised = c.embedding + c.output;
  m.checkpoint_weight_bytes = (c.total - unquantised) * linear_bytes_per_param + unquantised * 2;
  m.checkpoint_dtypes = how;
}

void map_quantization(Model& m, const JsonObject& c, std::vector<std::string>& notes) {
  auto q = c.object("quantization_config");
  if (!q) return;
  std::string method = to_lower(q->str("quant_method").value_or(""));
  std::optional<WeightFormat> format;
  if (method == "gptq" || method == "awq") {
    auto bits = q->integer("bits", 1, 64).value_or(4);
    if (bits == 4) format = WeightFormat::kInt4;
    else if (bits == 8) format = WeightFormat::kInt8;
    else q->fail("bits", "only 4 and 8-bit " + method + " are modelled");
    // Per group of group_size weights (per output column when -1): an fp16 scale and a packed zero point.
    auto group = q->has("group_size") && q->raw("group_size").is_number_integer() && q->raw("group_size").get<std::int64_t>() == -1
                     ? m.hidden_size
                     : q->integer("group_size", 1, 1'000'000).value_or(128);
    double bits_d = static_cast<double>(bits);
    m.fused_dequant_kernels = true;
    set_quantised_bytes(m, bits_d / 8 + (2 + bits_d / 8) / static_cast<double>(group),
                        method + " " + std::to_string(bits) + "-bit, group " + std::to_string(group) +
                            " (fp16 scale and packed zero point per group); embeddings and head in 16 bits");
  } else if (method == "bitsandbytes") {
    if (q->boolean("load_in_4bit").value_or(false)) {
      format = WeightFormat::kNf4;
      set_quantised_bytes(m, bytes_per_param(WeightFormat::kNf4), "bitsandbytes 4-bit; embeddings and head in 16 bits");
    } else if (q->boolean("load_in_8bit").value_or(false)) {
      format = WeightFormat::kInt8;
      set_quantised_bytes(m, 1 + 4.0 / static_cast<double>(m.hidden_size),
                          "bitsandbytes LLM.int8() (fp32 scale per row); embeddings and head in 16 bits");
    } else {
      q->fail("load_in_4bit", "bitsandbytes config with neither load_in_4bit nor load_in_8bit");
    }
  } else if (method == "fp8" || method == "fbgemm_fp8") {
    format = WeightFormat::kFp8;
    // Block-scaled FP8 (DeepSeek-V3: weight_block_size [128, 128], an fp32 scale per block); else per tensor/row.
    double scale = 0;
    if (q->has("weight_block_size")) {
      const json& b = q->raw("weight_block_size");
      if (!b.is_array() || b.size() != 2 || !b[0].is_number_unsigned() || !b[1].is_number_unsigned() ||
          b[0].get<std::uint64_t>() == 0 || b[1].get<std::uint64_t>() == 0 || b[0].get<std::uint64_t>() > 65536 ||
          b[1].get<std::uint64_t>() > 65536)
        q->fail("weight_block_size", "expected two positive block sizes, found " + JsonObject::describe(b));
      scale = 4.0 / static_cast<double>(b[0].get<std::uint64_t>() * b[1].get<std::uint64_t>());
    }
    set_quantised_bytes(m, 1 + scale, scale > 0 ? "fp8, block-scaled (fp32 scale per block); embeddings and head in 16 bits"
                                                : "fp8; embeddings and head in 16 bits");
  } else {
    notes.push_back("quantization_config.quant_method '" + method + "' is not modelled: weights assumed bf16");
    return;
  }
  m.weight_format = format;
  m.weight_format_note = "quantization_config " + method + " in " + c.where("quantization_config").file;
}

// NVIDIA ModelOpt checkpoints (TensorRT-LLM) carry hf_quant_config.json beside config.json.
void map_modelopt(Model& m, const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) > (1u << 20)) return;
  std::string text = read_text_file(path, "file");
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError({path, 0, 0}, "", std::string("not valid JSON (") + e.what() + ")");
  }
  if (!root.is_object() || !root.contains("quantization") || !root["quantization"].is_object())
    throw InputError({path, 1, 1}, "quantization", "expected an object (ModelOpt hf_quant_config.json)");
  JsonObject q(root["quantization"], text, path, "quantization.");
  std::string algo = q.str("quant_algo").value_or("");
  std::string upper;
  for (char ch : algo) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (upper == "FP8" || upper == "FP8_PER_CHANNEL_PER_TOKEN") {
    m.weight_format = WeightFormat::kFp8;
    set_quantised_bytes(m, 1, "ModelOpt FP8; embeddings and head in 16 bits");
  } else if (upper == "W4A16_AWQ" || upper == "W4A8_AWQ" || upper == "INT4_AWQ") {
    m.weight_format = WeightFormat::kInt4;
    set_quantised_bytes(m, 0.5 + 2.0 / 128, "ModelOpt INT4 AWQ, group 128; embeddings and head in 16 bits");
  } else if (upper == "NVFP4") {
    // 4-bit values with an fp8 scale per 16 (NVFP4), computed on the int4/fp4 path.
    m.weight_format = WeightFormat::kInt4;
    set_quantised_bytes(m, 0.5 + 1.0 / 16, "ModelOpt NVFP4 (fp8 scale per 16); embeddings and head in 16 bits");
  } else if (upper == "W8A8_SQ_PER_CHANNEL" || upper == "INT8_SQ") {
    m.weight_format = WeightFormat::kInt8;
    set_quantised_bytes(m, 1, "ModelOpt INT8 SmoothQuant; embeddings and head in 16 bits");
  } else {
    q.fail("quant_algo", "'" + algo + "' is not one of FP8, NVFP4, W4A16_AWQ, W4A8_AWQ, W8A8_SQ_PER_CHANNEL");
  }
  m.weight_format_note = "hf_quant_config.json " + algo + " in " + path;
}

std::string read_file_text(const std::string& path) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) throw InputError({path, 0, 0}, "", "cannot read the file");
  if (size > (64u << 20)) throw InputError({path, 0, 0}, "", "a config.json of " + std::to_string(size) + " bytes is not plausible");
  return read_text_file(path, "file");
}

}  // namespace

const std::vector<std::string>& hf_model_types() { return kModelTypes; }

Model parse_hf_config(const std::string& text, const std::string& file, const std::string& id) {
  json root;
  try {
    root = json::parse(text, nullptr, true, false);
  } catch (const json::parse_error& e) {
    // nlohmann reports a byte offset; turn it into line:column.
    std::size_t offset = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
    auto start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
    int column = static_cast<int>(offset - (start == std::string::npos ? 0 : start + 1)) + 1;
    std::string what = e.what();
    auto colon = what.find("syntax error");
    throw InputError({file, line, column}, "", "not valid JSON (" + (colon == std::string::npos ? what : what.substr(colon)) + ")");
  } catch (const json::exception& e) {
    // A number beyond double's range ("1e555..."): nlohmann reports it as out_of_range, not as a parse error.
    throw InputError({file, 0, 0}, "", std::string("not valid JSON (") + e.what() + ")");
  }
  if (!root.is_object()) throw InputError({file, 1, 1}, "", "expected a JSON object (a Hugging Face config.json)");
  JsonObject top(root, text, file);
  std::vector<std::string> notes;
  std::string type = top.str("model_type").value_or("");
  const json* config = &root;
  std::string prefix;
  if (auto tc = top.object("text_config")) {
    config = &root.at("text_config");
    prefix = "text_config.";
    JsonObject t(*config, text, file, prefix, top.where("text_config"));
    std::string inner = t.str("model_type").value_or(type == "gemma3" ? "gemma3_text" : type);
    notes.push_back("multimodal checkpoint (" + (type.empty() ? std::string("?") : type) +
                    "): planning its language model (text_config, " + inner + "); the vision/audio towers are not counted");
    type = inner;
  }
  if (type == "gemma3") type = "gemma3_text";
  if (type.empty()) top.fail("model_type", "required key is missing (a Hugging Face config.json names its model_type)");
  if (std::find(kModelTypes.begin(), kModelTypes.end(), type) == kModelTypes.end()) {
    std::string list;
    for (const auto& t : kModelTypes) list += (list.empty() ? "" : ", ") + t;
    (prefix.empty() ? top : JsonObject(*config, text, file, prefix, top.where("text_config")))
        .fail("model_type", "'" + type + "' is not a supported architecture (" + list + ")");
  }
  JsonObject c(*config, text, file, prefix, prefix.empty() ? SourceLocation{} : top.where("text_config"));
  Model m;
  m.id = to_lower(id);
  m.family = ModelFamily::kDecoder;
  m.origin = file;
  if (type == "gpt2") map_gpt2(m, c);
  else if (type == "gptj") map_gptj(m, c, notes);
  else if (type == "gpt_neox") map_neox(m, c);
  else if (type == "falcon") map_falcon(m, c);
  else if (type == "deepseek_v2" || type == "deepseek_v3") map_deepseek(m, c, type, notes);
  else map_llama_like(m, c, type, notes);
  if (type == "mixtral" || type == "qwen2_moe" || type == "qwen3_moe") map_moe(m, c, type);
  if (m.mla == std::nullopt && type == "phi3" && m.sliding_window > 0)
    notes.push_back("Phi-3 sliding window of " + std::to_string(m.sliding_window) + " tokens applied to every layer");
  map_quantization(m, top, notes);
  std::string arch = type;
  if (top.has("architectures") && root.at("architectures").is_array() && !root.at("architectures").empty() &&
      root.at("architectures")[0].is_string())
    arch = root.at("architectures")[0].get<std::string>();
  m.name = id + " (" + arch + ")";
  m.source = "Hugging Face config.json (" + file + ")";
  m.ingest_notes = notes;
  return m;
}

Model load_hf_config(const std::string& path) {
  std::error_code ec;
  std::string file = fs::is_directory(path, ec) ? (fs::path(path) / "config.json").string() : path;
  if (!fs::is_regular_file(file, ec)) throw InputError({file, 0, 0}, "model", "no config.json here");
  // The model's name: org/name inside a Hugging Face cache (models--ORG--NAME/snapshots/HASH), else the directory.
  fs::path dir = fs::absolute(fs::path(file), ec).parent_path();
  std::string id = dir.filename().string();
  if (dir.parent_path().filename() == "snapshots") {
    std::string repo = dir.parent_path().parent_path().filename().string();
    if (repo.rfind("models--", 0) == 0) {
      repo = repo.substr(8);
      auto sep = repo.find("--");
      if (sep != std::string::npos) repo = repo.substr(0, sep) + "/" + repo.substr(sep + 2);
      id = repo;
    }
  }
  if (id.empty()) id = "config";
  Model m = parse_hf_config(read_file_text(file), file, id);
  map_modelopt(m, (fs::path(file).parent_path() / "hf_quant_config.json").string());
  return m;
}

std::vector<std::string> hf_cache_dirs() {
  std::vector<std::string> dirs;
  if (const char* v = std::getenv("HF_HUB_CACHE"); v && *v) dirs.push_back(v);
  if (const char* v = std::getenv("HF_HOME"); v && *v) dirs.push_back((fs::path(v) / "hub").string());
  if (const char* v = std::getenv("HOME"); v && *v) dirs.push_back((fs::path(v) / ".cache" / "huggingface" / "hub").string());
  return dirs;
}

bool looks_like_repo_id(const std::string& name) {
  auto slash = name.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= name.size()) return false;
  if (name.find('/', slash + 1) != std::string::npos) return false;
  if (name.find("..") != std::string::npos || name[0] == '.' || name.ends_with(".yaml") || name.ends_with(".json"))
    return false;
  for (char ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.' || ch == '/')) return false;
  return true;
}

std::string resolve_hf_repo(const std::string& repo_id) {
  auto slash = repo_id.find('/');
  std::string folder = "models--" + repo_id.substr(0, slash) + "--" + repo_id.substr(slash + 1);
  std::vector<std::string> looked;
  std::error_code ec;
  for (const auto& cache : hf_cache_dirs()) {
    fs::path repo = fs::path(cache) / folder;
    looked.push_back(repo.string());
    if (!fs::is_directory(repo / "snapshots", ec)) continue;
    // refs/main names the snapshot the hub's default branch resolved to; without it take the newest snapshot.
    std::ifstream ref(repo / "refs" / "main");
    std::string commit;
    if (ref && std::getline(ref, commit)) {
      while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) commit.pop_back();
      if (commit.find('/') == std::string::npos && commit.find("..") == std::string::npos) {
        fs::path config = repo / "snapshots" / commit / "config.json";
        if (fs::is_regular_file(config, ec)) return config.string();
      }
    }
    fs::path best;
    fs::file_time_type newest{};
    for (const auto& snap : fs::directory_iterator(repo / "snapshots", ec)) {
      fs::path config = snap.path() / "config.json";
      if (!fs::is_regular_file(config, ec)) continue;
      auto t = fs::last_write_time(config, ec);
      if (best.empty() || t > newest) best = config, newest = t;
    }
    if (!best.empty()) return best.string();
  }
  std::string where;
  for (const auto& l : looked) where += (where.empty() ? "" : ", ") + l;
  throw InputError({}, "model",
                   "'" + repo_id + "' is neither a file nor a model in the local Hugging Face cache (looked in " +
                       (where.empty() ? std::string("no cache directory: HF_HUB_CACHE, HF_HOME and HOME are unset") : where) +
                       "); fetch its config with: huggingface-cli download " + repo_id +
                       " config.json (hwplan never downloads)");
}

}  // namespace hwplan::io
