// hwplan models list | show ID
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/strings.hpp"
#include "estimators/params.hpp"
#include "report/json.hpp"
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


std::string shape(const Model& m) {
  if (!m.is_transformer()) return m.input;
  std::string s = fmt::format("{}L d{} {}h", m.total_layers(), m.hidden_size, m.attention_heads);
  if (m.kv_heads != m.attention_heads) s += fmt::format("/{}kv", m.kv_heads);
  if (m.moe) s += fmt::format(" {}x{} experts", m.moe->experts, m.moe->experts_per_token);
  return s;
}

CommandResult models_result(const ModelsOptions& o) {
  const io::Registry& registry = registry_of(*o.global);
  if (o.list->parsed()) return {report::models_json(registry.models()), kExitOk};
  return {report::model_document(registry.model(o.id)), kExitOk};
}

int run_list(const ModelsOptions& o) {
  const io::Registry& registry = registry_of(*o.global);
  report::Format format = format_of(*o.global);
  if (format == report::Format::kJson) {
    emit(*o.global, report::models_json(registry.models()).dump(2) + "\n");
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
  const io::Registry& registry = registry_of(*o.global);
  Model m = registry.model(o.id);
  if (o.global->format == "yaml") {
    emit(*o.global, io::model_to_yaml(m));
    return 0;
  }
  report::Format format = format_of(*o.global);
  if (format == report::Format::kJson) {
    emit(*o.global, report::model_document(m).dump(2) + "\n");
    return 0;
  }
  json j = report::model_json(m);
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
  c.name = "models";
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
  c.result = [o] { return models_result(*o); };
  c.reset = [o] {
    o->id.clear();
  };
  return c;
}

}  // namespace hwplan::cli
