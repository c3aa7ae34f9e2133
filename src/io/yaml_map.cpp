#include "io/yaml_map.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "core/strings.hpp"

namespace hwplan::io {
namespace {

constexpr int kMaxNestingDepth = 64;

// yaml-cpp recurses once per nesting level; refuse pathological documents before handing them over.
void check_nesting(const std::string& text, const std::string& file) {
  int depth = 0, line = 1, column = 1;
  bool in_quote = false;
  bool in_comment = false;
  char quote = 0;
  char prev = ' ';
  int line_indent = 0;
  bool at_line_start = true;
  for (char c : text) {
    if (c == '\n') {
      ++line;
      column = 1;
      at_line_start = true;
      in_comment = false;
      line_indent = 0;
      prev = ' ';
      continue;
    }
    if (in_comment) continue;
    if (at_line_start) {
      if (c == ' ') {
        ++line_indent;
        ++column;
        continue;
      }
      at_line_start = false;
      if (line_indent > kMaxNestingDepth * 8)
        throw InputError({file, line, column}, "", "document is nested too deeply (indentation of " +
                                                       std::to_string(line_indent) + " columns)");
    }
    bool token_start = prev == ' ' || prev == ':' || prev == '[' || prev == '{' || prev == ',' || prev == '-';
    if (in_quote) {
      if (c == quote) in_quote = false;
    } else if ((c == '"' || c == '\'') && token_start) {
      in_quote = true;
      quote = c;
    } else if (c == '#' && prev == ' ') {
      in_comment = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNestingDepth)
        throw InputError({file, line, column}, "",
                         "document is nested deeper than " + std::to_string(kMaxNestingDepth) + " levels");
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
    prev = c;
    ++column;
  }
}

// yaml-cpp accepts a quoted value that the file ends inside (the rest of the file becomes the value, and a typo
// goes unnoticed). Follows the quotes that open a value, line by line, and refuses one still open at the end.
// The text of a block scalar (`key: |` or `key: >` and the more indented lines below it) is not looked into.
void check_quotes_closed(const std::string& text, const std::string& file) {
  constexpr auto npos = std::string_view::npos;
  char quote = 0;  // the quote character of the value still open, or 0
  int open_line = 0, open_column = 0;
  int block_indent = -1;  // indentation of the line that opened a block scalar, or -1
  int flow_depth = 0;     // open [ and { of flow collections
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    const std::size_t first = line.find_first_not_of(" \t\r");
    const int indent = static_cast<int>(std::min(line.find_first_not_of(' '), line.size()));
    if (quote == 0 && block_indent >= 0) {
      if (first == npos || indent > block_indent) continue;
      block_indent = -1;
    }
    char last = 0;  // the last character outside quotes and comments on this line (0: none yet)
    bool last_started_value = false;  // `last` stood where a value may start (a "- " sequence indicator, not a hyphen)
    std::size_t content_end = line.size();
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quote != 0) {
        if (quote == '"' && c == '\\') {
          ++i;  // an escaped character, \" included
        } else if (quote == '\'' && c == '\'' && i + 1 < line.size() && line[i + 1] == '\'') {
          ++i;  // '' is a quote inside a single-quoted value
        } else if (c == quote) {
          quote = 0;
          last = c;
        }
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') continue;
      const bool after_blank = i > 0 && (line[i - 1] == ' ' || line[i - 1] == '\t');
      if (c == '#' && (i == 0 || after_blank)) {
        content_end = i;
        break;
      }
      // Where a quote opens a quoted value: at the start of the line's content, after "key: ", after a "- " or
      // "? " indicator, and inside a flow collection after [ { or , (in block context a comma, a hyphen or a
      // bracket inside a plain value is just a character, and so is a quote after it).
      const bool in_flow = flow_depth > 0;
      const bool value_start = last == 0 || (in_flow && (last == '[' || last == '{' || last == ',')) ||
                               (last == ':' && after_blank) ||
                               ((last == '-' || last == '?') && after_blank && last_started_value);
      if ((c == '"' || c == '\'') && value_start) {
        quote = c;
        open_line = line_no;
        open_column = static_cast<int>(i) + 1;
        continue;
      }
      if ((c == '[' || c == '{') && (value_start || (in_flow && (last == '[' || last == '{' || last == ','))))
        ++flow_depth;
      else if ((c == ']' || c == '}') && flow_depth > 0)
        --flow_depth;
      last_started_value = value_start;
      last = c;
    }
    if (quote != 0) continue;
    // `key: |`, `- >-`, `key: |2`: a block scalar starts on the next line.
    std::string_view content = line.substr(0, content_end);
    const std::size_t stop = content.find_last_not_of(" \t\r");
    if (stop == npos) continue;
    content = content.substr(0, stop + 1);
    const std::size_t bar = content.find_last_of("|>");
    if (bar != npos && (bar == 0 || content[bar - 1] == ' ') &&
        content.find_first_not_of("-+0123456789", bar + 1) == npos)
      block_indent = indent;
  }
  if (quote != 0)
    throw InputError({file, open_line, open_column}, "",
                     std::string(quote == '"' ? "double" : "single") + "-quoted value opened here is never closed");
}

// Shows a scalar in a message: control bytes escaped, long values cut.
std::string shown(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= 60) {
      out += "...";
      break;
    }
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing (null)";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "'" + shown(node.Scalar()) + "'";
}

constexpr std::size_t kMaxTextLength = 4096;

}  // namespace

SourceLocation location_of(const YAML::Node& node, const std::string& file) {
  YAML::Mark m = node.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

// YAML files are UTF-8 text; anything else is reported as binary rather than echoed.
bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (extra < 0 || i + extra >= s.size() + (extra == 0 ? 1 : 0)) return false;
    for (int k = 1; k <= extra; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += extra + 1;
  }
  return true;
}

YAML::Node parse_document(const std::string& text, const std::string& file) {
  if (text.find('\0') != std::string::npos)
    throw InputError({file, 1, 1}, "", "file is binary, not YAML text (contains NUL bytes)");
  if (!valid_utf8(text)) throw InputError({file, 1, 1}, "", "file is not UTF-8 text (binary data?)");
  check_nesting(text, file);
  check_quotes_closed(text, file);
  // A second document ("---" after content) would be silently ignored by YAML::Load; refuse it. (YAML::LoadAll
  // is not used: yaml-cpp 0.7 loops forever on some inputs, e.g. a document starting with ",".)
  {
    bool content = false;
    int line_no = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      std::string_view line(text.data() + pos, end - pos);
      ++line_no;
      bool marker = line.substr(0, 3) == "---" && (line.size() == 3 || line[3] == ' ' || line[3] == '\r');
      bool blank = line.find_first_not_of(" \t\r") == std::string_view::npos;
      bool comment = !blank && line[line.find_first_not_of(" \t")] == '#';
      if (marker && content)
        throw InputError({file, line_no, 1}, "", "a second YAML document starts here; hwplan reads exactly one per file");
      if (!blank && !comment && !marker) content = true;
      pos = end + 1;
    }
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError({file, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) {
    bool has_content = false;
    for (std::size_t pos = 0; pos < text.size() && !has_content;) {
      std::size_t end = std::min(text.find('\n', pos), text.size());
      std::string_view line(text.data() + pos, end - pos);
      std::size_t first = line.find_first_not_of(" \t\r");
      if (first != std::string_view::npos && line[first] != '#' && line.substr(first, 3) != "---") has_content = true;
      pos = end + 1;
    }
    throw InputError({file, 1, 1}, "", has_content ? "expected a mapping of keys at the top level, found no readable YAML value"
                                                   : "file is empty");
  }
  if (!root.IsMap())
    throw InputError(location_of(root, file), "", "expected a mapping of keys at the top level, found " + describe(root));
  return root;
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError({path, 0, 0}, "", "is a directory, not a YAML " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "", "cannot read " + what);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

YAML::Node load_file(const std::string& path) { return parse_document(read_text_file(path), path); }

std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

YamlMap::YamlMap(const YAML::Node& node, std::string file, std::string prefix)
    : node_(node), file_(std::move(file)), prefix_(std::move(prefix)) {
  if (!node_.IsMap())
    throw InputError(location_of(node_, file_), prefix_.empty() ? "" : prefix_.substr(0, prefix_.size() - 1),
                     "expected a mapping, found " + describe(node_));
  std::set<std::string> names;
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar())
      throw InputError(location_of(kv.first, file_), prefix_.empty() ? "" : prefix_.substr(0, prefix_.size() - 1),
                       "keys must be plain names");
    const std::string& k = kv.first.Scalar();
    if (!names.insert(k).second)
      throw InputError(location_of(kv.first, file_), prefix_ + k, "duplicate key");
  }
}

SourceLocation YamlMap::where(const std::string& key) const {
  for (const auto& kv : node_)
    if (kv.first.Scalar() == key) return location_of(kv.first, file_);
  return location_of(node_, file_);
}

void YamlMap::fail(const std::string& key, const std::string& message) const {
  throw InputError(where(key), prefix_ + key, message);
}

bool YamlMap::has(const std::string& key) const {
  for (const auto& kv : node_)
    if (kv.first.Scalar() == key) return true;
  return false;
}

std::vector<std::string> YamlMap::keys() const {
  std::vector<std::string> out;
  for (const auto& kv : node_) out.push_back(kv.first.Scalar());
  return out;
}

YAML::Node YamlMap::value(const std::string& key, bool required) {
  known_.push_back(key);
  seen_.insert(key);
  for (const auto& kv : node_) {
    if (kv.first.Scalar() == key) {
      if (kv.second.IsNull()) {
        if (required) throw InputError(location_of(kv.first, file_), prefix_ + key, "is required but empty");
        return YAML::Node();
      }
      return kv.second;
    }
  }
  if (required) {
    // A missing key next to an unknown one is most likely a typo of it: point at the typo.
    std::vector<std::string> unknown;
    for (const auto& kv : node_)
      if (!seen_.count(kv.first.Scalar())) unknown.push_back(kv.first.Scalar());
    // Report the missing key as missing; name a close unknown key as a likely misspelling of it.
    if (auto near = nearest(key, unknown))
      throw InputError(where(*near), prefix_ + key,
                       "required key is missing (is '" + prefix_ + *near + "' here a misspelling of it?)");
    throw InputError(location_of(node_, file_), prefix_ + key, "required key is missing");
  }
  return YAML::Node();
}

std::optional<std::string> YamlMap::str(const std::string& key, bool required) {
  YAML::Node v = value(key, required);
  if (!v.IsDefined() || v.IsNull()) return std::nullopt;
  if (!v.IsScalar())
    throw InputError(location_of(v, file_), prefix_ + key, "expected text, found " + describe(v));
  if (v.Scalar().empty() && required)
    throw InputError(location_of(v, file_), prefix_ + key, "must not be empty");
  if (v.Scalar().size() > kMaxTextLength)
    throw InputError(location_of(v, file_), prefix_ + key, "text is implausibly long (" + std::to_string(v.Scalar().size()) + " characters)");
  return v.Scalar();
}

std::optional<double> YamlMap::number(const std::string& key, bool required, double min, double max,
                                      bool min_exclusive, bool count_suffix) {
  YAML::Node v = value(key, required);
  if (!v.IsDefined() || v.IsNull()) return std::nullopt;
  if (!v.IsScalar())
    throw InputError(location_of(v, file_), prefix_ + key, "expected a number, found " + describe(v));
  const std::string& s = v.Scalar();
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  bool is_special = s == ".nan" || s == ".NaN" || s == ".NAN" || s == ".inf" || s == "-.inf" || s == ".Inf" ||
                    s == "-.Inf" || s == "nan" || s == "inf";
  bool hex = s.find_first_of("xX") != std::string::npos;
  bool whole = end == s.c_str() + s.size();
  if (count_suffix && !hex && !s.empty() && !whole) {
    if (auto counted = parse_param_count(s)) d = *counted, whole = true;
    else if (auto negative = s[0] == '-' ? parse_param_count(s.substr(1)) : std::nullopt)
      d = -*negative, whole = true;  // "-5k": a negative count, said as such below
  }
  if (s.empty() || hex || !whole || is_special || !std::isfinite(d)) {
    std::string hint;
    bool unit_suffix = !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])) && !whole && !hex;
    if (unit_suffix)
      hint = count_suffix ? " (a plain number, or one with k, M, B or T: 20B, 3k)"
                          : " (write the plain number; the unit is in the key name)";
    throw InputError(location_of(v, file_), prefix_ + key, "expected a finite decimal number, found '" + shown(s) + "'" + hint);
  }
  if (min_exclusive ? d <= min : d < min) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", min);
    throw InputError(location_of(v, file_), prefix_ + key,
                     "must be " + std::string(min_exclusive ? "greater than " : "at least ") + buf + ", found " + s);
  }
  if (d > max) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", max);
    throw InputError(location_of(v, file_), prefix_ + key, "is implausibly large (over " + std::string(buf) +
                                                               "), found " + s);
  }
  return d;
}

std::optional<std::int64_t> YamlMap::integer(const std::string& key, bool required, std::int64_t min,
                                             std::int64_t max) {
  YAML::Node v = value(key, required);
  if (!v.IsDefined() || v.IsNull()) return std::nullopt;
  if (!v.IsScalar())
    throw InputError(location_of(v, file_), prefix_ + key, "expected a whole number, found " + describe(v));
  const std::string& s = v.Scalar();
  const std::string& digits = s;
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(digits.c_str(), &end, 10);
  if (digits.empty() || end != digits.c_str() + digits.size() || errno == ERANGE)
    throw InputError(location_of(v, file_), prefix_ + key, "expected a whole number (digits only), found '" + shown(s) + "'");
  if (n < min)
    throw InputError(location_of(v, file_), prefix_ + key,
                     "must be at least " + std::to_string(min) + ", found " + s);
  if (n > max)
    throw InputError(location_of(v, file_), prefix_ + key,
                     "is implausibly large (over " + std::to_string(max) + "), found " + s);
  return n;
}

std::optional<bool> YamlMap::boolean(const std::string& key, bool required) {
  YAML::Node v = value(key, required);
  if (!v.IsDefined() || v.IsNull()) return std::nullopt;
  const std::string s = v.IsScalar() ? v.Scalar() : "";
  // on / off as the command line's flags say them (and YAML 1.1's booleans).
  if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "False" || s == "no" || s == "off") return false;
  throw InputError(location_of(v, file_), prefix_ + key, "expected true or false (or on / off), found " + describe(v));
}

std::optional<std::vector<std::string>> YamlMap::string_list(const std::string& key, bool required) {
  YAML::Node v = value(key, required);
  if (!v.IsDefined() || v.IsNull()) return std::nullopt;
  if (!v.IsSequence())
    throw InputError(location_of(v, file_), prefix_ + key, "expected a list, found " + describe(v));
  std::vector<std::string> out;
  for (const auto& item : v) {
    if (!item.IsScalar() || item.Scalar().empty())
      throw InputError(location_of(item, file_), prefix_ + key, "list items must be non-empty text, found " +
                                                                    describe(item));
    out.push_back(item.Scalar());
  }
  return out;
}

std::optional<YamlMap> YamlMap::map(const std::string& key, bool required) {
  YAML::Node v = value(key, required);
  if (!v.IsDefined() || v.IsNull()) return std::nullopt;
  if (!v.IsMap())
    throw InputError(location_of(v, file_), prefix_ + key, "expected a mapping, found " + describe(v));
  return YamlMap(v, file_, prefix_ + key + ".");
}

void YamlMap::finish(const std::vector<std::string>& known_extra) const {
  std::vector<std::string> known = known_;
  known.insert(known.end(), known_extra.begin(), known_extra.end());
  for (const auto& kv : node_) {
    const std::string& k = kv.first.Scalar();
    if (seen_.count(k) || std::find(known_extra.begin(), known_extra.end(), k) != known_extra.end()) continue;
    std::string message = "unknown key";
    if (auto near = nearest(k, known)) message += " (did you mean '" + *near + "'?)";
    throw InputError(location_of(kv.first, file_), prefix_ + k, message);
  }
}

}  // namespace hwplan::io
