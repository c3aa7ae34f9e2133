// hwplan models list | show ID
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/strings.hpp"
#include "estimators/params.hpp"
#include "io/model_io.hpp"
#include "report/table.hpp"

namespace hwplan::cli {
namespace {

using nlohmann::json;

struct ModelsOptions {
  GlobalOptions* global = nullptr;
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  CLI::App* import = nullptr;
  std::string id;
  std::string source;
};

const char* attention_kind(const Model& m) {
  if (m.mla) return "mla";
  if (m.kv_heads == 1 && m.attention_heads > 1) return "mqa";
  if (m.kv_heads != m.attention_heads) return "gqa";
  return "mha";
}

// Bytes the weights take: exact when read from a checkpoint's headers, else the checkpoint's format, else bf16.
double weight_bytes(const Model& m, const ParameterCounts& c) {
  if (m.checkpoint_weight_bytes > 0) return m.checkpoint_weight_bytes;
  if (m.weight_format) return c.total * bytes_per_param(*m.weight_format);
  return c.total * 2;
}

json model_json(const Model& m) {
  ParameterCounts c = count_parameters(m);
  json j = {{"id", m.id},
            {"name", m.name},
            {"family", to_string(m.family)},
            {"parameters", c.total},
            {"active_parameters", c.active},
            {"published_parameters", m.published_parameters},
            {"source", m.source},
            {"origin", m.origin}};
  if (m.is_transformer()) {
    j["layers"] = m.layers;
    if (m.decoder_layers) j["decoder_layers"] = m.decoder_layers;
    j["hidden_size"] = m.hidden_size;
    j["attention_heads"] = m.attention_heads;
    j["kv_heads"] = m.kv_heads;
    j["head_dim"] = m.head_dim;
    j["ffn_hidden_size"] = m.ffn_hidden_size;
    j["ffn_activation"] = to_string(m.ffn_activation);
    j["vocab_size"] = m.vocab_size;
    j["max_sequence_length"] = m.max_sequence_length;
    j["tied_embeddings"] = m.tied_embeddings;
    j["position_embedding"] = to_string(m.position_embedding);
    j["norm"] = to_string(m.norm);
    j["linear_bias"] = to_string(m.linear_bias);
    if (m.moe)
      j["moe"] = {{"experts", m.moe->experts}, {"experts_per_token", m.moe->experts_per_token},
                  {"shared_experts", m.moe->shared_experts}, {"expert_ffn_hidden_size", m.expert_ffn()},
                  {"dense_layers", m.moe->dense_layers}};
    j["attention"] = attention_kind(m);
    if (m.mla)
      j["mla"] = {{"q_lora_rank", m.mla->q_lora_rank}, {"kv_lora_rank", m.mla->kv_lora_rank},
                  {"qk_nope_head_dim", m.mla->qk_nope_head_dim}, {"qk_rope_head_dim", m.mla->qk_rope_head_dim},
                  {"v_head_dim", m.mla->v_head_dim}};
    if (m.sliding_window > 0) {
      j["sliding_window"] = m.sliding_window;
      j["sliding_window_layers"] = m.sliding_window_layers;
    }
    if (m.mtp_layers > 0) {
      j["mtp_layers"] = m.mtp_layers;
      j["mtp_parameters"] = c.mtp;
    }
    // KV cache in bf16: per token while the context is within every window, and per sequence at the full context.
    j["kv_cache_bytes_per_token_bf16"] = kv_cache_elements(m, 1) * 2;
    j["kv_cache_bytes_at_max_context_bf16"] = kv_cache_elements(m, static_cast<double>(m.max_sequence_length)) * 2;
    j["weight_bytes"] = weight_bytes(m, c);
    j["weight_format"] = m.checkpoint_weight_bytes > 0 ? "checkpoint (" + m.checkpoint_dtypes + ")"
                         : m.weight_format ? std::string(to_string(*m.weight_format)) + " (" + m.weight_format_note + ")"
                                           : std::string("bf16 (assumed)");
    if (!m.ingest_notes.empty()) j["notes"] = m.ingest_notes;
  } else {
    j["forward_flops_per_sample"] = m.forward_flops_per_sample;
    j["activation_bytes_per_sample"] = m.activation_bytes_per_sample;
    j["input"] = m.input;
  }
  return j;
}

std::string shape(const Model& m) {
  if (!m.is_transformer()) return m.input;
  std::string s = fmt::format("{}L d{} {}h", m.total_layers(), m.hidden_size, m.attention_heads);
  if (m.kv_heads != m.attention_heads) s += fmt::format("/{}kv", m.kv_heads);
  if (m.moe) s += fmt::format(" {}x{} experts", m.moe->experts, m.moe->experts_per_token);
  return s;
}

int run_list(const ModelsOptions& o) {
  io::Registry registry = make_registry(*o.global);
  report::Format format = format_of(*o.global);
  if (format == report::Format::kJson) {
    json j = {{"schema_version", 1}, {"models", json::array()}};
    for (const auto& m : registry.models()) j["models"].push_back(model_json(m));
    emit(*o.global, j.dump(2) + "\n");
    return 0;
  }
  report::Table t;
  t.header = {"id", "name", "family", "parameters", "active", "shape", "context"};
  t.right_align = {false, false, false, true, true, false, true};
  for (const auto& m : registry.models()) {
    ParameterCounts c = count_parameters(m);
    t.rows.push_back({m.id, m.name, to_string(m.family), human_count(c.total), human_count(c.active), shape(m),
                      m.is_transformer() ? std::to_string(m.max_sequence_length) : "-"});
  }
  emit(*o.global, report::render(t, format));
  return 0;
}

int run_import(const ModelsOptions& o) {
  io::Registry registry = make_registry(*o.global);
  Model m = registry.model(o.source);
  emit(*o.global, io::model_to_yaml(m));
  if (!o.global->output.empty())
    std::cerr << "hwplan: wrote " << o.global->output << " (" << human_count(count_parameters(m).total)
              << " parameters); use it with --model " << o.global->output << " or --models DIR\n";
  return 0;
}

int run_show(const ModelsOptions& o) {
  io::Registry registry = make_registry(*o.global);
  Model m = registry.model(o.id);
  if (o.global->format == "yaml") {
    emit(*o.global, io::model_to_yaml(m));
    return 0;
  }
  report::Format format = format_of(*o.global);
  if (format == report::Format::kJson) {
    emit(*o.global, json{{"schema_version", 1}, {"model", model_json(m)}}.dump(2) + "\n");
    return 0;
  }
  json j = model_json(m);
  report::Table t;
  t.header = {"key", "value"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "notes" || (it.key() == "published_parameters" && m.published_parameters == 0)) continue;
    std::string v = it->is_string() ? it->get<std::string>() : it->dump();
    if (it->is_number_float()) v = fmt::format("{:.0f}", it->get<double>());
    t.rows.push_back({it.key(), v});
  }
  ParameterCounts c = count_parameters(m);
  if (m.published_parameters > 0)
    t.rows.push_back({"computed vs published", fmt::format("{:+.2f}%", 100 * (c.total / m.published_parameters - 1))});
  for (const auto& note : m.ingest_notes) t.rows.push_back({"note", note});
  emit(*o.global, report::render(t, format));
  return 0;
}

}  // namespace

Command models_command() {
  auto o = std::make_shared<ModelsOptions>();
  Command c;
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    auto* cmd = app.add_subcommand("models", "List and show the model zoo");
    cmd->require_subcommand(1);
    o->list = cmd->add_subcommand("list", "List models with parameter counts computed from the architecture");
    add_format_option(*o->list, g);
    o->show = cmd->add_subcommand(
        "show", "Show one model: where it came from, its architecture, parameters (total, active), weight bytes and "
                "KV-cache bytes per token. MODEL is a zoo id, a size (7B), a YAML file, a Hugging Face config.json or "
                "snapshot directory, a cached org/name id, a .gguf or a .safetensors (.index.json) file");
    o->show->add_option("id", o->id, "Model")->required();
    o->show->add_option("--format", g.format, "Output format (yaml: a zoo file that loads back to the same model)")
        ->check(CLI::IsMember({"table", "json", "csv", "markdown", "yaml"}))
        ->capture_default_str();
    o->show->add_option("-o,--output", g.output, "Write the output to FILE (atomically) instead of stdout")->type_name("FILE");
    o->import = cmd->add_subcommand("import", "Convert any model input (see show) into a zoo YAML file\n"
                                              "  hwplan models import meta-llama/Llama-3.1-8B -o llama.yaml\n"
                                              "  hwplan models import ./Qwen2.5-7B/config.json -o qwen.yaml");
    o->import->add_option("source", o->source, "Model to convert")->required();
    o->import->add_option("-o,--output", g.output, "Write the YAML to FILE (atomically) instead of stdout")->type_name("FILE");
  };
  c.parsed = [o] { return o->list->parsed() || o->show->parsed() || o->import->parsed(); };
  c.run = [o] { return o->list->parsed() ? run_list(*o) : o->import->parsed() ? run_import(*o) : run_show(*o); };
  return c;
}

}  // namespace hwplan::cli
