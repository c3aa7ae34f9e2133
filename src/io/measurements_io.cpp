#include "io/measurements_io.hpp"

#include <fstream>
#include <sstream>

#include "io/stack_keys.hpp"
#include "io/yaml_map.hpp"

namespace hwplan::io {
namespace {

// A GPT-style architecture given inline (Megatron-LM benchmark rows): learned positions, GELU MLP of 4h,
// LayerNorm, biases, tied embeddings.
Model inline_gpt(YamlMap& m, const std::string& name) {
  Model model;
  model.id = name;
  model.name = name;
  model.family = ModelFamily::kDecoder;
  model.layers = *m.integer("layers", true, 1, 100000);
  model.hidden_size = *m.integer("hidden_size", true, 1, 10'000'000);
  model.attention_heads = *m.integer("attention_heads", true, 1, 100000);
  if (model.hidden_size % model.attention_heads != 0) m.fail("attention_heads", "does not divide hidden_size");
  model.kv_heads = m.integer("kv_heads", false, 1, 100000).value_or(model.attention_heads);
  if (model.attention_heads % model.kv_heads != 0) m.fail("kv_heads", "does not divide attention_heads");
  model.head_dim = model.hidden_size / model.attention_heads;
  model.vocab_size = *m.integer("vocab_size", true, 1, 100'000'000);
  model.ffn_hidden_size = m.integer("ffn_hidden_size", false, 1, 100'000'000).value_or(4 * model.hidden_size);
  model.max_sequence_length = m.integer("max_sequence_length", false, 1, 100'000'000).value_or(2048);
  auto choice = [&](const char* key, auto parse, auto fallback, const char* allowed) {
    auto text = m.str(key, false);
    if (!text) return fallback;
    auto v = parse(*text);
    if (!v) m.fail(key, "'" + *text + "' is not one of: " + allowed);
    return *v;
  };
  model.ffn_activation = choice("ffn_activation", parse_activation, Activation::kGelu, "gelu, gelu-tanh, relu, swiglu, geglu");
  model.position_embedding =
      choice("position_embedding", parse_position_embedding, PositionEmbedding::kLearned, "learned, rope, alibi, relative");
  model.norm = choice("norm", parse_norm, NormKind::kLayerNorm, "layernorm, rmsnorm");
  model.linear_bias = choice("linear_bias", parse_linear_bias, LinearBias::kAll, "all, qkv, none");
  model.tied_embeddings = m.boolean("tied_embeddings", false).value_or(true);
  model.dropout = m.boolean("dropout", false).value_or(false);
  model.source = "inline architecture of measurement case " + name;
  m.finish();
  return model;
}

}  // namespace

MeasurementSet parse_measurements(const std::string& text, const std::string& file) {
  YamlMap top(parse_document(text, file), file);
  MeasurementSet set;
  set.file = file;
  set.source = *top.str("source", true);
  set.description = top.str("description", false).value_or("");
  YAML::Node cases = top.node()["cases"];
  if (!cases.IsSequence() || cases.size() == 0) top.fail("cases", "expected a non-empty list of cases");
  top.finish({"cases"});
  for (const auto& node : cases) {
    YamlMap c(node, file, "cases[].");
    MeasurementCase mc;
    mc.where = location_of(node, file);
    for (const auto& key : c.keys()) mc.key_where[key] = c.where(key);
    mc.name = *c.str("name", true);
    mc.kind = c.str("kind", false).value_or("step_latency");
    if (mc.kind != "step_latency" && mc.kind != "train_throughput" && mc.kind != "infer_throughput" &&
        mc.kind != "decode" && mc.kind != "training")
      c.fail("kind", "'" + mc.kind + "' is not one of: step_latency, train_throughput, infer_throughput, decode, training");
    WorkloadSpec& s = mc.spec;
    s.device = *c.str("device", true);
    if (c.node()["model"].IsMap()) {
      auto inline_map = *c.map("model", true);
      mc.inline_model = inline_gpt(inline_map, mc.name);
      s.model = mc.name;
    } else {
      s.model = *c.str("model", true);
    }
    s.count = c.integer("count", false, 1, 10'000'000).value_or(1);
    std::string precision = c.str("precision", false).value_or("bf16");
    if (mc.kind == "decode") {
      s.task = "infer";
      s.precision = "fp16";
      s.weights = precision == "f16" ? "fp16" : precision;
      // The tokens before the first decode step (the KV context the decode starts from); 0 when the source gives
      // none. Decode speed is taken at the mean context, prompt + generate / 2.
      s.prompt = c.integer("prompt", false, 0, 100'000'000).value_or(0);
      s.generate = c.integer("generate", false, 1, 1'000'000).value_or(128);
      s.batch = c.integer("global_batch", false, 1, 1'000'000).value_or(1);
      c.integer("seq", false, 1, 100'000'000);
    } else if (mc.kind == "infer_throughput") {
      // Forward passes over batches of samples (images, or sequences of seq tokens); no generation.
      s.task = "infer";
      s.precision = precision;
      s.seq = c.integer("seq", false, 1, 100'000'000);
      s.prompt = s.seq.value_or(1);
      s.generate = 0;
      s.batch = *c.integer("batch", true, 1, 1'000'000);
      // Quantised inference (TensorRT INT8): the weight format, as --weights.
      if (auto w = c.str("weights", false)) s.weights = *w;
    } else {
      s.precision = precision;
      std::string task = c.str("task", false).value_or("train");
      s.task = task;
      // A generic network (a CNN) has no sequence: its throughput rows leave seq out.
      s.seq = c.integer("seq", mc.kind != "train_throughput", 1, 100'000'000);
      if (auto b = c.integer("batch", false, 1, 1'000'000)) s.batch = *b;
      if (auto g = c.integer("global_batch", false, 1, 1'000'000'000)) s.global_batch = *g;
      if (task == "infer") {
        s.prompt = *s.seq;
        s.generate = 0;
      }
    }
    if (auto a = c.str("attention", false)) s.attention = *a;
    if (auto v = c.integer("tp", false, 1, 1'000'000)) s.tp = *v;
    if (auto v = c.integer("pp", false, 1, 1'000'000)) s.pp = *v;
    if (auto v = c.integer("vp", false, 1, 1'000'000)) s.vp = *v;
    if (auto v = c.integer("ep", false, 1, 1'000'000)) s.ep = *v;
    if (auto v = c.integer("cp", false, 1, 1'000'000)) s.cp = *v;
    if (auto r = c.str("recompute", false)) s.recompute = *r;
    if (auto v = c.integer("recompute_layers", false, 1, 1'000'000)) s.recompute_layers = *v;
    if (auto z = c.integer("zero", false, 0, 3)) s.zero = *z;
    if (auto g = c.integer("shard_group", false, 1, 1'000'000)) s.shard_group = *g;
    if (auto sp = c.boolean("sequence_parallel", false)) s.no_sequence_parallel = !*sp;
    if (auto net = c.number("network_gbps", false, 0, 1e6)) s.network_gbps = *net;
    if (auto ov = c.boolean("overlap_grad_reduce", false)) s.no_overlap_grad_reduce = !*ov;
    if (auto v = c.integer("grad_accum", false, 1, 1'000'000)) s.grad_accum = *v;
    if (auto v = c.str("optimizer", false)) s.optimizer = *v;
    if (auto v = c.str("offload", false)) s.offload = *v;
    if (auto v = c.integer("lora_rank", false, 1, 65536)) s.lora_rank = *v;
    if (auto v = c.str("lora_targets", false)) s.lora_targets = *v;
    if (auto v = c.str("sample_tokens", false)) s.sample_tokens = *v;
    if (auto v = c.boolean("lm_head", false)) s.lm_head = *v;
    if (auto v = c.integer("devices_per_node", false, 1, 1'000'000)) s.devices_per_node = *v;
    if (auto v = c.integer("gpu_layers", false, 0, 1'000'000)) s.gpu_layers = std::to_string(*v);
    if (auto v = c.number("host_memory_gbps", false, 0, 1e6)) s.host_memory_gbps = *v;
    if (auto v = c.number("host_tflops", false, 0, 1e6)) s.host_tflops = *v;
    read_stack_keys(c, s);
    auto measured = *c.map("measured", true);
    for (const auto& key : measured.keys()) mc.measured[key] = *measured.number(key, true, 0, 1e15);
    mc.confidence = c.str("confidence", false).value_or("");
    mc.source = c.str("source", false).value_or(set.source);
    c.str("note", false);
    c.finish();
    set.cases.push_back(std::move(mc));
  }
  return set;
}

MeasurementSet load_measurements(const std::string& path) {
  return parse_measurements(read_text_file(path, "measurements file"), path);
}

}  // namespace hwplan::io
