// safetensors format (huggingface/safetensors README): u64 little-endian header length N, N bytes of JSON
// {"NAME": {"dtype": "BF16", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}}, then data.
#include "io/safetensors_io.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "io/hf_config.hpp"
#include "io/yaml_map.hpp"

namespace hwplan::io {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;  // the format's own limit (100 MB)

double dtype_bytes(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2" || d == "F8_E8M0") return 1;
  if (d == "F4" || d == "F6_E2M3" || d == "F6_E3M2") return d == "F4" ? 0.5 : 0.75;
  return 0;
}

std::string read_bytes(std::ifstream& in, std::uint64_t offset, std::uint64_t n) {
  std::string s(n, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(s.data(), static_cast<std::streamsize>(n));
  if (!in) s.clear();
  return s;
}

void add_file(const std::string& path, SafetensorsInfo& info) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) throw InputError({path, 0, 0}, "model", "cannot read the file");
  std::ifstream in(path, std::ios::binary);
  std::string head = read_bytes(in, 0, std::min<std::uint64_t>(size, 8));
  if (head.size() < 8) throw InputError({path, 0, 0}, "header_length", "at byte 0: file shorter than the 8-byte header length");
  std::uint64_t n = 0;
  std::memcpy(&n, head.data(), 8);
  if (n > size - 8 || n > kMaxHeaderBytes)
    throw InputError({path, 0, 0}, "header_length", "at byte 0: header length " + std::to_string(n) +
                                                        " runs past the end of the file (" + std::to_string(size) + " bytes)");
  std::string header = read_bytes(in, 8, n);
  parse_safetensors_header(head + header, size, path, info);
}

}  // namespace

void parse_safetensors_header(const std::string& bytes, std::uint64_t file_size, const std::string& file,
                              SafetensorsInfo& info) {
  if (bytes.size() < 8) throw InputError({file, 0, 0}, "header_length", "at byte 0: file shorter than the 8-byte header length");
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > bytes.size() - 8 || n > kMaxHeaderBytes || file_size < 8 + n)
    throw InputError({file, 0, 0}, "header_length", "at byte 0: header length " + std::to_string(n) + " runs past the end of the file");
  json header;
  try {
    header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  } catch (const json::exception& e) {
    throw InputError({file, 0, 0}, "header", std::string("at byte 8: the header is not valid JSON (") + e.what() + ")");
  }
  if (!header.is_object()) throw InputError({file, 0, 0}, "header", "at byte 8: expected a JSON object");
  const std::uint64_t data_size = file_size - 8 - n;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string& name = it.key();
    const json& t = it.value();
    auto bad = [&](const std::string& message) { throw InputError({file, 0, 0}, name, message); };
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() || !t.contains("shape") ||
        !t["shape"].is_array() || !t.contains("data_offsets") || !t["data_offsets"].is_array() ||
        t["data_offsets"].size() != 2)
      bad("expected {dtype: text, shape: [...], data_offsets: [begin, end]}");
    std::string dtype = t["dtype"].get<std::string>();
    double size = dtype_bytes(dtype);
    if (size == 0) bad("unknown dtype '" + dtype + "'");
    double elements = 1;
    if (t["shape"].size() > 8) bad("more than 8 dimensions");
    for (const auto& d : t["shape"]) {
      if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<std::int64_t>() >= 0)) bad("shape entries must be whole numbers");
      elements *= static_cast<double>(d.get<std::uint64_t>());
    }
    const auto& off = t["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) bad("data_offsets must be whole numbers");
    auto begin = off[0].get<std::uint64_t>(), end = off[1].get<std::uint64_t>();
    if (begin > end || end > data_size)
      bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] outside the " +
          std::to_string(data_size) + "-byte data section");
    double bytes_needed = elements * size;
    if (static_cast<double>(end - begin) != bytes_needed)
      bad("data_offsets hold " + std::to_string(end - begin) + " bytes, the shape and dtype need " +
          std::to_string(static_cast<long long>(bytes_needed)));
    auto& d = info.by_dtype[dtype];
    ++d.first;
    d.second += bytes_needed;
    info.total_bytes += bytes_needed;
    info.total_elements += elements;
    ++info.tensors;
  }
  ++info.files;
}

Model load_safetensors(const std::string& path, SafetensorsInfo* out) {
  std::error_code ec;
  fs::path p(path);
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  SafetensorsInfo info;
  if (path.ends_with(".json")) {
    std::string text = read_text_file(path, "file");
    json index;
    try {
      index = json::parse(text);
    } catch (const json::exception& e) {
      throw InputError({path, 0, 0}, "", std::string("not valid JSON (") + e.what() + ")");
    }
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
      throw InputError({path, 0, 0}, "weight_map", "expected an object mapping tensor names to shard files");
    std::set<std::string> shards;
    for (const auto& [name, shard] : index["weight_map"].items()) {
      if (!shard.is_string()) throw InputError({path, 0, 0}, "weight_map." + name, "expected a shard file name");
      std::string s = shard.get<std::string>();
      if (s.find('/') != std::string::npos || s.find("..") != std::string::npos)
        throw InputError({path, 0, 0}, "weight_map." + name, "shard '" + s + "' is not a file beside the index");
      shards.insert(s);
    }
    if (shards.size() > 100000) throw InputError({path, 0, 0}, "weight_map", "too many shards");
    for (const auto& s : shards) {
      fs::path shard = dir / s;
      if (!fs::is_regular_file(shard, ec)) throw InputError({shard.string(), 0, 0}, "weight_map", "shard named by " + path + " is missing");
      add_file(shard.string(), info);
    }
  } else {
    add_file(path, info);
  }
  fs::path config = dir / "config.json";
  if (!fs::is_regular_file(config, ec))
    throw InputError({path, 0, 0}, "model", "a safetensors checkpoint needs the config.json beside it (not found: " + config.string() + ")");
  Model m = load_hf_config(config.string());
  std::string dtypes;
  for (const auto& [dtype, t] : info.by_dtype)
    dtypes += (dtypes.empty() ? "" : ", ") + dtype + ": " + std::to_string(t.first) + " tensors";
  m.checkpoint_weight_bytes = info.total_bytes;
  m.checkpoint_dtypes = dtypes;
  m.origin = path;
  m.source += "; safetensors headers of " + path;
  m.ingest_notes.push_back("safetensors: " + std::to_string(info.tensors) + " tensors in " + std::to_string(info.files) +
                           " file(s), " + std::to_string(static_cast<long long>(info.total_elements)) + " parameters stored, " +
                           std::to_string(static_cast<long long>(info.total_bytes)) + " weight bytes (" + dtypes + ")");
  if (out) *out = info;
  return m;
}

}  // namespace hwplan::io
