// GGUF v2/v3 reader (format: ggml's docs/gguf.md). Layout: "GGUF", u32 version, u64 tensor count, u64 metadata
// count, metadata key/value pairs, tensor infos (name, n_dims, dims, ggml type, offset), then the data we skip.
#include "io/gguf_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "core/strings.hpp"
#include "estimators/params.hpp"

namespace hwplan::io {
namespace {

// A bounded byte source: a file read through a 1 MiB window, or a string. Every read is checked against the size,
// and skipped bytes beyond the window are seeked over, never read.
class Source {
 public:
  Source(std::string file, const std::string* bytes, std::ifstream* stream, std::uint64_t size)
      : file_(std::move(file)), bytes_(bytes), stream_(stream), size_(size) {}

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError({file_, 0, 0}, key, "at byte " + std::to_string(pos_) + ": " + message);
  }
  std::uint64_t pos() const { return pos_; }
  std::uint64_t left() const { return size_ - pos_; }

  void read(void* out, std::uint64_t n, const std::string& key) {
    if (n > left()) fail(key, "file ends inside the header (truncated GGUF)");
    if (bytes_) {
      std::memcpy(out, bytes_->data() + pos_, n);
      pos_ += n;
      return;
    }
    char* dst = static_cast<char*>(out);
    while (n > 0) {
      if (pos_ < window_start_ || pos_ >= window_start_ + window_.size()) fill(key);
      std::uint64_t offset = pos_ - window_start_;
      std::uint64_t take = std::min<std::uint64_t>(n, window_.size() - offset);
      std::memcpy(dst, window_.data() + offset, take);
      dst += take;
      n -= take;
      pos_ += take;
    }
  }
  void skip(std::uint64_t n, const std::string& key) {
    if (n > left()) fail(key, "file ends inside the header (truncated GGUF)");
    pos_ += n;
  }
  template <typename T>
  T get(const std::string& key) {
    T v;
    read(&v, sizeof v, key);  // GGUF is little-endian, as are the machines hwplan runs on
    return v;
  }
  // A string of at most `keep` bytes kept; longer ones are checked and skipped.
  std::string string(const std::string& key, std::uint64_t keep = 4096) {
    auto n = get<std::uint64_t>(key);
    if (n > left()) fail(key, "string length " + std::to_string(n) + " runs past the end of the file");
    if (n > keep) {
      skip(n, key);
      return {};
    }
    std::string s(n, '\0');
    read(s.data(), n, key);
    return s;
  }

 private:
  void fill(const std::string& key) {
    constexpr std::uint64_t kWindow = 1u << 20;
    window_.resize(std::min<std::uint64_t>(kWindow, left()));
    stream_->clear();
    stream_->seekg(static_cast<std::streamoff>(pos_));
    stream_->read(window_.data(), static_cast<std::streamsize>(window_.size()));
    if (!*stream_) fail(key, "read error");
    window_start_ = pos_;
  }

  std::string file_;
  const std::string* bytes_;
  std::ifstream* stream_;
  std::uint64_t size_;
  std::uint64_t pos_ = 0;
  std::vector<char> window_;
  std::uint64_t window_start_ = 0;
};

enum : std::uint32_t { kU8, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kString, kArray, kU64, kI64, kF64 };

std::uint64_t scalar_size(std::uint32_t type) {
  switch (type) {
    case kU8: case kI8: case kBool: return 1;
    case kU16: case kI16: return 2;
    case kU32: case kI32: case kF32: return 4;
    case kU64: case kI64: case kF64: return 8;
    default: return 0;
  }
}

struct Value {
  std::uint32_t type = 0;
  double number = 0;  // integer and float scalars
  bool is_number = false;
  std::string text;
  std::uint64_t array_count = 0;
  double array_max = 0;  // numeric arrays: largest element (per-layer head counts)
};

Value read_value(Source& in, std::uint32_t type, const std::string& key, int depth) {
  Value v;
  v.type = type;
  if (type == kString) {
    v.text = in.string(key);
    return v;
  }
  if (type == kArray) {
    if (depth > 2) in.fail(key, "arrays nested too deeply");
    auto item_type = in.get<std::uint32_t>(key);
    auto count = in.get<std::uint64_t>(key);
    // Each element takes at least one byte (strings eight): a count past the file's end is malformed.
    std::uint64_t min_size = item_type == kString ? 8 : item_type == kArray ? 12 : scalar_size(item_type);
    if (min_size == 0) in.fail(key, "unknown array element type " + std::to_string(item_type));
    if (count > in.left() / min_size) in.fail(key, "array count " + std::to_string(count) + " runs past the end of the file");
    v.array_count = count;
    if (item_type == kString) {
      for (std::uint64_t i = 0; i < count; ++i) {
        auto n = in.get<std::uint64_t>(key);
        if (n > in.left()) in.fail(key, "string length " + std::to_string(n) + " runs past the end of the file");
        in.skip(n, key);
      }
    }
    // Long numeric arrays (token scores, types) are skipped whole: only short ones (per-layer counts) are read.
    if (item_type != kString && item_type != kArray && count > 4096) {
      in.skip(count * min_size, key);
      return v;
    }
    for (std::uint64_t i = 0; i < count && item_type != kString; ++i) {
      Value item = read_value(in, item_type, key, depth + 1);
      if (item.is_number) v.array_max = std::max(v.array_max, item.number);
    }
    return v;
  }
  std::uint64_t size = scalar_size(type);
  if (size == 0) in.fail(key, "unknown metadata value type " + std::to_string(type));
  v.is_number = type != kBool;
  switch (type) {
    case kU8: v.number = in.get<std::uint8_t>(key); break;
    case kI8: v.number = in.get<std::int8_t>(key); break;
    case kU16: v.number = in.get<std::uint16_t>(key); break;
    case kI16: v.number = in.get<std::int16_t>(key); break;
    case kU32: v.number = in.get<std::uint32_t>(key); break;
    case kI32: v.number = in.get<std::int32_t>(key); break;
    case kF32: v.number = in.get<float>(key); break;
    case kBool: v.number = in.get<std::uint8_t>(key); break;
    case kU64: v.number = static_cast<double>(in.get<std::uint64_t>(key)); break;
    case kI64: v.number = static_cast<double>(in.get<std::int64_t>(key)); break;
    case kF64: v.number = in.get<double>(key); break;
  }
  return v;
}

struct TypeInfo {
  std::uint32_t id;
  const char* name;
  std::int64_t block;
  std::int64_t bytes;
};

// ggml.h / ggml-common.h block layouts (elements per block, bytes per block).
constexpr TypeInfo kTypes[] = {
    {0, "F32", 1, 4},        {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},      {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},     {7, "Q5_1", 32, 24},      {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 36},
    {10, "Q2_K", 256, 84},   {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},  {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74},
    {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},  {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},
    {22, "IQ2_S", 256, 82},  {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},         {25, "I16", 1, 2},
    {26, "I32", 1, 4},       {27, "I64", 1, 8},        {28, "F64", 1, 8},        {29, "IQ1_M", 256, 56},
    {30, "BF16", 1, 2},      {34, "TQ1_0", 256, 54},   {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17},
};

// The nearest WeightFormat of a ggml type, for the compute path (the bytes stay exact).
WeightFormat format_of(const std::string& type) {
  if (type == "F32") return WeightFormat::kFp32;
  if (type == "F16") return WeightFormat::kFp16;
  if (type == "BF16") return WeightFormat::kBf16;
  if (type == "Q4_0") return WeightFormat::kQ4_0;
  if (type == "Q8_0" || type == "Q8_1" || type == "Q8_K" || type == "Q6_K" || type == "I8") return WeightFormat::kInt8;
  return WeightFormat::kInt4;
}

struct Meta {
  std::map<std::string, Value> values;
  const Value* find(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second;
  }
};

Model model_from(const Meta& meta, const GgufInfo& info, bool has_output, bool qkv_bias, const std::string& file) {
  const std::string& a = info.architecture;
  static const std::vector<std::string> kArchs = {"llama", "mistral", "qwen2", "qwen3", "qwen2moe", "qwen3moe",
                                                  "gemma", "gemma2", "gemma3", "phi3", "mixtral", "deepseek2"};
  if (std::find(kArchs.begin(), kArchs.end(), a) == kArchs.end()) {
    std::string list;
    for (const auto& k : kArchs) list += (list.empty() ? "" : ", ") + k;
    throw InputError({file, 0, 0}, "general.architecture", "'" + a + "' is not a supported GGUF architecture (" + list + ")");
  }
  auto integer = [&](const std::string& key, bool required, double fallback, double max = 1e7) -> std::int64_t {
    const Value* v = meta.find(a + "." + key);
    if (!v) {
      if (required) throw InputError({file, 0, 0}, a + "." + key, "required metadata key is missing");
      if (!(fallback >= 0 && fallback <= max))
        throw InputError({file, 0, 0}, a + "." + key, "missing, and the fallback " + std::to_string(fallback) + " is out of range");
      return static_cast<std::int64_t>(fallback);
    }
    double x = v->type == kArray ? v->array_max : v->number;
    if (!(v->is_number || v->type == kArray) || !std::isfinite(x) || x < 1 || x > max || x != std::floor(x))
      throw InputError({file, 0, 0}, a + "." + key, "expected a whole number 1.." + std::to_string(static_cast<long long>(max)));
    return static_cast<std::int64_t>(x);
  };
  Model m;
  m.family = ModelFamily::kDecoder;
  m.layers = integer("block_count", true, 0, 100000);
  m.hidden_size = integer("embedding_length", true, 0);
  m.ffn_hidden_size = integer("feed_forward_length", true, 0);
  m.attention_heads = integer("attention.head_count", true, 0, 1e6);
  m.kv_heads = integer("attention.head_count_kv", false, static_cast<double>(m.attention_heads), 1e6);
  if (m.attention_heads % m.kv_heads != 0)
    throw InputError({file, 0, 0}, a + ".attention.head_count_kv", "does not divide the attention heads");
  m.head_dim = integer("attention.key_length", false, 0);
  if (m.head_dim == 0) {
    if (m.hidden_size % m.attention_heads != 0)
      throw InputError({file, 0, 0}, a + ".attention.head_count", "heads do not divide embedding_length");
    m.head_dim = m.hidden_size / m.attention_heads;
  }
  m.max_sequence_length = integer("context_length", false, 4096, 1e9);
  const Value* tokens = meta.find("tokenizer.ggml.tokens");
  m.vocab_size = integer("vocab_size", false, tokens ? static_cast<double>(tokens->array_count) : 32000, 1e8);
  if (m.vocab_size == 0) m.vocab_size = 32000;
  m.tied_embeddings = !has_output;
  m.ffn_activation = a.rfind("gemma", 0) == 0 ? Activation::kGeglu : Activation::kSwiglu;
  m.position_embedding = PositionEmbedding::kRope;
  m.norm = NormKind::kRmsNorm;
  m.linear_bias = qkv_bias ? LinearBias::kQkv : LinearBias::kNone;
  if (meta.find(a + ".expert_count")) {
    MoeConfig moe;
    moe.experts = static_cast<int>(integer("expert_count", true, 0, 1e5));
    moe.experts_per_token = static_cast<int>(integer("expert_used_count", true, 0, moe.experts));
    if (meta.find(a + ".expert_feed_forward_length")) moe.expert_ffn_hidden_size = integer("expert_feed_forward_length", true, 0);
    if (meta.find(a + ".expert_shared_count")) moe.shared_experts = static_cast<int>(integer("expert_shared_count", true, 0, 1e5));
    if (meta.find(a + ".leading_dense_block_count"))
      moe.dense_layers = std::min<std::int64_t>(integer("leading_dense_block_count", true, 0, 1e5), m.layers - 1);
    m.moe = moe;
  }
  if (a == "deepseek2") {
    // llama.cpp's DeepSeek-V2/V3 keys: MLA ranks, key_length = nope + rope, value_length, rope.dimension_count.
    MlaConfig mla;
    if (meta.find(a + ".attention.q_lora_rank")) mla.q_lora_rank = integer("attention.q_lora_rank", true, 0);
    mla.kv_lora_rank = integer("attention.kv_lora_rank", true, 0);
    mla.qk_rope_head_dim = integer("rope.dimension_count", true, 0);
    // Newer conversions store the absorbed (latent) sizes in key/value_length and the per-head ones in *_mla.
    const bool absorbed = meta.find(a + ".attention.key_length_mla") != nullptr;
    std::int64_t key = integer(absorbed ? "attention.key_length_mla" : "attention.key_length", true, 0);
    if (key <= mla.qk_rope_head_dim)
      throw InputError({file, 0, 0}, a + ".attention.key_length", "must exceed rope.dimension_count");
    mla.qk_nope_head_dim = key - mla.qk_rope_head_dim;
    mla.v_head_dim = integer(absorbed ? "attention.value_length_mla" : "attention.value_length", true, 0);
    m.mla = mla;
    m.head_dim = key;
    m.kv_heads = m.attention_heads;
  }
  if (meta.find(a + ".attention.sliding_window")) {
    m.sliding_window = integer("attention.sliding_window", true, 0, 1e9);
    m.sliding_window_layers = a == "gemma2" ? (m.layers + 1) / 2 : a == "gemma3" ? m.layers - m.layers / 6 : m.layers;
  }
  return m;
}

Model parse(Source& in, const std::string& file, GgufInfo* out) {
  GgufInfo info;
  char magic[4];
  in.read(magic, 4, "magic");
  if (std::memcmp(magic, "GGUF", 4) != 0) in.fail("magic", "not a GGUF file (no 'GGUF' magic)");
  info.version = in.get<std::uint32_t>("version");
  if (info.version != 2 && info.version != 3) in.fail("version", "GGUF version " + std::to_string(info.version) + " (2 and 3 are read)");
  auto tensors = in.get<std::uint64_t>("tensor_count");
  auto kvs = in.get<std::uint64_t>("metadata_kv_count");
  // A key/value pair takes at least 12 bytes, a tensor info at least 28: counts beyond the file are malformed.
  if (kvs > in.left() / 12) in.fail("metadata_kv_count", std::to_string(kvs) + " entries cannot fit in the file");
  if (tensors > in.left() / 28) in.fail("tensor_count", std::to_string(tensors) + " tensors cannot fit in the file");
  info.tensor_count = static_cast<std::int64_t>(tensors);
  info.metadata_count = static_cast<std::int64_t>(kvs);
  Meta meta;
  for (std::uint64_t i = 0; i < kvs; ++i) {
    std::string key = in.string("metadata key", 256);
    if (key.empty()) in.fail("metadata key", "empty or over-long key");
    auto type = in.get<std::uint32_t>(key);
    Value v = read_value(in, type, key, 0);
    if (!meta.values.emplace(key, std::move(v)).second) in.fail(key, "duplicate metadata key");
  }
  const Value* arch = meta.find("general.architecture");
  if (!arch || arch->type != kString || arch->text.empty())
    throw InputError({file, 0, 0}, "general.architecture", "required metadata key is missing or not text");
  info.architecture = arch->text;
  bool has_output = false, qkv_bias = false;
  for (std::uint64_t i = 0; i < tensors; ++i) {
    std::string name = in.string("tensor name", 256);
    auto dims = in.get<std::uint32_t>(name);
    if (dims == 0 || dims > 4) in.fail(name, "tensor with " + std::to_string(dims) + " dimensions (1..4)");
    double elements = 1;
    std::int64_t first = 0;
    for (std::uint32_t d = 0; d < dims; ++d) {
      auto n = in.get<std::uint64_t>(name);
      if (n > (1ull << 40)) in.fail(name, "dimension " + std::to_string(n) + " is not plausible");
      if (d == 0) first = static_cast<std::int64_t>(n);
      elements *= static_cast<double>(n);
    }
    if (elements > 1e15) in.fail(name, "more than 10^15 elements");
    auto type = in.get<std::uint32_t>(name);
    std::int64_t block = 0, bytes = 0;
    const char* type_name = nullptr;
    if (!ggml_type_size(type, &block, &bytes, &type_name)) in.fail(name, "unknown ggml type " + std::to_string(type));
    if (first % block != 0) in.fail(name, std::string(type_name) + " rows must be a multiple of " + std::to_string(block));
    in.get<std::uint64_t>(name);  // offset into the data section
    double tensor_bytes = elements / static_cast<double>(block) * static_cast<double>(bytes);
    auto& t = info.by_type[type_name];
    ++t.tensors;
    t.elements += elements;
    t.bytes += tensor_bytes;
    info.total_elements += elements;
    info.total_bytes += tensor_bytes;
    if (name == "output.weight") has_output = true;
    if (name == "blk.0.attn_q.bias") qkv_bias = true;
  }
  info.header_bytes = static_cast<std::int64_t>(in.pos());
  Model m = model_from(meta, info, has_output, qkv_bias, file);
  // The dominant type by bytes sets the compute path; the bytes themselves are exact.
  std::string dominant;
  double most = -1;
  std::string dtypes;
  for (const auto& [type, t] : info.by_type) {
    if (t.bytes > most) most = t.bytes, dominant = type;
    dtypes += (dtypes.empty() ? "" : ", ") + type + ": " + std::to_string(t.tensors) + " tensors";
  }
  m.checkpoint_weight_bytes = info.total_bytes;
  m.checkpoint_dtypes = dtypes;
  if (!dominant.empty()) {
    m.weight_format = format_of(dominant);
    m.weight_format_note = "GGUF, mostly " + dominant + "; exact bytes from the tensor types";
  }
  m.origin = file;
  std::string name;
  if (const Value* n = meta.find("general.name"); n && n->type == kString) name = n->text;
  std::string stem = std::filesystem::path(file).stem().string();
  m.id = to_lower(stem.empty() ? std::string("gguf") : stem);
  m.name = (name.empty() ? stem : name) + " (GGUF " + info.architecture + ")";
  m.source = "GGUF header of " + file;
  // Counts as whole numbers; a hostile header's sums can exceed long long, so they are printed as doubles.
  auto count = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return std::string(buf);
  };
  m.ingest_notes.push_back("GGUF: " + std::to_string(info.tensor_count) + " tensors, " + count(info.total_elements) +
                           " parameters stored, " + count(info.total_bytes) + " weight bytes (" + dtypes + ")");
  const double computed = count_parameters(m).total;
  if (computed > 0 && std::abs(info.total_elements / computed - 1) > 0.01)
    m.ingest_notes.push_back("the file stores " + count(info.total_elements) + " parameters, the architecture from its metadata " +
                             count(computed) +
                             ": estimates use the architecture, memory the stored bytes");
  if (out) *out = info;
  return m;
}

}  // namespace

bool ggml_type_size(std::uint32_t type, std::int64_t* block, std::int64_t* bytes, const char** name) {
  for (const auto& t : kTypes)
    if (t.id == type) {
      *block = t.block;
      *bytes = t.bytes;
      *name = t.name;
      return true;
    }
  return false;
}

Model parse_gguf(const std::string& bytes, const std::string& file, GgufInfo* info) {
  Source in(file, &bytes, nullptr, bytes.size());
  return parse(in, file, info);
}

Model load_gguf(const std::string& path, GgufInfo* info) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError({path, 0, 0}, "model", "cannot read the file");
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw InputError({path, 0, 0}, "model", "cannot open the file");
  Source in(path, nullptr, &stream, size);
  return parse(in, path, info);
}

}  // namespace hwplan::io
