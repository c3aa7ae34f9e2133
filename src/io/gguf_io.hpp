// GGUF files (llama.cpp): the header, metadata and tensor infos only -- never the tensor data, so a 40 GB file
// costs what its header costs. Weight bytes are exact, from each tensor's ggml type (block size and bytes per
// block). Every count and length is checked against the bytes left in the file before anything is allocated.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/model.hpp"

namespace hwplan::io {

struct GgufTensorSummary {
  std::int64_t tensors = 0;
  double elements = 0;
  double bytes = 0;
};

struct GgufInfo {
  std::uint32_t version = 0;
  std::string architecture;
  std::map<std::string, GgufTensorSummary> by_type;  // ggml type name -> tensors, elements, bytes
  double total_elements = 0;
  double total_bytes = 0;
  std::int64_t tensor_count = 0;
  std::int64_t metadata_count = 0;
  std::int64_t header_bytes = 0;  // bytes read
};

// Reads a GGUF file's header into a Model (architecture from the general.architecture metadata) and the info.
Model load_gguf(const std::string& path, GgufInfo* info = nullptr);
// The same from bytes in memory (fuzzing, tests); `file` names it in errors.
Model parse_gguf(const std::string& bytes, const std::string& file, GgufInfo* info = nullptr);

// Block size (elements) and bytes per block of a ggml type id; false for an unknown type.
bool ggml_type_size(std::uint32_t type, std::int64_t* block, std::int64_t* bytes, const char** name);

}  // namespace hwplan::io
