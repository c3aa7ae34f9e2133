// hwplan models list | show ID
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/strings.hpp"
#include "estimators/params.hpp"
#include "report/table.hpp"

namespace hwplan::cli {
namespace {

using nlohmann::json;

struct ModelsOptions {
  GlobalOptions* global = nullptr;
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  std::string id;
};

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
                  {"shared_experts", m.moe->shared_experts}};
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

int run_show(const ModelsOptions& o) {
  io::Registry registry = make_registry(*o.global);
  Model m = registry.model(o.id);
  report::Format format = format_of(*o.global);
  if (format == report::Format::kJson) {
    emit(*o.global, json{{"schema_version", 1}, {"model", model_json(m)}}.dump(2) + "\n");
    return 0;
  }
  json j = model_json(m);
  report::Table t;
  t.header = {"key", "value"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string v = it->is_string() ? it->get<std::string>() : it->dump();
    if (it->is_number_float()) v = fmt::format("{:.0f}", it->get<double>());
    t.rows.push_back({it.key(), v});
  }
  ParameterCounts c = count_parameters(m);
  if (m.published_parameters > 0)
    t.rows.push_back({"computed vs published", fmt::format("{:+.2f}%", 100 * (c.total / m.published_parameters - 1))});
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
    o->show = cmd->add_subcommand("show", "Show one model (id, YAML path or a size such as 7B)");
    o->show->add_option("id", o->id, "Model id")->required();
    add_format_option(*o->show, g);
  };
  c.parsed = [o] { return o->list->parsed() || o->show->parsed(); };
  c.run = [o] { return o->list->parsed() ? run_list(*o) : run_show(*o); };
  return c;
}

}  // namespace hwplan::cli
