#include "io/serving_io.hpp"

#include "io/yaml_map.hpp"

namespace hwplan::io {

namespace {
const std::vector<std::string> kMetrics = {"requests_per_second", "output_tokens_per_second", "total_tokens_per_second",
                                           "ttft_median_seconds", "ttft_mean_seconds", "ttft_p99_seconds",
                                           "tpot_median_seconds", "tpot_mean_seconds"};
}

ServingSet parse_serving_measurements(const std::string& text, const std::string& file) {
  YamlMap top(parse_document(text, file), file);
  ServingSet set;
  set.file = file;
  set.source = *top.str("source", true);
  set.description = top.str("description", false).value_or("");
  if (auto kind = top.str("kind", true); *kind != "serving") top.fail("kind", "a serving measurement set says kind: serving");
  YAML::Node cases = top.node()["cases"];
  if (!cases.IsSequence() || cases.size() == 0) top.fail("cases", "expected a non-empty list of cases");
  top.finish({"cases"});
  for (const auto& node : cases) {
    YamlMap c(node, file, "cases[].");
    ServingCase s;
    s.where = location_of(node, file);
    s.name = *c.str("name", true);
    s.model = *c.str("model", true);
    s.device = *c.str("device", true);
    s.engine = *c.str("engine", true);
    s.count = c.integer("count", false, 1, 1024).value_or(1);
    s.tp = c.integer("tp", false, 1, 1024).value_or(1);
    s.prompt = *c.integer("prompt", true, 1, 10'000'000);
    s.generate = c.integer("generate", false, 1, 10'000'000);
    s.generate_dist = c.str("generate_dist", false);
    s.prompt_dist = c.str("prompt_dist", false);
    s.weights = c.str("weights", false);
    s.kv_cache = c.str("kv_cache", false);
    s.kv_admission = c.str("kv_admission", false);
    s.chunked_prefill = c.boolean("chunked_prefill", false);
    s.preempted_kv = c.str("preempted_kv", false);
    s.kv_profile = c.str("kv_profile", false);
    s.overlap_scheduling = c.boolean("overlap_scheduling", false);
    s.separate_prefill = c.boolean("separate_prefill", false);
    s.max_sequences = c.integer("max_sequences", false, 1, 1'000'000);
    s.max_batched_tokens = c.integer("max_batched_tokens", false, 1, 10'000'000);
    s.block_size = c.integer("block_size", false, 1, 4096);
    s.scheduler_steps = c.integer("scheduler_steps", false, 1, 1024);
    s.kv_memory_fraction = c.number("kv_memory_fraction", false, 0.01, 1);
    for (const auto& key : c.keys()) s.key_where[key] = c.where(key);
    if (!s.generate == !s.generate_dist) c.fail("generate", "give generate or generate_dist (one of them)");
    s.concurrency = c.integer("concurrency", false, 1, 1'000'000);
    s.rate = c.number("rate", false, 0, 1e7);
    if (!s.concurrency == !s.rate) c.fail("concurrency", "give concurrency or rate (one of them)");
    s.requests = c.integer("requests", false, 10, 1'000'000).value_or(300);
    s.warmup = c.number("warmup", false, 0, 0.9).value_or(0);
    auto m = *c.map("measured", true);
    for (const std::string& k : kMetrics)
      if (auto v = m.number(k, false, 0, 1e12)) s.measured[k] = *v;
    m.finish();
    if (s.measured.empty()) c.fail("measured", "no measured figure");
    s.source = *c.str("source", true);
    s.confidence = c.str("confidence", false).value_or("");
    s.note = c.str("note", false).value_or("");
    c.finish();
    set.cases.push_back(std::move(s));
  }
  return set;
}

bool is_serving_document(const std::string& text) {
  try {
    YAML::Node top = parse_document(text, "measurements");
    return top.IsMap() && top["kind"] && top["kind"].IsScalar() && top["kind"].Scalar() == "serving";
  } catch (const InputError&) {
    return false;  // the strict loader that reads it next names the error
  }
}

bool is_serving_measurements(const std::string& path) {
  return is_serving_document(read_text_file(path, "measurements"));
}

ServingSet load_serving_measurements(const std::string& path) {
  return parse_serving_measurements(read_text_file(path, "measurements"), path);
}

}  // namespace hwplan::io
