#include "io/model_io.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/units.hpp"
#include "io/yaml_map.hpp"

namespace hwplan::io {
namespace {

template <typename E>
E parse_enum(YamlMap& m, const std::string& key, std::optional<E> (*parse)(const std::string&),
             const char* allowed) {
  std::string s = *m.str(key, true);
  auto v = parse(s);
  if (!v) m.fail(key, "'" + s + "' is not one of: " + allowed);
  return *v;
}

constexpr std::int64_t kMaxDim = 10'000'000;

}  // namespace

Model parse_model(const std::string& text, const std::string& file) {
  YamlMap m(parse_document(text, file), file);
  Model model;
  model.origin = file;
  model.id = *m.str("id", true);
  static const std::regex kIdPattern("[a-z0-9][a-z0-9._-]*");
  model.where_id = m.where("id");
  if (!std::regex_match(model.id, kIdPattern))
    m.fail("id", "'" + model.id + "' is not a valid id (lower-case letters, digits, '.', '_', '-')");
  model.name = *m.str("name", true);
  model.family = parse_enum(m, "family", parse_model_family, "decoder, encoder, encoder-decoder, generic");
  model.source = *m.str("source", true);
  // Optional in user files (the zoo requires it: tools/embed_data.cpp); checked against the computed count.
  model.published_parameters = m.number("published_parameters", false, 0, 1e15).value_or(0);

  if (model.family == ModelFamily::kGeneric) {
    model.generic_parameters = *m.number("parameters", true, 0, 1e15);
    model.forward_flops_per_sample = *m.number("forward_gflops_per_sample", true, 0, 1e12) * 1e9;
    model.activation_bytes_per_sample = *m.number("activation_mib_per_sample", true, 0, 1e9) * kMiB;
    model.inference_activation_bytes_per_sample =
        m.number("inference_activation_mib_per_sample", false, 0, 1e9).value_or(0) * kMiB;
    model.forward_kernels = static_cast<double>(m.integer("forward_kernels", false, 1, 1000000).value_or(0));
    model.input = *m.str("input", true);
    if (m.has("convolutions")) {
      const YAML::Node list = m.node()["convolutions"];
      if (!list.IsSequence() || list.size() == 0)
        m.fail("convolutions", "expected a list of {count, in_channels, out_channels, kernel, stride, output_size, groups}");
      double flops = 0;
      for (const auto& item : list) {
        YamlMap c(item, file, "convolutions[].");
        ConvLayer l;
        l.count = static_cast<int>(c.integer("count", false, 1, 100000).value_or(1));
        l.in_channels = *c.integer("in_channels", true, 1, 10'000'000);
        l.out_channels = *c.integer("out_channels", true, 1, 10'000'000);
        l.kernel = static_cast<int>(*c.integer("kernel", true, 1, 1024));
        l.stride = static_cast<int>(c.integer("stride", false, 1, 1024).value_or(1));
        l.output_size = *c.integer("output_size", true, 1, 1'000'000);
        l.groups = static_cast<int>(c.integer("groups", false, 1, 10'000'000).value_or(1));
        if (l.in_channels % l.groups != 0 || l.out_channels % l.groups != 0)
          c.fail("groups", std::to_string(l.groups) + " groups do not divide " + std::to_string(l.in_channels) + " -> " +
                               std::to_string(l.out_channels) + " channels");
        c.finish();
        flops += l.forward_flops();
        model.convolutions.push_back(l);
      }
      // The list prices part of the forward pass; it cannot hold more arithmetic than the whole.
      if (flops > 1.01 * model.forward_flops_per_sample)
      {
        char message[160];
        std::snprintf(message, sizeof message, "the listed convolutions do %.3g GFLOP per sample, more than forward_gflops_per_sample (%.3g)",
                      flops / 1e9, model.forward_flops_per_sample / 1e9);
        m.fail("convolutions", message);
      }
    }
    m.finish({"convolutions"});
    return model;
  }

  model.layers = *m.integer("layers", true, 1, 100000);
  if (model.family == ModelFamily::kEncoderDecoder) model.decoder_layers = *m.integer("decoder_layers", true, 1, 100000);
  model.hidden_size = *m.integer("hidden_size", true, 1, kMaxDim);
  model.attention_heads = *m.integer("attention_heads", true, 1, 1000000);
  model.kv_heads = m.integer("kv_heads", false, 1, 1000000).value_or(model.attention_heads);
  auto head_dim = m.integer("head_dim", false, 1, kMaxDim);
  if (!head_dim && model.hidden_size % model.attention_heads != 0)
    m.fail("attention_heads", std::to_string(model.attention_heads) + " heads do not divide hidden_size " +
                                  std::to_string(model.hidden_size) + " (give head_dim explicitly if intended)");
  model.head_dim = head_dim.value_or(model.hidden_size / model.attention_heads);
  if (model.attention_heads % model.kv_heads != 0)
    m.fail("kv_heads", std::to_string(model.kv_heads) + " key/value heads do not divide " +
                           std::to_string(model.attention_heads) + " attention heads");
  model.ffn_hidden_size = *m.integer("ffn_hidden_size", true, 1, kMaxDim);
  model.ffn_activation = parse_enum(m, "ffn_activation", parse_activation, "gelu, gelu-tanh, relu, swiglu, geglu");
  model.vocab_size = *m.integer("vocab_size", true, 0, 100'000'000);
  model.max_sequence_length = *m.integer("max_sequence_length", true, 1, 1'000'000'000);
  model.tied_embeddings = *m.boolean("tied_embeddings", true);
  model.position_embedding =
      parse_enum(m, "position_embedding", parse_position_embedding, "learned, rope, alibi, relative");
  model.norm = parse_enum(m, "norm", parse_norm, "layernorm, rmsnorm");
  model.linear_bias = m.str("linear_bias", false) ? parse_enum(m, "linear_bias", parse_linear_bias, "all, qkv, none")
                                                   : LinearBias::kNone;
  model.parallel_attention = m.boolean("parallel_attention", false).value_or(false);
  model.dropout = m.boolean("dropout", false).value_or(false);
  if (auto moe = m.map("moe", false)) {
    MoeConfig c;
    c.experts = static_cast<int>(*moe->integer("experts", true, 1, 100000));
    c.experts_per_token = static_cast<int>(*moe->integer("experts_per_token", true, 1, 100000));
    c.shared_experts = static_cast<int>(moe->integer("shared_experts", false, 0, 100000).value_or(0));
    c.expert_ffn_hidden_size = moe->integer("expert_ffn_hidden_size", false, 1, kMaxDim).value_or(0);
    c.dense_layers = moe->integer("dense_layers", false, 0, 100000).value_or(0);
    if (c.dense_layers >= model.layers)
      moe->fail("dense_layers", "leaves no MoE layer (" + std::to_string(model.layers) + " layers)");
    if (c.experts_per_token > c.experts)
      moe->fail("experts_per_token", "is larger than experts (" + std::to_string(c.experts) + ")");
    moe->finish();
    model.moe = c;
    model.published_active_parameters = m.number("published_active_parameters", false, 0, 1e15).value_or(0);
  }
  if (auto mla = m.map("mla", false)) {
    MlaConfig c;
    c.q_lora_rank = mla->integer("q_lora_rank", false, 0, kMaxDim).value_or(0);
    c.kv_lora_rank = *mla->integer("kv_lora_rank", true, 1, kMaxDim);
    c.qk_nope_head_dim = *mla->integer("qk_nope_head_dim", true, 0, kMaxDim);
    c.qk_rope_head_dim = *mla->integer("qk_rope_head_dim", true, 0, kMaxDim);
    c.v_head_dim = *mla->integer("v_head_dim", true, 1, kMaxDim);
    if (c.qk_nope_head_dim + c.qk_rope_head_dim == 0) mla->fail("qk_rope_head_dim", "query/key heads of size 0");
    mla->finish();
    model.mla = c;
  }
  if (auto window = m.integer("sliding_window", false, 1, 1'000'000'000)) {
    model.sliding_window = *window;
    model.sliding_window_layers = m.integer("sliding_window_layers", false, 0, model.layers).value_or(model.layers);
  }
  model.mtp_layers = m.integer("mtp_layers", false, 0, 1000).value_or(0);
  if (m.str("weight_format", false)) {
    model.weight_format = parse_enum(m, "weight_format", parse_weight_format, "fp32, fp16, bf16, fp8, int8, int4, nf4, q4_0, q4_k_m");
    model.weight_format_note = "weight_format in " + file;
  }
  if (auto bytes = m.number("checkpoint_weight_bytes", false, 1, 1e16)) {
    model.checkpoint_weight_bytes = *bytes;
    model.checkpoint_dtypes = m.str("checkpoint_dtypes", false).value_or("");
  }
  if (auto extra = m.integer("extra_parameters", false, 0, INT64_MAX / 4)) {
    model.extra_parameters = *extra;
    model.extra_parameters_note = *m.str("extra_parameters_note", true);
  }
  m.finish();
  return model;
}

namespace {

// Shortest text that reads back to the same double.
std::string number_text(double v) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace

std::string model_id_from(const std::string& name) {
  std::string base = name;
  auto slash = base.find_last_of('/');
  if (slash != std::string::npos) base = base.substr(slash + 1);
  std::string id;
  for (char c : base) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    id += (std::isalnum(static_cast<unsigned char>(l)) || l == '.' || l == '_' || l == '-') ? l : '-';
  }
  while (!id.empty() && !std::isalnum(static_cast<unsigned char>(id[0]))) id.erase(0, 1);
  return id.empty() ? "model" : id;
}

std::string model_to_yaml(const Model& m) {
  std::ostringstream o;
  std::string source = m.source;
  for (const auto& note : m.ingest_notes) source += "; " + note;
  o << "id: " << model_id_from(m.id) << "\n";
  o << "name: " << yaml_quoted(m.name) << "\n";
  o << "family: " << to_string(m.family) << "\n";
  if (m.family == ModelFamily::kGeneric) {
    o << "parameters: " << number_text(m.generic_parameters) << "\n";
    o << "forward_gflops_per_sample: " << number_text(m.forward_flops_per_sample / 1e9) << "\n";
    o << "activation_mib_per_sample: " << number_text(m.activation_bytes_per_sample / kMiB) << "\n";
    if (m.inference_activation_bytes_per_sample > 0)
      o << "inference_activation_mib_per_sample: " << number_text(m.inference_activation_bytes_per_sample / kMiB) << "\n";
    if (m.forward_kernels > 0) o << "forward_kernels: " << number_text(m.forward_kernels) << "\n";
    if (!m.convolutions.empty()) {
      o << "convolutions:\n";
      for (const auto& c : m.convolutions)
        o << "  - {count: " << c.count << ", in_channels: " << c.in_channels << ", out_channels: " << c.out_channels
          << ", kernel: " << c.kernel << ", stride: " << c.stride << ", output_size: " << c.output_size
          << ", groups: " << c.groups << "}\n";
    }
    o << "input: " << yaml_quoted(m.input) << "\n";
  } else {
    o << "layers: " << m.layers << "\n";
    if (m.family == ModelFamily::kEncoderDecoder) o << "decoder_layers: " << m.decoder_layers << "\n";
    o << "hidden_size: " << m.hidden_size << "\nattention_heads: " << m.attention_heads << "\n";
    o << "kv_heads: " << m.kv_heads << "\nhead_dim: " << m.head_dim << "\n";
    o << "ffn_hidden_size: " << m.ffn_hidden_size << "\nffn_activation: " << to_string(m.ffn_activation) << "\n";
    o << "vocab_size: " << m.vocab_size << "\nmax_sequence_length: " << m.max_sequence_length << "\n";
    o << "tied_embeddings: " << (m.tied_embeddings ? "true" : "false") << "\n";
    o << "position_embedding: " << to_string(m.position_embedding) << "\nnorm: " << to_string(m.norm) << "\n";
    o << "linear_bias: " << to_string(m.linear_bias) << "\n";
    o << "parallel_attention: " << (m.parallel_attention ? "true" : "false") << "\n";
    o << "dropout: " << (m.dropout ? "true" : "false") << "\n";
    if (m.moe) {
      o << "moe: {experts: " << m.moe->experts << ", experts_per_token: " << m.moe->experts_per_token
        << ", shared_experts: " << m.moe->shared_experts;
      if (m.moe->expert_ffn_hidden_size > 0) o << ", expert_ffn_hidden_size: " << m.moe->expert_ffn_hidden_size;
      if (m.moe->dense_layers > 0) o << ", dense_layers: " << m.moe->dense_layers;
      o << "}\n";
    }
    if (m.mla)
      o << "mla: {q_lora_rank: " << m.mla->q_lora_rank << ", kv_lora_rank: " << m.mla->kv_lora_rank
        << ", qk_nope_head_dim: " << m.mla->qk_nope_head_dim << ", qk_rope_head_dim: " << m.mla->qk_rope_head_dim
        << ", v_head_dim: " << m.mla->v_head_dim << "}\n";
    if (m.sliding_window > 0)
      o << "sliding_window: " << m.sliding_window << "\nsliding_window_layers: " << m.sliding_window_layers << "\n";
    if (m.mtp_layers > 0) o << "mtp_layers: " << m.mtp_layers << "\n";
    if (m.weight_format) o << "weight_format: " << to_string(*m.weight_format) << "\n";
    if (m.checkpoint_weight_bytes > 0) {
      o << "checkpoint_weight_bytes: " << number_text(m.checkpoint_weight_bytes) << "\n";
      if (!m.checkpoint_dtypes.empty()) o << "checkpoint_dtypes: " << yaml_quoted(m.checkpoint_dtypes) << "\n";
    }
  }
  if (m.extra_parameters > 0)
    o << "extra_parameters: " << m.extra_parameters << "\nextra_parameters_note: " << yaml_quoted(m.extra_parameters_note) << "\n";
  if (m.published_parameters > 0) o << "published_parameters: " << number_text(m.published_parameters) << "\n";
  if (m.moe && m.published_active_parameters > 0)
    o << "published_active_parameters: " << number_text(m.published_active_parameters) << "\n";
  o << "source: " << yaml_quoted(source) << "\n";
  return o.str();
}

Model load_model_file(const std::string& path) {
  return parse_model(read_text_file(path, "file"), path);
}

Model standard_decoder(double parameters, const std::string& label) {
  // A LLaMA-3-style decoder (Llama 3.1 8B/70B, Llama 3.2 1B/3B configs): head_dim 128, 8 key/value heads (GQA),
  // SwiGLU MLP of 3.5 d (14336 for d 4096, 28672 for d 8192) rounded to 256, vocab 128,256, 8,192-token context,
  // embeddings tied below 4B parameters (as Llama 3.2 1B/3B). Depth follows d / layers ~ 128 (8B: 4096 / 32).
  // Per layer: q and o 2 d^2, k and v 2 x d x 1024, MLP 3 x d x 3.5 d; solve layers(d) x that + embeddings = P.
  const double vocab = 128256;
  const bool tied = parameters < 4e9;
  auto total = [&](double d) {
    return d / 128 * (12.5 * d * d + 2048 * d) + (tied ? 1 : 2) * vocab * d;
  };
  double d = 256;
  for (int i = 0; i < 80; ++i) {
    double f = total(d) - parameters;
    double df = (3 * 12.5 * d * d + 2 * 2048 * d) / 128 + (tied ? 1 : 2) * vocab;
    d -= f / df;
    if (d < 128) d = 128;
  }
  Model m;
  m.id = label;
  m.name = "standard decoder, " + label;
  m.family = ModelFamily::kDecoder;
  // Width in whole groups of 8 heads (8 KV heads, as every Llama 3 size); the depth then absorbs the rounding.
  // Below ~0.5B (d < 1024) the shape stays multi-head with d a multiple of 128.
  if (d >= 1024) {
    m.hidden_size = std::max<std::int64_t>(1024, std::llround(d / 1024) * 1024);
    m.kv_heads = 8;
  } else {
    m.hidden_size = std::max<std::int64_t>(128, std::llround(d / 128) * 128);
    m.kv_heads = m.hidden_size / 128;
  }
  m.attention_heads = m.hidden_size / 128;
  m.head_dim = 128;
  m.ffn_hidden_size = static_cast<std::int64_t>(std::llround(m.hidden_size * 3.5 / 256.0)) * 256;
  const double h = static_cast<double>(m.hidden_size);
  double per_layer = 2 * h * h + 2 * h * static_cast<double>(m.kv_heads * 128) + 3 * h * static_cast<double>(m.ffn_hidden_size) + 2 * h;
  double embed = (tied ? 1 : 2) * vocab * h;
  m.layers = std::max<std::int64_t>(1, std::llround((parameters - embed) / per_layer));
  m.ffn_activation = Activation::kSwiglu;
  m.vocab_size = static_cast<std::int64_t>(vocab);
  m.max_sequence_length = 8192;
  m.tied_embeddings = tied;
  m.position_embedding = PositionEmbedding::kRope;
  m.norm = NormKind::kRmsNorm;
  m.linear_bias = LinearBias::kNone;
  m.published_parameters = parameters;
  m.source = "hwplan standard LLaMA-3-style shape for " + label;
  m.origin = "built-in size";
  // Every figure rests on this shape: say it wherever the model is used.
  m.ingest_notes.push_back("a size, not a model: a LLaMA-3-style shape is assumed (" + std::to_string(m.layers) +
                           " layers, hidden " + std::to_string(m.hidden_size) + ", " + std::to_string(m.kv_heads) +
                           " KV heads, vocabulary 128,256" + (tied ? ", tied embeddings" : "") +
                           "); give a zoo id (hwplan models list) or a model file for a real one");
  return m;
}

}  // namespace hwplan::io
