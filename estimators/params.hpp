// Parameter counts from the architecture (the first layer of every estimate).
#pragma once

#include "core/model.hpp"

namespace hwplan {

struct ParameterCounts {
  double total = 0;
  double active = 0;             // per token (MoE: experts_per_token + shared experts)
  double embedding = 0;          // token (+ position) embeddings
  double output = 0;             // untied output projection + final norm
  double attention_per_layer = 0;  // attention block incl. its norm (self-attention layers)
  double mlp_per_layer = 0;        // MLP incl. its norm, all experts (+ router)
  double mlp_active_per_layer = 0;
  double decoder_cross_attention = 0;  // encoder-decoder: per decoder layer
  double mlp_dense_per_layer = 0;      // MoE models: the dense MLP of the first `dense_layers` layers
  double dense_layers = 0;
  double mtp = 0;                      // multi-token-prediction modules (in total, not active)
  double extra = 0;
  double layer_total() const { return attention_per_layer + mlp_per_layer; }
};

ParameterCounts count_parameters(const Model& model);

// Attention block of one layer without its norm (projections, biases; MLA's low-rank factors and their norms).
double attention_parameters(const Model& model);

// KV-cache elements held per sequence for `context` tokens, summed over the model's layers, before tensor
// parallelism: 2 x kv_heads x head_dim per token per layer; sliding-window layers hold at most the window; MLA
// layers hold the latent (kv_lora_rank + qk_rope_head_dim, once for keys and values).
double kv_cache_elements(const Model& model, double context);
// Elements per token per layer for one global layer (the figure a single-formula tool would use).
double kv_elements_per_token_per_layer(const Model& model);

// LoRA trainable parameters for rank r on the attention projections ("qv": q and v only; "all-linear":
// q, k, v, o and the MLP matrices).
double lora_parameters(const Model& model, int rank, const std::string& targets);
// How many parameter tensors the model has (what an optimizer that loops over tensors iterates over): per layer the
// attention and MLP matrices, their biases and the norms' weights and biases; the embeddings, the final norm and
// an untied head. LoRA: two adapter matrices per targeted projection.
double parameter_tensors(const Model& model);
double lora_tensors(const Model& model, const std::string& targets);
// Projections per layer that carry a LoRA adapter: q and v ("qv"), or q, k, v, o and the MLP matrices.
int lora_projections_per_layer(const Model& model, const std::string& targets);

}  // namespace hwplan
