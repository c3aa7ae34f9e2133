#include "estimators/params.hpp"

#include <string>

namespace hwplan {

ParameterCounts count_parameters(const Model& m) {
  ParameterCounts c;
  if (!m.is_transformer()) {
    c.total = c.active = m.generic_parameters;
    return c;
  }
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.attention_heads * m.head_dim);
  const double kv = static_cast<double>(m.kv_heads * m.head_dim);
  const double f = static_cast<double>(m.ffn_hidden_size);
  const double norm = m.norm == NormKind::kLayerNorm ? 2 * h : h;

  double attention = h * q + 2 * h * kv + q * h;
  if (m.linear_bias == LinearBias::kAll) attention += q + 2 * kv + h;
  if (m.linear_bias == LinearBias::kQkv) attention += q + 2 * kv;

  double expert = (m.gated() ? 3 : 2) * h * f;
  if (m.linear_bias == LinearBias::kAll) expert += (m.gated() ? 2 * f : f) + h;

  // One norm per block with parallel attention (GPT-J / Falcon), else one before attention and one before MLP.
  double attention_norm = norm;
  double mlp_norm = m.parallel_attention ? 0 : norm;
  c.attention_per_layer = attention + attention_norm;
  if (m.moe) {
    double experts = m.moe->experts + m.moe->shared_experts;
    double active = m.moe->experts_per_token + m.moe->shared_experts;
    double router = h * m.moe->experts;
    c.mlp_per_layer = experts * expert + router + mlp_norm;
    c.mlp_active_per_layer = active * expert + router + mlp_norm;
  } else {
    c.mlp_per_layer = c.mlp_active_per_layer = expert + mlp_norm;
  }
  c.decoder_cross_attention = m.decoder_layers > 0 ? attention + norm : 0;

  const double vocab = static_cast<double>(m.vocab_size);
  c.embedding = vocab * h;
  if (m.position_embedding == PositionEmbedding::kLearned) c.embedding += static_cast<double>(m.max_sequence_length) * h;
  c.output = (m.tied_embeddings ? 0 : vocab * h) + norm;  // final norm
  c.extra = static_cast<double>(m.extra_parameters);

  const double layers = static_cast<double>(m.total_layers());
  double cross = static_cast<double>(m.decoder_layers) * c.decoder_cross_attention;
  c.total = c.embedding + c.output + c.extra + layers * (c.attention_per_layer + c.mlp_per_layer) + cross;
  c.active = c.embedding + c.output + c.extra + layers * (c.attention_per_layer + c.mlp_active_per_layer) + cross;
  return c;
}

double lora_parameters(const Model& m, int rank, const std::string& targets) {
  if (!m.is_transformer()) return 0;
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.attention_heads * m.head_dim);
  const double kv = static_cast<double>(m.kv_heads * m.head_dim);
  const double f = static_cast<double>(m.ffn_hidden_size);
  const double r = rank;
  // A LoRA adapter on a (in x out) matrix adds r * (in + out) parameters.
  double per_layer = r * (h + q) + r * (h + kv);  // q and v
  if (targets != "qv") {
    per_layer += r * (h + kv) + r * (q + h);                       // k and o
    per_layer += (m.gated() ? 3 : 2) * r * (h + f);                // MLP matrices
  }
  return per_layer * static_cast<double>(m.total_layers());
}

}  // namespace hwplan
