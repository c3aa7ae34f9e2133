// A neural network's architecture, as described by one model-zoo file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <vector>

#include "core/error.hpp"
#include "core/precision.hpp"

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
  std::int64_t expert_ffn_hidden_size = 0;  // per expert (moe_intermediate_size); 0: the model's ffn_hidden_size
  std::int64_t dense_layers = 0;            // first layers with a dense MLP of ffn_hidden_size (first_k_dense_replace)
};

// Multi-head latent attention (DeepSeek-V2/V3): keys and values are compressed to a latent of kv_lora_rank
// (plus a shared RoPE key of qk_rope_head_dim) and that is what the cache holds; queries optionally go through a
// q_lora_rank bottleneck.
struct MlaConfig {
  std::int64_t q_lora_rank = 0;  // 0: a full query projection
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

// A group of identical convolutions of a generic network (a CNN): `count` layers of `in_channels` -> `out_channels`
// with a `kernel` x `kernel` window at `stride`, writing `output_size` x `output_size` maps, in `groups` groups. A
// fully-connected layer is a 1x1 convolution on a 1x1 map.
struct ConvLayer {
  int count = 1;
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  int kernel = 1;
  int stride = 1;
  std::int64_t output_size = 0;
  int groups = 1;
  double forward_flops() const {  // per sample, all `count` layers
    return 2.0 * count * static_cast<double>(out_channels) * static_cast<double>(in_channels / groups) * kernel * kernel *
           static_cast<double>(output_size * output_size);
  }
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
  std::optional<MlaConfig> mla;
  // Sliding-window attention: `sliding_window_layers` of the layers attend to (and cache) only the last
  // `sliding_window` tokens; the others are global (Mistral v0.1: all layers; Gemma 2: every other; Gemma 3: 5 of 6).
  std::int64_t sliding_window = 0;  // 0: every layer is global
  std::int64_t sliding_window_layers = 0;
  // Multi-token-prediction modules stored with the checkpoint (DeepSeek-V3): counted as parameters (weights held
  // in memory), not used per token by the estimates.
  std::int64_t mtp_layers = 0;
  // Weight format of the checkpoint when it is quantised (quantization_config, GGUF); the inference default
  // when --weights is not given. `weight_format_note` says where it came from.
  std::optional<WeightFormat> weight_format;
  std::string weight_format_note;
  // The checkpoint's quantised layers run one fused dequantise-and-multiply kernel each (GPTQ, AWQ), not
  // bitsandbytes' several (which an int8 format otherwise means in eager code: LLM.int8()).
  bool fused_dequant_kernels = false;
  double checkpoint_weight_bytes = 0;  // exact, when read from GGUF / safetensors headers (0: unknown)
  std::string checkpoint_dtypes;       // e.g. "Q4_K: 193 tensors, F32: 65 tensors"
  std::vector<std::string> ingest_notes;  // assumptions made reading a foreign format (shown to the user)
  std::int64_t extra_parameters = 0;
  std::string extra_parameters_note;
  // Generic (non-transformer) form.
  double generic_parameters = 0;
  double forward_flops_per_sample = 0;
  double activation_bytes_per_sample = 0;
  // fp32 bytes per sample alive at once in an inference (eval, no-grad) forward pass: the widest point's input,
  // outputs and kept residual (0: not given, a quarter of activation_bytes_per_sample, with a warning).
  double inference_activation_bytes_per_sample = 0;
  // The network's convolutions by shape (optional): each is priced as its own implicit GEMM, with its own shape
  // efficiency and roofline, instead of the whole forward pass at one efficiency (estimators/operators.cpp).
  std::vector<ConvLayer> convolutions;
  double forward_kernels = 0;  // kernels one eager forward pass issues (0: not given, assumptions().default_forward_kernels)
  std::string input;
  // Published figures, for checking.
  double published_parameters = 0;
  double published_active_parameters = 0;
  std::string source;
  std::string origin;
  SourceLocation where_id;

  bool is_transformer() const { return family != ModelFamily::kGeneric; }
  // Generates tokens one step at a time (decoders, encoder-decoders). An encoder (BERT, ViT) or a generic network
  // reads its input in one forward pass: its inference is a batch latency, with no KV cache and nothing to decode.
  bool generates() const { return family == ModelFamily::kDecoder || family == ModelFamily::kEncoderDecoder; }
  bool gated() const { return ffn_activation == Activation::kSwiglu || ffn_activation == Activation::kGeglu; }
  std::int64_t total_layers() const { return layers + decoder_layers; }
  std::int64_t expert_ffn() const { return moe && moe->expert_ffn_hidden_size > 0 ? moe->expert_ffn_hidden_size : ffn_hidden_size; }
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
