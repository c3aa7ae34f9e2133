// Errors that are the user's fault (bad YAML, bad flag) carry a location so that the message can name
// file:line:column and the key. They map to exit code 2.
#pragma once

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace hwplan {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitBadInput = 2,
  kExitNothingFeasible = 3,
};

struct SourceLocation {
  std::string file;  // empty for command-line input
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown
};

class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string key, const std::string& message)
      : std::runtime_error(format(where, key, message)),
        where_(std::move(where)),
        key_(std::move(key)),
        detail_(message) {}
  explicit InputError(const std::string& message) : std::runtime_error(message), detail_(message) {}

  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& detail() const { return detail_; }

 private:
  static std::string format(const SourceLocation& where, const std::string& key, const std::string& message) {
    std::string out;
    if (!where.file.empty()) {
      out += where.file;
      if (where.line > 0) out += ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
      out += ": ";
    }
    if (!key.empty()) out += "key '" + key + "': ";
    out += message;
    return out;
  }
  SourceLocation where_;
  std::string key_;
  std::string detail_;
};

// An error about a command-line flag ("--tp") or a bare key ("model") raised while a file's entry (a measurement
// case, a batch scenario) was evaluated, named as the entry's key of the same name (tp, with `prefix`: "cases[].tp";
// `names`, where given, spells each key in full: "defaults.tp") at that key's position in the file when the entry
// gives it (`key_where`), else at the entry's. Errors that already name a file keep theirs; `context` ("case 'x': ")
// leads the message.
inline InputError keyed_to_file(const InputError& e, const SourceLocation& entry,
                                const std::map<std::string, SourceLocation>& key_where, const std::string& prefix,
                                const std::string& context, const std::map<std::string, std::string>* names = nullptr) {
  if (!e.where().file.empty() && e.where().file != entry.file)
    return InputError(entry, "", context + e.what());  // another file's error (a model YAML): its position kept
  if (!e.where().file.empty()) return InputError(e.where(), e.key(), context + e.detail());
  std::string key = e.key();
  SourceLocation where = entry;
  std::string name = key.rfind("--", 0) == 0 ? key.substr(2) : key;
  std::replace(name.begin(), name.end(), '-', '_');
  if (auto it = key_where.find(name); it != key_where.end()) {
    where = it->second;
    auto full = names ? names->find(name) : std::map<std::string, std::string>::const_iterator();
    key = names && full != names->end() ? full->second : prefix + name;
  }
  return InputError(where, key, context + e.detail());
}

// Valid input for which nothing can run (no layout, no device meets the constraints). Maps to exit code 3.
class Infeasible : public std::runtime_error {
 public:
  explicit Infeasible(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace hwplan
