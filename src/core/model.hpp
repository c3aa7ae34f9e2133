// A neural network's architecture, as described by one model-zoo file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace hwplan {

enum class ModelFamily { kDecoder, kEncoder, kEncoderDecoder, kGeneric };
// kGeluTanh: the tanh approximation (GPT-2/GPT-3; Hugging Face 'gelu_new', written as eight elementwise ops).
enum class Activation { kGelu, kRelu, kSwiglu, kGeglu, kGeluTanh };
enum class PositionEmbedding { kLearned, kRope, kAlibi, kRelative };
enum class NormKind { kLayerNorm, kRmsNorm };
enum class LinearBias { kAll, kQkv, kNone };

struct MoeConfig {
  int experts = 0;
  int experts_per_token = 0;
  int shared_experts = 0;
};

struct Model {
  std::string id;
  std::string name;
  ModelFamily family = ModelFamily::kDecoder;
  // Transformer shape.
  std::int64_t layers = 0;          // encoder layers for encoder-decoder
  std::int64_t decoder_layers = 0;  // encoder-decoder only
  std::int64_t hidden_size = 0;
  std::int64_t attention_heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t ffn_hidden_size = 0;
  Activation ffn_activation = Activation::kGelu;
  std::int64_t vocab_size = 0;
  std::int64_t max_sequence_length = 0;
  bool tied_embeddings = false;
  PositionEmbedding position_embedding = PositionEmbedding::kRope;
  NormKind norm = NormKind::kRmsNorm;
  LinearBias linear_bias = LinearBias::kNone;
  bool parallel_attention = false;
  bool dropout = false;  // trained with dropout (stores masks)
  std::optional<MoeConfig> moe;
  std::int64_t extra_parameters = 0;
  std::string extra_parameters_note;
  // Generic (non-transformer) form.
  double generic_parameters = 0;
  double forward_flops_per_sample = 0;
  double activation_bytes_per_sample = 0;
  std::string input;
  // Published figures, for checking.
  double published_parameters = 0;
  double published_active_parameters = 0;
  std::string source;
  std::string origin;
  SourceLocation where_id;

  bool is_transformer() const { return family != ModelFamily::kGeneric; }
  bool gated() const { return ffn_activation == Activation::kSwiglu || ffn_activation == Activation::kGeglu; }
  std::int64_t total_layers() const { return layers + decoder_layers; }
};

const char* to_string(ModelFamily f);
const char* to_string(Activation a);
const char* to_string(PositionEmbedding p);
const char* to_string(NormKind n);
const char* to_string(LinearBias b);
std::optional<ModelFamily> parse_model_family(const std::string& s);
std::optional<Activation> parse_activation(const std::string& s);
std::optional<PositionEmbedding> parse_position_embedding(const std::string& s);
std::optional<NormKind> parse_norm(const std::string& s);
std::optional<LinearBias> parse_linear_bias(const std::string& s);

}  // namespace hwplan
