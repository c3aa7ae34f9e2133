// All known devices and models: the built-in catalog and zoo, overlaid with the user's directories
// (--catalog / --models, HWPLAN_CATALOG / HWPLAN_MODELS). Parsed lazily, once.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/model.hpp"

namespace hwplan::io {

struct RegistryOptions {
  std::vector<std::string> catalog_dirs;  // extra device files (a dir or a single .yaml)
  std::vector<std::string> model_dirs;
  std::vector<std::string> price_files;  // user quotes applied over the catalog (--prices / HWPLAN_PRICES)
  bool builtin = true;
};

// Reads HWPLAN_CATALOG / HWPLAN_MODELS / HWPLAN_PRICES (colon-separated) into the options.
void add_environment(RegistryOptions& options);

class Registry {
 public:
  explicit Registry(RegistryOptions options = {});

  const std::vector<Device>& devices() const;
  const std::vector<Model>& models() const;
  // By id, alias or driver name, case-insensitive; else by a short name: words that appear in a row in exactly one
  // device's id or alias ("4090" -> rtx-4090, "mi300x" -> mi300x; words split at '-', '_' and spaces). Throws
  // InputError naming the nearest match, or the candidates when a short name fits several devices ("h100").
  // Every command looks devices up here.
  const Device& device(const std::string& name) const;
  const Device* find_device(const std::string& name) const;
  // The devices whose id or an alias holds `name`'s words in a row (catalog order); empty for an exact name.
  std::vector<const Device*> short_name_matches(const std::string& name) const;
  // By zoo id, a path to a YAML file, or a bare size ("7B").
  Model model(const std::string& name) const;

 private:
  void load_devices() const;
  void load_models() const;
  RegistryOptions options_;
  mutable std::optional<std::vector<Device>> devices_;
  mutable std::optional<std::vector<Model>> models_;
};

// Files to read from a directory or file argument, sorted (*.yaml / *.yml).
std::vector<std::string> yaml_files_in(const std::string& dir_or_file);

}  // namespace hwplan::io
