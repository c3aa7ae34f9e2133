#include "estimators/operators.hpp"

#include <limits>
#include "core/assumptions.hpp"

#include <algorithm>
#include <cmath>

namespace hwplan {
namespace {


class OpBuilder {
 public:
  OpBuilder(const DeviceRates& rates, const LayerShape& shape, Cost& cost, std::vector<OpRecord>* ops)
      : r_(rates), s_(shape), cost_(cost), ops_(ops) {}

  // Linear layer: X[m x k] W[k x n]. Backward: dX = dY W^T (m x k, reduce n) and, unless frozen,
  // dW = X^T dY (k x n, reduce m).
  void linear(const char* name, double m, double n, double k, double batch = 1) {
    const double e = s_.activation_bytes, we = s_.weight_bytes;
    OpRecord op{name, OpKind::kGemm};
    op.forward_flops = 2 * m * n * k * batch;
    op.forward_bytes = (m * k * e + k * n * we + m * n * e) * batch;
    op.forward_seconds = gemm_seconds(r_, m, n, k, batch, e, we);
    if (s_.training) {
      op.backward_flops = op.forward_flops;
      op.backward_seconds = gemm_seconds(r_, m, k, n, batch, e, we);
      op.backward_kernels = 1;
      if (!s_.frozen_weights) {
        op.backward_flops += op.forward_flops;
        op.backward_seconds += gemm_seconds(r_, k, n, m, batch, e);
        op.backward_kernels = 2;
      }
    }
    if (s_.fp8) {
      // Cast X (read bf16, write fp8 and its transpose) and W; backward casts dY the same way.
      op.forward_seconds += memory_seconds(r_, (m * k + k * n) * batch * (2 + 1 + 1));
      op.forward_kernels += 2;
      if (s_.training) {
        op.backward_seconds += memory_seconds(r_, m * n * batch * (2 + 1 + 1));
        op.backward_kernels += 1;
      }
    }
    emit(op);
  }

  // Activation x activation product (attention scores / context): both inputs get gradients.
  void batched(const char* name, double m, double n, double k, double batch) {
    const double e = s_.activation_bytes;
    const DeviceRates& rates = s_.attention_rates ? *s_.attention_rates : r_;
    OpRecord op{name, OpKind::kAttention};
    op.forward_flops = 2 * m * n * k * batch;
    op.forward_bytes = (m * k + k * n + m * n) * e * batch;
    op.forward_seconds = gemm_seconds(rates, m, n, k, batch, e);
    if (s_.training) {
      op.backward_flops = 2 * op.forward_flops;
      op.backward_seconds = gemm_seconds(rates, m, k, n, batch, e) + gemm_seconds(rates, k, n, m, batch, e);
      op.backward_kernels = 2;
    }
    emit(op, true);
  }

  // Fused attention (FlashAttention-2): s x s scores never reach DRAM; backward recomputes them, about 2.5x the
  // forward FLOPs. Causal masks skip half the blocks.
  // `score_fraction`: the share of the causal score matrix computed (sliding-window layers skip keys beyond the window).
  // With context parallelism (cp > 1) the rank's s queries meet the s x cp keys of the whole sequence, one chunk
  // of s keys per ring step: cp kernels of s x s blocks forward, twice that backward. Megatron's load balancing
  // (chunks i and 2cp-1-i per rank) gives every rank the same share of the causal scores: 1 / cp of them.
  void flash(double batch_heads, double s, double d, double kv_fraction, bool causal, double score_fraction = 1.0) {
    const int cp = s_.cp;
    const double e = s_.activation_bytes;
    const DeviceRates& rates = s_.attention_rates ? *s_.attention_rates : r_;
    OpRecord op{"flash-attention", OpKind::kAttention};
    const double keys = s * cp;
    double flops = 4 * batch_heads * s * keys * d * (causal ? 0.5 : 1.0) * score_fraction;
    double bytes = batch_heads * d * e * (2 * s + 2 * kv_fraction * keys);
    // A stack without the architecture's own attention kernels runs FlashAttention-2-class ones (no stack given:
    // the native kernels, as before stacks were modelled).
    const double kernels = (s_.stack && !s_.stack->native_attention ? rates.portable_attention_fraction : 1.0) *
                           rates.fused_attention_fraction;
    double rate = rates.matrix_flops * rates.attention_efficiency * kernels * gemm_efficiency(rates, s, s, d, batch_heads);
    op.forward_flops = flops;
    op.forward_bytes = bytes;
    op.forward_kernels = cp;
    op.forward_seconds =
        std::max(rate > 0 ? flops / rate : 0.0, bytes / achieved_bandwidth(rates, bytes)) + cp * rates.kernel_overhead_seconds;
    if (s_.training) {
      op.backward_flops = 2.5 * flops;
      op.backward_seconds = std::max(rate > 0 ? 2.5 * flops / rate : 0.0, 2 * bytes / achieved_bandwidth(rates, bytes)) +
                            2 * cp * rates.kernel_overhead_seconds;
      op.backward_kernels = 2 * cp;
    }
    emit(op, true);
  }

  // Memory-bound elementwise / reduction kernel(s).
  void memory(const char* name, double forward_bytes, double backward_bytes, bool attention_core = false,
              int kernels = 1) {
    forward_bytes *= traffic_scale;
    backward_bytes *= traffic_scale;
    OpRecord op{name, OpKind::kMemory};
    op.forward_bytes = forward_bytes;
    op.forward_kernels = kernels;
    op.forward_seconds = memory_seconds(r_, forward_bytes) + (kernels - 1) * r_.kernel_overhead_seconds;
    if (s_.training) {
      // Eager autograd computes each input's gradient in its own kernel and adds the gradients of a tensor that
      // feeds several ops: about two kernels per forward kernel (torch.profiler on an H200: 1,105 backward
      // against 470 forward kernels for BERT-Large, 1,887 / 1,102 GPT-2 Large, 1,069 / 560 OPT-1.3B, GEMMs
      // included). A fused stack's backward kernels are as many as its forward ones.
      const int bwd = s_.stack && !s_.stack->fused_kernels ? 2 * kernels : kernels;
      op.backward_seconds = memory_seconds(r_, backward_bytes) + (bwd - 1) * r_.kernel_overhead_seconds;
      op.backward_kernels = bwd;
    }
    emit(op, attention_core);
  }

  // Multiplies the bytes of memory-bound ops (eager 16-bit training and forward passes: Stack::eager_traffic_factor).
  double traffic_scale = 1.0;

 private:
  void emit(const OpRecord& op, bool attention_core = false) {
    cost_.add(op);
    if (attention_core) {
      cost_.attention_core_forward_seconds += op.forward_seconds;
      cost_.attention_core_backward_seconds += op.backward_seconds;
    }
    if (ops_) ops_->push_back(op);
  }
  const DeviceRates& r_;
  const LayerShape& s_;
  Cost& cost_;
  std::vector<OpRecord>* ops_;
};

}  // namespace

void Cost::add(const OpRecord& op) {
  forward_kernels += op.forward_kernels;
  backward_kernels += op.backward_kernels;
  forward_seconds += op.forward_seconds;
  backward_seconds += op.backward_seconds;
  forward_flops += op.forward_flops;
  backward_flops += op.backward_flops;
  if (op.kind == OpKind::kMemory) memory_seconds += op.forward_seconds + op.backward_seconds;
  else gemm_seconds += op.forward_seconds + op.backward_seconds;
}

double host_forward_seconds(const Cost& c, const Stack* stack) {
  return stack ? c.forward_kernels * stack->host_seconds_per_kernel : 0.0;
}

double host_backward_seconds(const Cost& c, const Stack* stack) {
  return stack ? 0.5 * c.backward_kernels * stack->host_seconds_per_kernel : 0.0;
}

namespace {

// The GPU runs ahead of nothing: when issuing a pass's kernels takes the host longer than the GPU takes to run
// them, the pass lasts as long as the host. Applied per layer (the unit the host issues in one go).
void apply_host_floor(Cost& c, const Stack* stack) {
  double hf = host_forward_seconds(c, stack), hb = host_backward_seconds(c, stack);
  double wait_f = std::max(0.0, hf - c.forward_seconds), wait_b = std::max(0.0, hb - c.backward_seconds);
  c.forward_seconds += wait_f;
  c.backward_seconds += wait_b;
  c.host_wait_seconds = wait_f + wait_b;
  c.host_wait_forward_seconds = wait_f;
}

}  // namespace

Cost layer_cost(const LayerShape& s, const DeviceRates& r, std::vector<OpRecord>* ops) {
  Cost cost;
  OpBuilder b(r, s, cost, ops);
  const Model& m = *s.model;
  const double t = s.tp;
  const double e = s.activation_bytes;
  const double tokens = s.micro_batch * s.seq;
  // With sequence parallelism the replicated elementwise work is split over the tensor-parallel ranks.
  const double rep_tokens = s.sequence_parallel && s.tp > 1 ? tokens / t : tokens;
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.attention_heads * m.head_dim) / t;
  const double kv = static_cast<double>(m.kv_heads * m.head_dim) / t;
  const double f = static_cast<double>(m.moe ? m.expert_ffn() : m.ffn_hidden_size) / t;
  const double heads = static_cast<double>(m.attention_heads) / t;
  const double d = static_cast<double>(m.head_dim);
  const bool dropout = m.dropout && s.training;
  const bool causal = m.family != ModelFamily::kEncoder;
  // Fused norm: read x, write y (backward: read x and dy, write dx). Eager RMSNorm (Hugging Face, torchtune
  // without compile) is seven ops in fp32: upcast, square, mean, rsqrt, scale, downcast, weight multiply.
  const bool fused = !s.stack || s.stack->fused_kernels;
  if (!fused && s.activation_bytes < 4) b.traffic_scale = s.stack->eager_traffic_factor;
  const bool eager_rms = !fused && m.norm == NormKind::kRmsNorm;
  const double norm_fwd = eager_rms ? rep_tokens * h * (28 + 4 * e) : 2 * rep_tokens * h * e;
  const double norm_bwd = eager_rms ? 2 * norm_fwd : 3 * rep_tokens * h * e;
  const int norm_kernels = eager_rms ? 7 : 1;
  const double residual = 3 * rep_tokens * h * e;
  const double drop_fwd = dropout ? 2 * rep_tokens * h * e + rep_tokens * h : 0;

  if (s.dequantize) {
    double layer_weights = (2 * h * (q + kv) * t + (m.gated() ? 3 : 2) * h * f * t) / t;
    b.memory("dequantize-nf4", layer_weights * (0.53 + 2), layer_weights * (0.53 + 2), false, 7);
  }
  b.memory("norm-1", norm_fwd, norm_bwd, false, norm_kernels);
  if (m.mla) {
    // MLA (DeepSeek-V2/V3): queries through an optional low-rank bottleneck; keys and values from a shared
    // latent (kv_lora_rank) plus a RoPE key, expanded per head. Attention then runs on heads of nope + rope.
    const MlaConfig& a = *m.mla;
    const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim) * heads;
    const double lq = static_cast<double>(a.q_lora_rank), lkv = static_cast<double>(a.kv_lora_rank);
    if (lq > 0) {
      b.linear("q-a-proj", tokens, lq, h);
      b.linear("q-b-proj", tokens, qk, lq);
    } else {
      b.linear("q-proj", tokens, qk, h);
    }
    b.linear("kv-a-proj", tokens, lkv + static_cast<double>(a.qk_rope_head_dim), h);
    b.linear("kv-b-proj", tokens, heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim), lkv);
  } else {
    b.linear("qkv-proj", tokens, q + 2 * kv, h);
  }
  // RoPE: fused, read and write q and k once; eager (x cos + rotate_half(x) sin) is five ops per tensor:
  // negate half, concatenate, two multiplies, add (~11 passes).
  if (m.position_embedding == PositionEmbedding::kRope) {
    const double passes = fused ? 2 : 11;
    b.memory("rope", passes * tokens * (q + kv) * e, passes * tokens * (q + kv) * e, false, fused ? 1 : 10);
  }
  const double batch_heads = s.micro_batch * heads;
  if (s.attention == Attention::kEager) {
    const double scores = batch_heads * s.seq * s.seq;
    b.batched("attn-scores", s.seq, s.seq, d, batch_heads);
    // scale, mask, softmax: three read+write passes forward; backward reads y and dy for softmax and
    // passes the gradient back through the mask and the scale.
    b.memory("attn-softmax", 6 * scores * e, 7 * scores * e, true, 3);
    if (dropout) b.memory("attn-dropout", 2 * scores * e + scores, 2 * scores * e + scores, true);
    b.batched("attn-context", s.seq, d, s.seq, batch_heads);
  } else {
    // Sliding-window layers score each query against at most `window` keys: s w - w^2 / 2 of the s^2 / 2 causal
    // scores; averaged over the model's local and global layers.
    double score_fraction = 1.0;
    const double full = s.seq * s.cp;
    if (causal && m.sliding_window > 0 && full > static_cast<double>(m.sliding_window)) {
      const double w = static_cast<double>(m.sliding_window), n = full;
      const double local = static_cast<double>(m.sliding_window_layers) / static_cast<double>(m.total_layers());
      score_fraction = (1 - local) + local * (n * w - w * w / 2) / (n * n / 2);
    }
    b.flash(batch_heads, s.seq, d, kv / q, causal, score_fraction);
  }
  b.linear("out-proj", tokens, h, m.mla ? heads * static_cast<double>(m.mla->v_head_dim) : q);
  b.memory("residual-1", residual + drop_fwd, residual + drop_fwd, false, dropout ? 2 : 1);
  if (!m.parallel_attention) b.memory("norm-2", norm_fwd, norm_bwd, false, norm_kernels);
  const double up = m.gated() ? 2 : 1;
  // Activation: fused, one kernel reading the up projection(s) and writing the product. Eager gated units are
  // act(gate) then * up (two kernels, five passes); eager tanh-GELU (Hugging Face gelu_new) is eight ops:
  // cube, scale, add, scale, tanh, add one, halve, multiply (18 passes), and autograd walks back through each.
  double act_passes = up + 1, act_backward_passes = 2 * up + 1;
  int act_kernels = 1;
  if (!fused && m.gated()) {
    act_passes = 5;
    act_backward_passes = 8;
    act_kernels = 2;
  } else if (!fused && m.ffn_activation == Activation::kGeluTanh) {
    act_passes = 18;
    act_backward_passes = 30;
    act_kernels = 8;
  }
  if (m.moe) {
    const double experts_local = static_cast<double>(m.moe->experts) / s.ep;
    const double routed = tokens * m.moe->experts_per_token;  // token-expert pairs on this rank (balanced)
    const double per_expert = routed / experts_local;
    b.linear("router", tokens, m.moe->experts, h);
    if (s.training) {
      // Token dispatch (Megatron-core's permute and unpermute): each token's hidden state is gathered once per
      // chosen expert into expert order (reading and writing the routed rows), and the experts' outputs are scattered
      // back, weighted by the router's probabilities and summed over the top-k (reading the routed rows, writing
      // the tokens). With expert parallelism the rows are also sorted by local expert after the all-to-all and back
      // before it (reading and writing the routed rows each way). Backward moves the same bytes the other way. With
      // sequence parallelism each tensor-parallel rank dispatches its own share of the tokens. (Inference engines
      // gather inside their fused MoE GEMMs: no separate pass.)
      const double dispatched = s.sequence_parallel && s.tp > 1 ? rep_tokens : tokens;
      const double copies = dispatched * m.moe->experts_per_token;
      const double bytes = ((s.ep > 1 ? 7 : 3) * copies + dispatched) * h * e;
      b.memory("moe-permute", bytes, bytes, false, s.ep > 1 ? 4 : 2);
    }
    b.linear("expert-up", per_expert, up * f, h, experts_local);
    b.memory("expert-act", act_passes * routed * f * e, act_backward_passes * routed * f * e, false, act_kernels);
    b.linear("expert-down", per_expert, h, f, experts_local);
    if (m.moe->shared_experts > 0) {
      double shared = m.moe->shared_experts;
      b.linear("shared-up", tokens, up * f * shared, h);
      b.linear("shared-down", tokens, h, f * shared);
    }
  } else {
    b.linear("mlp-up", tokens, up * f, h);
    b.memory("mlp-act", act_passes * tokens * f * e, act_backward_passes * tokens * f * e, false, act_kernels);
    b.linear("mlp-down", tokens, h, f);
  }
  b.memory("residual-2", residual + drop_fwd, residual + drop_fwd, false, dropout ? 2 : 1);
  if (s.lora_targets > 0 && s.lora_rank > 0) {
    // Each adapter on an (in x out) projection is two thin GEMMs, x A (in -> r) then B (r -> out), on this rank's
    // share of the projection (column-parallel ones split out, row-parallel ones in): tiny FLOPs, but each reads or
    // writes an activation-sized tensor, and the adapter's output is added to the base projection's (read both,
    // write one, out-sized) while backward adds the adapter's input gradient to the base one's (in-sized).
    // q_proj and v_proj alone ("qv"), or every linear of the layer.
    struct Target {
      double in, out;
    };
    Target targets[7];  // a fixed list: no allocation on the layout search's path
    int n = 0;
    targets[n++] = {h, q};   // q_proj
    targets[n++] = {h, kv};  // v_proj
    if (s.lora_targets > 2) {
      targets[n++] = {h, kv};  // k_proj
      targets[n++] = {q, h};   // o_proj
      if (m.gated()) targets[n++] = {h, f};  // gate_proj
      targets[n++] = {h, f};   // up_proj
      targets[n++] = {f, h};   // down_proj
    }
    LayerShape trainable = s;
    trainable.frozen_weights = false;
    OpBuilder lb(r, trainable, cost, ops);
    // PEFT's adapter also runs dropout and the alpha/r scale as separate kernels (adapter_kernels beyond A, B and
    // the add), each a pass over an activation-sized tensor.
    const double extra = s.stack ? std::max(0.0, s.stack->adapter_kernels - 3) : 0.0;
    for (int i = 0; i < n; ++i) {
      const Target& tg = targets[i];
      lb.linear("lora-a", tokens, s.lora_rank, tg.in);
      lb.linear("lora-b", tokens, tg.out, s.lora_rank);
      lb.memory("lora-add", 3 * tokens * tg.out * e, 3 * tokens * tg.in * e);
      if (extra > 0)
        lb.memory("lora-glue", extra * tokens * (tg.in + tg.out) * e, extra * tokens * (tg.in + tg.out) * e, false,
                  static_cast<int>(extra));
    }
  }
  apply_host_floor(cost, s.stack);
  return cost;
}

Cost head_cost(const LayerShape& s, const DeviceRates& r, std::vector<OpRecord>* ops) {
  Cost cost;
  OpBuilder b(r, s, cost, ops);
  const Model& m = *s.model;
  const double t = s.tp;
  const double e = s.activation_bytes;
  const double tokens = s.micro_batch * s.seq;
  const double h = static_cast<double>(m.hidden_size);
  const double vocab = static_cast<double>(m.vocab_size) / t;
  b.memory("embedding", 2 * tokens * h * e, 3 * tokens * h * e);
  b.memory("final-norm", 2 * tokens * h * e, 3 * tokens * h * e);
  if (m.vocab_size > 0 && s.lm_head) {
    if (s.fp8 && s.stack && !s.stack->fp8_head && s.attention_rates) {
      // fp8 training that leaves the vocabulary projection in 16 bits (Megatron's output layer): 16-bit GEMMs,
      // no casts.
      LayerShape sixteen = s;
      sixteen.fp8 = false;
      OpBuilder hb(*s.attention_rates, sixteen, cost, ops);
      hb.linear("logits", tokens, vocab, h);
    } else {
      b.linear("logits", tokens, vocab, h);
    }
    if (s.training) {
      // Cross-entropy in fp32: upcast, log-softmax, gather; backward the same passes in reverse.
      // Without a vocabulary-parallel loss every tensor-parallel rank runs it on the whole gathered logits.
      const bool gathered = s.stack && !s.stack->loss_parallel;
      const double elems = tokens * (gathered ? static_cast<double>(m.vocab_size) : vocab);
      b.memory("loss", elems * (e + 4 + 8), elems * (16 + e), false, 3);
    }
  }
  apply_host_floor(cost, s.stack);
  return cost;
}

// A generic network (a CNN) as two parts that run one after the other: its convolutions (implicit GEMMs at
// assumptions().conv_efficiency of the device's large-GEMM rate) and the normalisation, activation and residual
// kernels between them, which are memory-bound. Their traffic is counted in passes over the activations training
// saves (the model's activation_mib_per_sample, an fp32 figure scaled to the precision that runs); the pass counts
// per regime are derived in src/core/assumptions.cpp (cnn_*_passes). They include the convolutions' own reads and
// writes on purpose: most ResNet convolutions (1x1 with 64-512 channels, 3x3 at 64-128) do ~50-150 FLOP per byte
// they move in 16-bit, at or below the ridge point of current GPUs (A100: 312 TFLOP/s over 2 TB/s = 156), so their
// traffic is not hidden under their arithmetic; adding it in series is the conservative bound of the two. About a
// third of a CNN's kernels are convolutions (torchvision ResNet-50: 53 of the 174 its forward pass issues); each
// kernel costs the device its floor and, in an eager stack, the host its dispatch, which bounds small batches.
Cost generic_cost(const LayerShape& s, const DeviceRates& r, std::vector<OpRecord>* ops) {
  Cost cost;
  const Model& m = *s.model;
  const Assumptions& a = assumptions();
  const double batch = s.micro_batch;
  const double saved = m.activation_bytes_per_sample * batch * s.activation_bytes / 4;
  const double kernels = m.forward_kernels > 0 ? m.forward_kernels : a.default_forward_kernels;
  const double convs = std::max(1.0, std::round(kernels / 3));
  const bool fused = !s.stack || s.stack->fused_kernels;

  OpRecord conv{"convolutions", OpKind::kGemm};
  conv.forward_flops = m.forward_flops_per_sample * batch;
  conv.forward_kernels = static_cast<int>(convs);
  // The convolutions' own reads and writes, in passes over the saved tensors, that the per-layer pricing below
  // counts itself: forward, the input read and the output written (1); backward, the data gradient's read and write
  // and the weight gradient's two reads (2).
  double own_forward_passes = 0, own_backward_passes = 0;
  // NCHW activations on tensor cores: each convolution transposes its input to NHWC and its output back, and in
  // backward the data gradient transposes dY in and dX out, the weight gradient X and dY in (cuDNN's tensor-core
  // kernels are NHWC-native; MosaicML's Channels Last method card: "the NCHW tensor must be transposed to NHWC
  // before the convolution and transposed back to NCHW after"). Separate memory-bound kernels, in series.
  // Without a list, conv_efficiency was fitted on rows of both layouts: only listed convolutions pay them.
  const bool transposes =
      !m.convolutions.empty() && r.tensor_cores && r.nhwc_convolutions && s.stack && !s.stack->channels_last;
  // The transposes run inside the convolution library's call: their kernels cost the device its floor (in their
  // seconds) but no host dispatch of their own, so they are not counted as kernels.
  OpRecord layout{"nchw-transposes", OpKind::kMemory};
  layout.forward_kernels = 0;
  // The whole forward pass at one efficiency: the aggregate model, and the part of a network its list leaves out.
  const double aggregate_rate =
      r.matrix_flops * r.gemm_efficiency * (r.tensor_cores ? a.conv_efficiency : a.simt_conv_efficiency);
  if (!m.convolutions.empty()) {
    own_forward_passes = 1;
    own_backward_passes = 2;
    double kernels_listed = 0, data_gradients = 0, listed_flops = 0, skipped_flops = 0;
    const double e = s.activation_bytes;
    for (const ConvLayer& l : m.convolutions) {
      // One implicit GEMM per group: M = output positions of the batch, N = output channels, K = the window over the
      // input channels. Its time is its arithmetic (at the shape's own efficiency: small batches and late 7x7 maps
      // leave most of the device idle) and its traffic (input, output, weights), plus a kernel floor.
      const double g = l.groups, k2 = static_cast<double>(l.kernel) * l.kernel;
      const double out_pos = batch * static_cast<double>(l.output_size * l.output_size);
      const double in_side = static_cast<double>(l.output_size * l.stride);
      const double in_pos = batch * in_side * in_side;
      const double cin = static_cast<double>(l.in_channels) / g, cout = static_cast<double>(l.out_channels) / g;
      // An NPU graph keeps the layer's input and output on chip (Stack::on_chip_activations): only its weights move.
      const double off_chip = s.stack && s.stack->on_chip_activations && !s.training ? 0.0 : 1.0;
      const double x_bytes = off_chip * in_pos * cin * g * e, y_bytes = off_chip * out_pos * cout * g * e;
      const double w_bytes = cout * cin * k2 * g * e;
      // Groups of a few channels (depthwise convolutions) have no matrix shape to speak of: their kernels run on the
      // vector units and are bound by their traffic. (An input layer's 3 channels are padded to 4 or 8 and stay on
      // the matrix units.)
      const bool thin = l.groups > 1 && (cin < 8 || cout < 8);
      const double winograd = !r.tensor_cores && !thin && l.groups == 1 && l.kernel == 3 && l.stride == 1 ? a.winograd_speedup : 1.0;
      auto implicit_gemm = [&](double gm, double gn, double gk, double bytes) {
        const double flops = 2 * gm * gn * gk * g;
        double compute = 0;
        if (thin) {
          compute = r.simt_flops > 0 ? flops / (r.simt_flops * a.simt_gemm_efficiency) : 0;
        } else if (r.matrix_flops > 0) {
          // Too few output tiles to fill the device (a weight gradient's channels x window, a small batch's last
          // stages): the kernels split the reduction over more blocks (split-K), each part at least 256 long, and a
          // second kernel adds the fp32 partial sums (written and read once more). The fastest split is taken.
          compute = std::numeric_limits<double>::infinity();
          for (double split = 1; split <= 64 && (split == 1 || gk / split >= 256); split *= 2) {
            const double eff = std::max(1e-3, gemm_efficiency(r, gm, gn, gk / split, g * split, false)) *
                               a.implicit_gemm_conv_efficiency * winograd;
            const double partials = split > 1 ? 2 * split * gm * gn * g * 4 : 0;
            const double reduce = split > 1 ? partials / achieved_bandwidth(r, partials) + r.kernel_overhead_seconds : 0;
            compute = std::min(compute, flops / (r.matrix_flops * eff) + reduce);
          }
        }
        // Its traffic hidden under its arithmetic by conv_traffic_overlap (0: in series, the conservative bound; 1:
        // the roofline's max). An NPU graph's DMA engines bring the next layer's weights into local memory while this
        // one computes (the Edge TPU streams them so: estimators/inference.cpp): the longer of the two.
        const double memory = bytes / achieved_bandwidth(r, bytes);
        const double overlap = off_chip > 0 ? a.conv_traffic_overlap : 1.0;
        return compute + memory - overlap * std::min(compute, memory) + r.kernel_overhead_seconds;
      };
      listed_flops += l.forward_flops() * batch;
      conv.forward_bytes += l.count * (x_bytes + y_bytes + w_bytes);
      conv.forward_seconds += l.count * implicit_gemm(out_pos, cout, cin * k2, x_bytes + y_bytes + w_bytes);
      // The first listed convolution reads the network's input, which needs no gradient: no data gradient there.
      const double with_dgrad = &l == &m.convolutions.front() ? l.count - 1 : l.count;
      if (s.training) {
        // Data gradient: dY through the transposed window into dX, as many multiply-adds as the forward (a strided
        // convolution's kernels skip the zeros the stride leaves); weight gradient: X against dY, reducing over the
        // batch's output positions.
        conv.backward_seconds += with_dgrad * implicit_gemm(out_pos, cin, cout * k2, y_bytes + w_bytes + x_bytes) +
                                 l.count * implicit_gemm(cout, cin * k2, out_pos, x_bytes + y_bytes + w_bytes);
        data_gradients += with_dgrad;
        skipped_flops += (l.count - with_dgrad) * l.forward_flops() / l.count * batch;
      }
      // A 1x1 convolution on a 1x1 map is the classifier's matrix multiply (addmm), not a cuDNN convolution.
      if (transposes && !(l.kernel == 1 && l.output_size == 1)) {
        auto transpose = [&](double bytes) { return 2 * bytes / achieved_bandwidth(r, 2 * bytes) + r.kernel_overhead_seconds; };
        layout.forward_bytes += l.count * 2 * (x_bytes + y_bytes);
        layout.forward_seconds += l.count * (transpose(x_bytes) + transpose(y_bytes));
        // The weight gradient's two; the data gradient's two where it runs.
        if (s.training) layout.backward_seconds += (l.count + with_dgrad) * (transpose(x_bytes) + transpose(y_bytes));
      }
      kernels_listed += l.count;
    }
    // What the list leaves out of forward_gflops_per_sample (a partial list) at the aggregate rate.
    const double rest = std::max(0.0, conv.forward_flops - listed_flops);
    const double rest_seconds = aggregate_rate > 0 ? rest / aggregate_rate : 0;
    conv.forward_seconds += rest_seconds;
    conv.forward_kernels = static_cast<int>(kernels_listed);
    if (s.training) {
      conv.backward_seconds += 2 * rest_seconds;
      conv.backward_flops = 2 * conv.forward_flops - skipped_flops;
      conv.backward_kernels = static_cast<int>(kernels_listed + data_gradients);
    }
  } else {
    // On the FP32 vector units cuDNN's Winograd kernels make up part of the implicit-GEMM loss (simt_conv_efficiency).
    const double compute = aggregate_rate > 0 ? conv.forward_flops / aggregate_rate : 0;
    conv.forward_seconds = compute + convs * r.kernel_overhead_seconds;
    if (s.training) {
      // Data and weight gradients: two convolutions of the forward's size each.
      conv.backward_flops = 2 * conv.forward_flops;
      conv.backward_kernels = static_cast<int>(2 * convs);
      conv.backward_seconds = 2 * compute + 2 * convs * r.kernel_overhead_seconds;
    }
  }
  // The rest of the kernels (a third of them convolutions unless the model lists them); a fused engine (TensorRT-
  // style) folds normalisation and activation into the convolutions' epilogues.
  const double others = s.training || !fused ? std::max(0.0, kernels - conv.forward_kernels) : 0.0;

  OpRecord pass{"norm-activation", OpKind::kMemory};
  const double forward_passes = std::max(0.0, (s.training ? a.cnn_training_forward_passes
                                               : fused    ? a.cnn_fused_inference_passes
                                                          : a.cnn_eager_inference_passes) - own_forward_passes);
  pass.forward_bytes = s.stack && s.stack->on_chip_activations && !s.training ? 0.0 : forward_passes * saved;
  pass.forward_kernels = static_cast<int>(others);
  auto bytes_seconds = [&](double bytes, double n) {
    if (bytes <= 0) return n * r.kernel_overhead_seconds;
    return bytes / achieved_bandwidth(r, bytes / std::max(1.0, n)) + n * r.kernel_overhead_seconds;
  };
  pass.forward_seconds = bytes_seconds(pass.forward_bytes, others);
  if (s.training) {
    pass.backward_kernels = static_cast<int>(others);
    pass.backward_seconds =
        bytes_seconds(std::max(0.0, a.cnn_training_backward_passes - own_backward_passes) * saved, others);
  }
  for (const OpRecord* op : {&conv, &pass, &layout}) {
    if (op->forward_seconds <= 0 && op->backward_seconds <= 0) continue;
    cost.add(*op);
    if (ops) ops->push_back(*op);
  }
  apply_host_floor(cost, s.stack);
  return cost;
}

}  // namespace hwplan
