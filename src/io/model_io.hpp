// Loads model-zoo files (models/*.yaml) into Model values, and builds standard shapes from a bare size ("7B").
#pragma once

#include <string>

#include "core/model.hpp"

namespace hwplan::io {

Model parse_model(const std::string& text, const std::string& file);
Model load_model_file(const std::string& path);
// A LLaMA-style decoder with roughly `parameters` parameters (d_model, layers and heads from the scaling of the
// LLaMA / Chinchilla families; SwiGLU MLP of 8/3 d rounded to 256; vocab 32000; 4096 context).
Model standard_decoder(double parameters, const std::string& label);

}  // namespace hwplan::io
