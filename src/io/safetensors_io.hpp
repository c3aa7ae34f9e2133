// safetensors checkpoints: model.safetensors (one file) or model.safetensors.index.json (shards). Only the
// headers are read (an 8-byte length and a JSON table of dtype, shape and byte range per tensor): exact weight
// bytes and dtypes. The architecture comes from the config.json beside the file.
#pragma once

#include <map>
#include <string>

#include "core/model.hpp"

namespace hwplan::io {

struct SafetensorsInfo {
  std::map<std::string, std::pair<std::int64_t, double>> by_dtype;  // dtype -> tensors, bytes
  double total_bytes = 0;
  double total_elements = 0;
  std::int64_t tensors = 0;
  std::int64_t files = 0;
};

// Adds one safetensors file's header (bytes in memory: tests and fuzzing) to `info`.
void parse_safetensors_header(const std::string& bytes, std::uint64_t file_size, const std::string& file,
                              SafetensorsInfo& info);
// Reads model.safetensors or model.safetensors.index.json (and its shards) and the config.json beside it.
Model load_safetensors(const std::string& path, SafetensorsInfo* info = nullptr);

}  // namespace hwplan::io
