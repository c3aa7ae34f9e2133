// Strict reading of a YAML mapping: every key read is remembered, unknown keys and duplicates are errors,
// and every error names file:line:column and the key. Only src/io touches yaml-cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hwplan::io {

// Parses a whole document from text. Syntax errors become InputError with the file name and position.
// Rejects empty documents and documents nested deeper than a sane limit.
YAML::Node parse_document(const std::string& text, const std::string& file);
// Reads a whole file; a missing, unreadable or directory path is an InputError naming it (`what`: "profile", ...).
std::string read_text_file(const std::string& path, const std::string& what = "file");
// Reads a file (with a clear error when it cannot be read) and parses it.
YAML::Node load_file(const std::string& path);

SourceLocation location_of(const YAML::Node& node, const std::string& file);

// `s` as a double-quoted YAML scalar (quotes, backslashes and newlines escaped), for the files hwplan writes.
std::string yaml_quoted(const std::string& s);

class YamlMap {
 public:
  // `what` names the object in messages ("device", "model"); `prefix` is the key path of this map ("price.").
  YamlMap(const YAML::Node& node, std::string file, std::string prefix = "");

  std::optional<std::string> str(const std::string& key, bool required);
  // A finite number in [min, max] (min exclusive when min_exclusive). With count_suffix, "20B", "3k", "1.5M", "2T"
  // are read as the command line reads --tokens and --budget-usd.
  std::optional<double> number(const std::string& key, bool required, double min = 0, double max = 1e30,
                               bool min_exclusive = true, bool count_suffix = false);
  std::optional<std::int64_t> integer(const std::string& key, bool required, std::int64_t min = 1,
                                      std::int64_t max = INT64_MAX);
  std::optional<bool> boolean(const std::string& key, bool required);
  std::optional<std::vector<std::string>> string_list(const std::string& key, bool required);
  std::optional<YamlMap> map(const std::string& key, bool required);
  // Keys of this map in file order (for free-form maps such as `sources`).
  std::vector<std::string> keys() const;
  bool has(const std::string& key) const;

  // Errors on any key not read, suggesting the nearest known key.
  void finish(const std::vector<std::string>& known_extra = {}) const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  SourceLocation where(const std::string& key) const;
  const std::string& file() const { return file_; }
  const YAML::Node& node() const { return node_; }

 private:
  YAML::Node value(const std::string& key, bool required);
  YAML::Node node_;
  std::string file_;
  std::string prefix_;
  std::set<std::string> seen_;
  std::vector<std::string> known_;
};

}  // namespace hwplan::io
