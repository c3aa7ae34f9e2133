#include "io/assumptions_io.hpp"

#include <cstdlib>

#include "core/strings.hpp"
#include "io/yaml_map.hpp"

namespace hwplan::io {

Assumptions parse_assumptions(Assumptions base, const std::string& text, const std::string& file) {
  YamlMap top(parse_document(text, file), file);
  for (const std::string& key : top.keys()) {
    auto info = find_assumption(key);
    if (!info) {
      auto near = nearest(key, assumption_names());
      top.fail(key, "not an assumption" + (near ? " (did you mean '" + *near + "'?)" : std::string("; `hwplan assumptions` lists them")));
    }
    // A range starting at 0 includes it (no overhead, no overlap); a positive minimum is exclusive.
    set_assumption(base, key, *top.number(key, true, info->min, info->max, info->min > 0));
  }
  return base;
}

Assumptions apply_assumption_files(Assumptions base, const std::vector<std::string>& files) {
  for (const std::string& f : files) base = parse_assumptions(base, read_text_file(f, "assumptions"), f);
  return base;
}

std::vector<std::string> assumption_files_from_environment() {
  std::vector<std::string> out;
  const char* env = std::getenv("HWPLAN_ASSUMPTIONS");
  if (!env) return out;
  std::string list = env, item;
  for (char c : list + ":") {
    if (c == ':') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  return out;
}

}  // namespace hwplan::io
