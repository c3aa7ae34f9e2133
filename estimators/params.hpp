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
  double extra = 0;
  double layer_total() const { return attention_per_layer + mlp_per_layer; }
};

ParameterCounts count_parameters(const Model& model);

// LoRA trainable parameters for rank r on the attention projections ("qv": q and v only; "all-linear":
// q, k, v, o and the MLP matrices).
double lora_parameters(const Model& model, int rank, const std::string& targets);

}  // namespace hwplan
