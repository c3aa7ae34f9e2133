// Loads model-zoo files (models/*.yaml) into Model values, and builds standard shapes from a bare size ("7B").
#pragma once

#include <string>

#include "core/model.hpp"

namespace hwplan::io {

Model parse_model(const std::string& text, const std::string& file);
Model load_model_file(const std::string& path);
// The model as a zoo YAML file that parse_model reads back to the same Model (every modelling field, the
// published figures and the source; notes from a foreign format go into the source).
std::string model_to_yaml(const Model& model);
// A valid zoo id from any name ("Qwen/Qwen2.5-7B" -> "qwen2.5-7b").
std::string model_id_from(const std::string& name);
// A LLaMA-3-style decoder with roughly `parameters` parameters: GQA with 8 key/value heads of 128, SwiGLU MLP of
// 3.5 d, vocab 128,256, 8,192 context, tied embeddings below 4B; depth ~ d / 128 (models/README.md has the table).
Model standard_decoder(double parameters, const std::string& label);

}  // namespace hwplan::io
