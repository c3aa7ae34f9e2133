#include "estimators/params.hpp"

#include <algorithm>
#include <string>

namespace hwplan {

double attention_parameters(const Model& m) {
  const double h = static_cast<double>(m.hidden_size);
  if (m.mla) {
    // DeepSeek-V2/V3 (modeling_deepseek.py): q_a (h x q_lora) + norm + q_b (q_lora x heads (nope + rope)), or a
    // full q projection; kv_a_proj_with_mqa (h x (kv_lora + rope)) + norm; kv_b (kv_lora x heads (nope + v));
    // o_proj (heads v x h).
    const MlaConfig& a = *m.mla;
    const double heads = static_cast<double>(m.attention_heads);
    const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
    const double lq = static_cast<double>(a.q_lora_rank), lkv = static_cast<double>(a.kv_lora_rank);
    double q = lq > 0 ? h * lq + lq + lq * heads * qk : h * heads * qk;
    double kv = h * (lkv + static_cast<double>(a.qk_rope_head_dim)) + lkv +
                lkv * heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim);
    double o = heads * static_cast<double>(a.v_head_dim) * h;
    return q + kv + o;
  }
  const double q = static_cast<double>(m.attention_heads * m.head_dim);
  const double kv = static_cast<double>(m.kv_heads * m.head_dim);
  double attention = h * q + 2 * h * kv + q * h;
  if (m.linear_bias == LinearBias::kAll) attention += q + 2 * kv + h;
  if (m.linear_bias == LinearBias::kQkv) attention += q + 2 * kv;
  return attention;
}

ParameterCounts count_parameters(const Model& m) {
  ParameterCounts c;
  if (!m.is_transformer()) {
    c.total = c.active = m.generic_parameters;
    return c;
  }
  const double h = static_cast<double>(m.hidden_size);
  const double norm = m.norm == NormKind::kLayerNorm ? 2 * h : h;
  const double attention = attention_parameters(m);

  auto mlp = [&](double f) {
    double p = (m.gated() ? 3 : 2) * h * f;
    if (m.linear_bias == LinearBias::kAll) p += (m.gated() ? 2 * f : f) + h;
    return p;
  };
  const double expert = mlp(static_cast<double>(m.expert_ffn()));

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
    c.dense_layers = static_cast<double>(m.moe->dense_layers);
    c.mlp_dense_per_layer = mlp(static_cast<double>(m.ffn_hidden_size)) + mlp_norm;
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
  double dense_mlp = c.dense_layers * c.mlp_dense_per_layer;
  double moe_layers = layers - c.dense_layers;
  if (m.mtp_layers > 0) {
    // DeepSeek-V3 MTP module (its technical report, section 2.2; checkpoint layer 61): one MoE decoder layer, a
    // 2h x h projection of [norm(h); norm(emb)], two norms and a final norm; the checkpoint also stores its own
    // copies of the embedding and the output head.
    double module = c.attention_per_layer + c.mlp_per_layer + 2 * h * h + 3 * norm + 2 * vocab * h;
    c.mtp = static_cast<double>(m.mtp_layers) * module;
  }
  c.total = c.embedding + c.output + c.extra + layers * c.attention_per_layer + moe_layers * c.mlp_per_layer +
            dense_mlp + cross + c.mtp;
  c.active = c.embedding + c.output + c.extra + layers * c.attention_per_layer + moe_layers * c.mlp_active_per_layer +
             dense_mlp + cross;
  return c;
}

double kv_elements_per_token_per_layer(const Model& m) {
  if (!m.is_transformer()) return 0;
  if (m.mla) return static_cast<double>(m.mla->kv_lora_rank + m.mla->qk_rope_head_dim);
  return 2.0 * static_cast<double>(m.kv_heads * m.head_dim);
}

double kv_cache_elements(const Model& m, double context) {
  if (!m.is_transformer()) return 0;
  const double per_token = kv_elements_per_token_per_layer(m);
  const double layers = static_cast<double>(m.total_layers());
  if (m.sliding_window <= 0) return per_token * layers * context;
  const double local = static_cast<double>(std::min(m.sliding_window_layers, m.total_layers()));
  const double window = std::min(context, static_cast<double>(m.sliding_window));
  return per_token * ((layers - local) * context + local * window);
}

double parameter_tensors(const Model& m) {
  if (!m.is_transformer()) return 0;
  const bool bias = m.linear_bias == LinearBias::kAll;
  const double norm = m.norm == NormKind::kLayerNorm ? 2 : 1;  // weight (and bias)
  const double attention = (m.mla ? 5 : 4) * (bias ? 2 : 1);   // q, k, v, o (MLA: q, kv-a, kv-b, o + its norm)
  const double mlp_matrices = m.gated() ? 3 : 2;
  const double expert_count = m.moe ? static_cast<double>(m.moe->experts + m.moe->shared_experts) : 1;
  const double mlp = mlp_matrices * (bias ? 2 : 1) * expert_count + (m.moe ? 1 : 0);  // + router
  const double norms = (m.parallel_attention ? 1 : 2) * norm;
  const double per_layer = attention + mlp + norms;
  double embeddings = 1 + (m.position_embedding == PositionEmbedding::kLearned ? 1 : 0);
  return per_layer * static_cast<double>(m.total_layers()) + embeddings + norm + (m.tied_embeddings ? 0 : 1);
}

int lora_projections_per_layer(const Model& m, const std::string& targets) {
  return targets == "qv" ? 2 : 4 + (m.gated() ? 3 : 2);
}

double lora_tensors(const Model& m, const std::string& targets) {
  if (!m.is_transformer()) return 0;
  return 2.0 * lora_projections_per_layer(m, targets) * static_cast<double>(m.total_layers());
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
