// Hugging Face model definitions: a config.json (or a snapshot directory holding one), and repo ids resolved
// from the local Hugging Face cache. No network access: a model that is not cached is an error saying where
// hwplan looked and how to fetch the file.
#pragma once

#include <string>
#include <vector>

#include "core/model.hpp"

namespace hwplan::io {

// Parses a config.json strictly (wrong types, zero or non-dividing heads: InputError naming the file, line and
// key) and maps its architecture (model_type) onto a Model. A nested text_config (multimodal checkpoints) is
// planned as the language model, with a note saying so. `id` names the model (repo id or directory name).
Model parse_hf_config(const std::string& text, const std::string& file, const std::string& id);
Model load_hf_config(const std::string& path_to_config_or_dir);

// The model types parse_hf_config understands.
const std::vector<std::string>& hf_model_types();

// Hugging Face cache directories to search, in order: $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub.
std::vector<std::string> hf_cache_dirs();
// True when `name` looks like a repo id ("org/name", no such file).
bool looks_like_repo_id(const std::string& name);
// config.json of a cached repo (models--ORG--NAME/snapshots/<refs/main or the newest>/config.json). Throws an
// InputError naming the directories searched and the huggingface-cli command when it is not cached.
std::string resolve_hf_repo(const std::string& repo_id);

}  // namespace hwplan::io
