#include "io/batch_io.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/strings.hpp"
#include "core/workload_options.hpp"
#include "io/stack_keys.hpp"
#include "io/yaml_map.hpp"

namespace hwplan::io {
namespace {

// The scenario's own keys and recommend's; the workload keys come from core/workload_options.hpp (the CLI's table).
const std::vector<std::string> kScenarioKeys = {
    "name", "command", "budget_usd", "max_count", "max_power_w", "deadline", "buy", "rent", "class", "vendor",
    "exclude", "require_interconnect", "top", "optimize", "porting_cost_usd", "min_decode_tps", "devices"};

// Reads the keys of one mapping (defaults or a scenario) into the specs; later calls override earlier ones.
void apply(YamlMap& m, Scenario& s, const std::string& prefix) {
  WorkloadSpec& w = s.workload;
  RecommendSpec& r = s.recommend;
  std::vector<std::string> known = kScenarioKeys;
  for (const auto& o : workload_option_names()) known.push_back(o.key);
  for (const auto& key : m.keys()) {
    s.key_where[key] = m.where(key);
    s.key_name[key] = prefix + key;
  }
  for (const auto& key : m.keys())
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string message = "unknown option";
      if (auto near = nearest(key, known)) message += " (did you mean '" + *near + "'?)";
      m.fail(key, message);
    }
  auto text = [&](const char* key, std::string& into) {
    if (auto v = m.str(key, false)) into = *v;
  };
  auto opt_text = [&](const char* key, std::optional<std::string>& into) {
    if (auto v = m.str(key, false)) into = *v;
  };
  auto whole = [&](const char* key, std::optional<long long>& into, long long lo) {
    if (auto v = m.integer(key, false, lo)) into = *v;
  };
  auto list = [&](const char* key, std::vector<std::string>& into) {
    if (!m.has(key)) return;
    if (m.node()[key].IsSequence()) {
      into = *m.string_list(key, false);
      return;
    }
    // "a,b" as the command line's --exclude a,b reads it.
    into.clear();
    std::string value = *m.str(key, true), item;
    std::istringstream in(value);
    while (std::getline(in, item, ','))
      if (!item.empty()) into.push_back(item);
    if (into.empty()) m.fail(key, "expected a device, class or vendor name, or a list of them");
  };
  if (auto v = m.str("name", false)) s.name = *v;
  if (auto v = m.str("command", false)) {
    if (*v != "estimate" && *v != "recommend" && *v != "fit") m.fail("command", "'" + *v + "' is not one of: estimate, recommend, fit");
    s.command = *v;
  }
  text("model", w.model);
  if (m.has("device")) s.device_given = true;
  text("device", w.device);
  if (auto v = m.integer("count", false, 1, 10'000'000)) w.count = *v, s.count_given = true;
  text("task", w.task);
  text("precision", w.precision);
  opt_text("weights", w.weights);
  whole("batch", w.batch, 1);
  whole("seq", w.seq, 1);
  whole("grad_accum", w.grad_accum, 1);
  whole("global_batch", w.global_batch, 1);
  if (auto v = m.number("tokens", false, 0, 1e18, true, true)) w.tokens = *v;
  whole("tp", w.tp, 1);
  whole("cp", w.cp, 1);
  whole("pp", w.pp, 1);
  whole("dp", w.dp, 1);
  whole("ep", w.ep, 1);
  whole("vp", w.vp, 1);
  if (auto v = m.integer("zero", false, 0, 3)) w.zero = *v;
  whole("shard_group", w.shard_group, 1);
  opt_text("recompute", w.recompute);
  whole("recompute_layers", w.recompute_layers, 1);
  text("offload", w.offload);
  text("attention", w.attention);
  text("optimizer", w.optimizer);
  if (auto v = m.integer("lora_rank", false, 1, 65536)) w.lora_rank = *v;
  text("lora_targets", w.lora_targets);
  opt_text("sample_tokens", w.sample_tokens);
  if (auto v = m.boolean("lm_head", false)) w.lm_head = *v;
  // Given at all, as on the command line (an encoder refuses a generate; serve --trace refuses both).
  if (auto v = m.integer("prompt", false, 0)) w.prompt = *v, w.prompt_given = true;
  if (auto v = m.integer("generate", false, 0)) w.generate = *v, w.generate_given = true;
  opt_text("kv_cache", w.kv_cache);
  opt_text("gpu_layers", w.gpu_layers);  // a number or auto, as on the command line
  if (auto v = m.number("host_memory_gbps", false, 0, 1e6)) w.host_memory_gbps = *v;
  if (auto v = m.number("host_tflops", false, 0, 1e6)) w.host_tflops = *v;
  opt_text("profile", w.profile);
  if (auto v = m.integer("devices_per_node", false, 1)) w.devices_per_node = *v, w.devices_per_node_given = true;
  if (auto v = m.number("network_gbps", false, 0, 1e6)) w.network_gbps = *v;
  if (auto v = m.number("headroom", false, 0, 0.9, false)) w.headroom = *v, w.headroom_given = true;
  if (auto v = m.boolean("sequence_parallel", false)) w.no_sequence_parallel = !*v;
  if (auto v = m.boolean("overlap_grad_reduce", false)) w.no_overlap_grad_reduce = !*v;
  read_stack_keys(m, w);
  if (auto v = m.number("budget_usd", false, 0, 1e15, true, true)) r.budget_usd = *v;
  if (auto v = m.integer("max_count", false, 1, 10'000'000)) r.max_count = *v, s.max_count_given = true;
  if (auto v = m.number("max_power_w", false, 0, 1e12)) r.max_power_w = *v;
  if (m.has("deadline")) s.deadline_given = true;
  opt_text("deadline", r.deadline);
  bool buy = m.boolean("buy", false).value_or(false), rent = m.boolean("rent", false).value_or(false);
  if (buy && rent) m.fail("rent", "give buy or rent, not both");
  if (buy) r.cost_basis = "buy";
  if (rent) r.cost_basis = "rent";
  list("class", r.classes);
  list("vendor", r.vendors);
  list("exclude", r.exclude);
  list("devices", r.devices);
  if (auto v = m.boolean("require_interconnect", false)) r.require_interconnect = *v;
  if (auto v = m.integer("top", false, 1, 1000)) r.top = *v;
  text("optimize", r.optimize);
  if (auto v = m.number("porting_cost_usd", false, 0, 1e12, false)) r.porting_cost_usd = *v;
  if (auto v = m.number("min_decode_tps", false, 0, 1e9)) r.min_decode_tokens_per_second = *v;
}

}  // namespace

std::vector<Scenario> parse_batch(const std::string& text, const std::string& file) {
  YamlMap top(parse_document(text, file), file);
  Scenario defaults;
  if (auto d = top.map("defaults", false)) apply(*d, defaults, "defaults.");
  YAML::Node list = top.node()["scenarios"];
  if (!list.IsDefined() || !list.IsSequence() || list.size() == 0)
    top.fail("scenarios", "expected a non-empty list of scenarios");
  top.finish({"scenarios"});
  std::vector<Scenario> out;
  out.reserve(list.size());
  std::size_t index = 0;
  for (const auto& node : list) {
    ++index;
    Scenario s = defaults;
    // The scenario's own device, count and deadline only: a default device does not restrict recommend's candidates,
    // a default deadline does not turn an estimate into a count search (recommend reads it). A default max_count
    // bounds every search.
    s.device_given = s.count_given = s.deadline_given = false;
    s.where = location_of(node, file);
    s.name = "scenario-" + std::to_string(index);
    // The name first, so that an error elsewhere in the scenario still reports which one it was.
    // (A missing key gives yaml-cpp's invalid node, whose type must not be asked: IsDefined first.)
    if (node.IsMap()) {
      const YAML::Node name = node["name"];
      if (name.IsDefined() && name.IsScalar()) s.name = name.Scalar();
    }
    try {
      const std::string prefix = "scenarios[" + std::to_string(index - 1) + "].";
      YamlMap m(node, file, prefix);
      apply(m, s, prefix);
      // A key the scenario's command does not read is an error, as the same flag is on the command line (a budget
      // without command: recommend would quietly answer a plain estimate). Keys under defaults may serve other scenarios.
      static const std::vector<std::string> kRecommendOnly = {
          "budget_usd", "max_power_w", "buy", "rent", "class", "vendor", "exclude", "require_interconnect", "top", "optimize",
          "porting_cost_usd", "min_decode_tps", "devices"};
      for (const auto& key : m.keys()) {
        const bool recommend_only = std::find(kRecommendOnly.begin(), kRecommendOnly.end(), key) != kRecommendOnly.end();
        const bool search_key = key == "deadline" || key == "max_count";
        if ((recommend_only && s.command != "recommend") || (search_key && s.command == "fit"))
          m.fail(key, "is not read by command '" + s.command + "'" +
                          (recommend_only ? " (it is a recommend key: add command: recommend)" : " (estimate and recommend read it)"));
      }
      if (s.workload.model.empty()) m.fail("model", "required (here or under defaults)");
      if (s.workload.device.empty() && s.command != "recommend") m.fail("device", "required for " + s.command);
    } catch (const InputError& e) {
      s.error = e.what();
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Scenario> load_batch(const std::string& path) {
  return parse_batch(read_text_file(path, "batch file"), path);
}

}  // namespace hwplan::io
