#include "io/registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "estimators/params.hpp"
#include "io/catalog_io.hpp"
#include "io/embedded.hpp"
#include "io/gguf_io.hpp"
#include "io/hf_config.hpp"
#include "io/model_io.hpp"
#include "io/safetensors_io.hpp"

namespace hwplan::io {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_path_list(const char* value) {
  std::vector<std::string> out;
  if (!value) return out;
  std::string s(value), item;
  for (char c : s) {
    if (c == ':') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

template <typename T, typename Parse>
void overlay(std::vector<T>& items, const std::vector<std::string>& files, Parse parse) {
  std::map<std::string, std::string> seen_in_this_layer;
  for (const auto& file : files) {
    T item = parse(file);
    auto [it, inserted] = seen_in_this_layer.emplace(item.id, file);
    if (!inserted)
      throw InputError(item.where_id.file.empty() ? SourceLocation{file, 0, 0} : item.where_id, "id",
                       "duplicate id '" + item.id + "' (also defined in " + it->second + ")");
    auto existing = std::find_if(items.begin(), items.end(), [&](const T& x) { return x.id == item.id; });
    if (existing != items.end()) *existing = std::move(item);
    else items.push_back(std::move(item));
  }
}

Model checked(Model m);

}  // namespace

void add_environment(RegistryOptions& options) {
  for (auto& d : split_path_list(std::getenv("HWPLAN_CATALOG"))) options.catalog_dirs.push_back(d);
  for (auto& d : split_path_list(std::getenv("HWPLAN_MODELS"))) options.model_dirs.push_back(d);
  for (auto& f : split_path_list(std::getenv("HWPLAN_PRICES"))) options.price_files.push_back(f);
}

std::vector<std::string> yaml_files_in(const std::string& dir_or_file) {
  std::vector<std::string> out;
  std::error_code ec;
  if (fs::is_regular_file(dir_or_file, ec)) return {dir_or_file};
  if (!fs::is_directory(dir_or_file, ec))
    throw InputError({dir_or_file, 0, 0}, "", "no such directory or file");
  for (const auto& entry : fs::directory_iterator(dir_or_file, ec)) {
    auto ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Registry::Registry(RegistryOptions options) : options_(std::move(options)) {}

void Registry::load_devices() const {
  std::vector<Device> devices;
  if (options_.builtin) {
    devices = builtin_devices();  // validated and converted at build time
  }
  for (const auto& dir : options_.catalog_dirs)
    overlay(devices, yaml_files_in(dir), [](const std::string& f) { return load_device_file(f); });
  for (const auto& file : options_.price_files) apply_price_file(devices, file);
  // Every name (id or alias) must lead to one device.
  std::map<std::string, std::string> names;
  for (const auto& d : devices) {
    std::vector<std::string> all = d.aliases;
    all.push_back(d.id);
    for (const auto& n : all) {
      auto [it, inserted] = names.emplace(to_lower(n), d.id);
      if (!inserted && it->second != d.id)
        throw InputError(d.where_aliases, "aliases",
                         "name '" + n + "' is used by both '" + it->second + "' and '" + d.id + "'");
    }
  }
  std::sort(devices.begin(), devices.end(), [](const Device& a, const Device& b) { return a.id < b.id; });
  derive_sibling_gemm(devices);
  devices_ = std::move(devices);
}

void Registry::load_models() const {
  std::vector<Model> models;
  if (options_.builtin)
    models = builtin_models();
  for (const auto& dir : options_.model_dirs)
    overlay(models, yaml_files_in(dir), [](const std::string& f) { return checked(load_model_file(f)); });
  std::sort(models.begin(), models.end(), [](const Model& a, const Model& b) { return a.id < b.id; });
  models_ = std::move(models);
}

const std::vector<Device>& Registry::devices() const {
  if (!devices_) load_devices();
  return *devices_;
}

const std::vector<Model>& Registry::models() const {
  if (!models_) load_models();
  return *models_;
}

const Device* Registry::find_device(const std::string& name) const {
  std::string lower = to_lower(name);
  for (const auto& d : devices()) {
    if (to_lower(d.id) == lower) return &d;
    for (const auto& a : d.aliases)
      if (to_lower(a) == lower) return &d;
  }
  // Underscores stand for spaces in some tools' output ("Tesla_T4").
  if (lower.find('_') != std::string::npos) {
    std::string spaced = name;
    std::replace(spaced.begin(), spaced.end(), '_', ' ');
    for (const auto& d : devices()) {
      if (to_lower(d.id) == to_lower(spaced)) return &d;
      for (const auto& a : d.aliases)
        if (to_lower(a) == to_lower(spaced)) return &d;
    }
  }
  auto matches = short_name_matches(name);
  return matches.size() == 1 ? matches[0] : nullptr;
}

namespace {
std::vector<std::string> name_words(const std::string& name) {
  std::vector<std::string> out;
  std::string word;
  for (char c : to_lower(name)) {
    if (c == '-' || c == '_' || c == ' ') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

bool holds_in_a_row(const std::vector<std::string>& words, const std::vector<std::string>& part) {
  if (part.empty() || part.size() > words.size()) return false;
  for (std::size_t i = 0; i + part.size() <= words.size(); ++i)
    if (std::equal(part.begin(), part.end(), words.begin() + static_cast<std::ptrdiff_t>(i))) return true;
  return false;
}
}  // namespace

std::vector<const Device*> Registry::short_name_matches(const std::string& name) const {
  std::vector<std::string> part = name_words(name);
  std::vector<const Device*> out;
  if (part.empty() || name.size() > 200) return out;
  for (const auto& d : devices()) {
    bool hit = holds_in_a_row(name_words(d.id), part);
    for (const auto& a : d.aliases) hit = hit || holds_in_a_row(name_words(a), part);
    if (hit) out.push_back(&d);
  }
  return out;
}

const Device& Registry::device(const std::string& name) const {
  if (const Device* d = find_device(name)) return *d;
  if (auto matches = short_name_matches(name); matches.size() > 1) {
    std::string ids;
    for (std::size_t i = 0; i < matches.size(); ++i) ids += (i ? ", " : "") + matches[i]->id;
    throw InputError({}, "device", "'" + name + "' is ambiguous: it names " + std::to_string(matches.size()) +
                                       " devices (" + ids + "); give one of these ids");
  }
  std::vector<std::string> names;
  for (const auto& d : devices()) {
    names.push_back(d.id);
    for (const auto& a : d.aliases) names.push_back(a);
  }
  std::string message = "unknown device '" + name + "'";
  if (auto near = nearest(name, names)) message += "; did you mean '" + *near + "'?";
  message += " (hwplan catalog list shows all)";
  throw InputError({}, "device", message);
}

namespace {

// A user file's published_parameters is only a check: more than 1% off the computed count is worth a warning.
Model checked(Model m) {
  if (m.published_parameters > 0) {
    double computed = count_parameters(m).total;
    double off = computed / m.published_parameters - 1;
    if (std::abs(off) > 0.01)
    {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%+.1f%%", 100 * off);
      m.ingest_notes.push_back("published_parameters is " + human_count(m.published_parameters) +
                               " but the architecture gives " + human_count(computed) + " (" + pct +
                               "): check the shape keys");
    }
  }
  return m;
}

// A model file by its name, or by its first bytes when the name says nothing.
Model load_model_path(const std::string& name) {
  std::string lower = to_lower(name);
  std::error_code ec;
  if (fs::is_directory(name, ec)) {
    // A Hugging Face snapshot directory: config.json (the safetensors headers add exact bytes when present).
    fs::path dir(name);
    if (fs::is_regular_file(dir / "model.safetensors.index.json", ec))
      return load_safetensors((dir / "model.safetensors.index.json").string());
    if (fs::is_regular_file(dir / "model.safetensors", ec)) return load_safetensors((dir / "model.safetensors").string());
    if (fs::is_regular_file(dir / "config.json", ec)) return load_hf_config(name);
    throw InputError({name, 0, 0}, "model", "directory without config.json (a Hugging Face snapshot holds one)");
  }
  if (!fs::is_regular_file(name, ec)) throw InputError({name, 0, 0}, "model", "model file not found");
  if (lower.ends_with(".gguf")) return load_gguf(name);
  if (lower.ends_with(".safetensors") || lower.ends_with(".safetensors.index.json")) return load_safetensors(name);
  if (lower.ends_with(".json")) return load_hf_config(name);
  if (lower.ends_with(".yaml") || lower.ends_with(".yml")) return checked(load_model_file(name));
  char magic[4] = {};
  std::ifstream in(name, std::ios::binary);
  in.read(magic, 4);
  if (in.gcount() == 4 && std::string(magic, 4) == "GGUF") return load_gguf(name);
  if (in.gcount() >= 1 && magic[0] == '{') return load_hf_config(name);
  return checked(load_model_file(name));
}

}  // namespace

Model Registry::model(const std::string& name) const {
  std::string lower = to_lower(name);
  for (const auto& m : models())
    if (m.id == lower) return m;
  std::error_code ec;
  if (lower.ends_with(".yaml") || lower.ends_with(".yml") || lower.ends_with(".json") || lower.ends_with(".gguf") ||
      lower.ends_with(".safetensors") || fs::exists(name, ec))
    return load_model_path(name);
  if (looks_like_repo_id(name)) return load_hf_config(resolve_hf_repo(name));
  if (auto n = parse_param_count(name)) {
    if (*n < 1e6 || *n > 1e14)
      throw InputError({}, "model", "size '" + name + "' is outside 1M..100T parameters");
    return standard_decoder(*n, lower);
  }
  std::vector<std::string> ids;
  for (const auto& m : models()) ids.push_back(m.id);
  std::string message = "unknown model '" + name + "'";
  // A bare number is a size without its unit: suggest billions (the common case), not the nearest id.
  const bool bare_number = !name.empty() && name.find_first_not_of("0123456789.") == std::string::npos;
  if (bare_number) message += "; did you mean '" + name + "B' (" + name + " billion parameters)?";
  else if (auto near = nearest(name, ids)) message += "; did you mean '" + *near + "'?";
  message += " (hwplan models list shows all; a size such as 7B, a YAML, config.json, .gguf or .safetensors path, or a "
             "cached Hugging Face id such as org/name also works)";
  throw InputError({}, "model", message);
}

}  // namespace hwplan::io
