// Build-time generator: parses catalog/*.yaml and models/*.yaml with the same strict loaders the program uses
// (a bad file fails the build with file:line:column) and writes C++ that constructs the values directly, so the
// binary starts without parsing YAML.
//   embed_data OUTPUT.cpp SOURCE_DIR
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/catalog_io.hpp"
#include "io/model_io.hpp"

namespace fs = std::filesystem;
using namespace hwplan;
using hwplan::io::parse_device;
using hwplan::io::parse_model;

namespace {

std::string str(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%03o", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string opt(const std::optional<double>& v) { return v ? "std::optional<double>(" + num(*v) + ")" : "std::nullopt"; }

std::string strings(const std::vector<std::string>& v) {
  std::string out = "{";
  for (const auto& s : v) out += str(s) + ", ";
  return out + "}";
}

std::string string_map(const std::map<std::string, std::string>& m) {
  std::string out = "{";
  for (const auto& [k, v] : m) out += "{" + str(k) + ", " + str(v) + "}, ";
  return out + "}";
}

std::string precision_map(const std::map<Precision, double>& m) {
  std::string out = "{";
  for (const auto& [k, v] : m) out += "{static_cast<Precision>(" + std::to_string(static_cast<int>(k)) + "), " + num(v) + "}, ";
  return out + "}";
}

std::string location(const SourceLocation& l) {
  return "SourceLocation{" + str(l.file) + ", " + std::to_string(l.line) + ", " + std::to_string(l.column) + "}";
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void emit_device(std::ostream& o, const Device& d, int index) {
  o << "static Device device_" << index << "() {\n  {\n    Device d;\n";
  o << "    d.id = " << str(d.id) << ";\n    d.name = " << str(d.name) << ";\n    d.aliases = " << strings(d.aliases) << ";\n";
  o << "    d.vendor = " << str(d.vendor) << ";\n    d.device_class = static_cast<DeviceClass>(" << static_cast<int>(d.device_class) << ");\n";
  o << "    d.architecture = " << str(d.architecture) << ";\n    d.architecture_family = " << str(d.architecture_family) << ";\n";
  o << "    d.release_year = " << d.release_year << ";\n";
  o << "    d.memory_bytes = " << num(d.memory_bytes) << ";\n    d.memory_type = " << str(d.memory_type) << ";\n";
  o << "    d.gpu_memory_limit_bytes = " << opt(d.gpu_memory_limit_bytes) << ";\n";
  o << "    d.reported_memory_bytes = " << opt(d.reported_memory_bytes) << ";\n";
  o << "    d.memory_bandwidth_bytes_per_s = " << num(d.memory_bandwidth_bytes_per_s) << ";\n";
  o << "    d.measured_bandwidth_bytes_per_s = " << opt(d.measured_bandwidth_bytes_per_s) << ";\n";
  o << "    d.peak_flops = " << precision_map(d.peak_flops) << ";\n";
  o << "    d.fp32_matrix_flops = " << opt(d.fp32_matrix_flops) << ";\n";
  o << "    d.measured_matmul_flops = " << precision_map(d.measured_matmul_flops) << ";\n";
  o << "    d.vector_flops = " << opt(d.vector_flops) << ";\n    d.llc_bytes = " << opt(d.llc_bytes) << ";\n";
  if (d.compute_units) o << "    d.compute_units = " << *d.compute_units << ";\n";
  o << "    d.boost_clock_mhz = " << opt(d.boost_clock_mhz) << ";\n    d.base_clock_mhz = " << opt(d.base_clock_mhz) << ";\n";
  o << "    d.sustained_clock_mhz = " << opt(d.sustained_clock_mhz) << ";\n";
  o << "    d.devices_per_package = " << d.devices_per_package << ";\n    d.tdp_w = " << num(d.tdp_w) << ";\n";
  o << "    d.host_link = HostLink{" << str(d.host_link.type) << ", " << d.host_link.pcie_gen << ", " << d.host_link.pcie_lanes << "};\n";
  o << "    d.interconnect = Interconnect{" << str(d.interconnect.type) << ", " << num(d.interconnect.bidirectional_bytes_per_s)
    << ", " << d.interconnect.domain_size << ", " << num(d.interconnect.in_package_bidirectional_bytes_per_s) << ", "
    << num(d.interconnect.between_packages_bidirectional_bytes_per_s) << ", " << (d.interconnect.mesh ? "true" : "false") << "};\n";
  o << "    d.software = " << strings(d.software) << ";\n    d.training = " << (d.training ? "true" : "false") << ";\n";
  o << "    d.price.launch_msrp_usd = " << opt(d.price.launch_msrp_usd) << ";\n    d.price.launch_msrp_date = " << str(d.price.launch_msrp_date) << ";\n";
  o << "    d.price.street_usd = " << opt(d.price.street_usd) << ";\n    d.price.street_date = " << str(d.price.street_date) << ";\n";
  o << "    d.price.cloud_usd_per_hour = " << opt(d.price.cloud_usd_per_hour) << ";\n    d.price.cloud_date = " << str(d.price.cloud_date) << ";\n";
  o << "    d.price.cloud_provider = " << str(d.price.cloud_provider) << ";\n";
  o << "    d.price.used_usd = " << opt(d.price.used_usd) << ";\n    d.price.used_date = " << str(d.price.used_date) << ";\n";
  o << "    d.price.cloud_reserved_usd_per_hour = " << opt(d.price.cloud_reserved_usd_per_hour) << ";\n";
  o << "    d.price.cloud_reserved_date = " << str(d.price.cloud_reserved_date) << ";\n";
  o << "    d.price.cloud_reserved_provider = " << str(d.price.cloud_reserved_provider) << ";\n";
  o << "    d.price.cloud_reserved_term = " << str(d.price.cloud_reserved_term) << ";\n";
  o << "    d.price.rent_only = " << (d.price.rent_only ? "true" : "false") << ";\n";
  o << "    d.price.sources = " << string_map(d.price.sources) << ";\n";
  o << "    d.confidence = " << str(d.confidence) << ";\n    d.sources = " << string_map(d.sources) << ";\n";
  o << "    d.derived = " << string_map(d.derived) << ";\n    d.notes = " << str(d.notes) << ";\n";
  o << "    d.origin = " << str(d.origin) << ";\n    d.where_id = " << location(d.where_id) << ";\n";
  o << "    d.where_aliases = " << location(d.where_aliases) << ";\n";
  o << "    return d;\n  }\n}\n\n";
}

void emit_model(std::ostream& o, const Model& m, int index) {
  o << "static Model model_" << index << "() {\n  {\n    Model m;\n";
  o << "    m.id = " << str(m.id) << ";\n    m.name = " << str(m.name) << ";\n    m.family = static_cast<ModelFamily>(" << static_cast<int>(m.family) << ");\n";
  o << "    m.layers = " << m.layers << ";\n    m.decoder_layers = " << m.decoder_layers << ";\n    m.hidden_size = " << m.hidden_size << ";\n";
  o << "    m.attention_heads = " << m.attention_heads << ";\n    m.kv_heads = " << m.kv_heads << ";\n    m.head_dim = " << m.head_dim << ";\n";
  o << "    m.ffn_hidden_size = " << m.ffn_hidden_size << ";\n    m.ffn_activation = static_cast<Activation>(" << static_cast<int>(m.ffn_activation) << ");\n";
  o << "    m.vocab_size = " << m.vocab_size << ";\n    m.max_sequence_length = " << m.max_sequence_length << ";\n";
  o << "    m.tied_embeddings = " << (m.tied_embeddings ? "true" : "false") << ";\n";
  o << "    m.position_embedding = static_cast<PositionEmbedding>(" << static_cast<int>(m.position_embedding) << ");\n";
  o << "    m.norm = static_cast<NormKind>(" << static_cast<int>(m.norm) << ");\n    m.linear_bias = static_cast<LinearBias>(" << static_cast<int>(m.linear_bias) << ");\n";
  o << "    m.parallel_attention = " << (m.parallel_attention ? "true" : "false") << ";\n    m.dropout = " << (m.dropout ? "true" : "false") << ";\n";
  if (m.moe)
    o << "    m.moe = MoeConfig{" << m.moe->experts << ", " << m.moe->experts_per_token << ", " << m.moe->shared_experts
      << ", " << m.moe->expert_ffn_hidden_size << ", " << m.moe->dense_layers << "};\n";
  if (m.mla)
    o << "    m.mla = MlaConfig{" << m.mla->q_lora_rank << ", " << m.mla->kv_lora_rank << ", " << m.mla->qk_nope_head_dim
      << ", " << m.mla->qk_rope_head_dim << ", " << m.mla->v_head_dim << "};\n";
  o << "    m.sliding_window = " << m.sliding_window << ";\n    m.sliding_window_layers = " << m.sliding_window_layers << ";\n";
  o << "    m.mtp_layers = " << m.mtp_layers << ";\n";
  if (m.weight_format) o << "    m.weight_format = static_cast<WeightFormat>(" << static_cast<int>(*m.weight_format) << ");\n";
  o << "    m.weight_format_note = " << str(m.weight_format_note) << ";\n";
  o << "    m.extra_parameters = " << m.extra_parameters << ";\n    m.extra_parameters_note = " << str(m.extra_parameters_note) << ";\n";
  o << "    m.generic_parameters = " << num(m.generic_parameters) << ";\n    m.forward_flops_per_sample = " << num(m.forward_flops_per_sample) << ";\n";
  o << "    m.activation_bytes_per_sample = " << num(m.activation_bytes_per_sample) << ";\n    m.input = " << str(m.input) << ";\n";
  o << "    m.forward_kernels = " << num(m.forward_kernels) << ";\n";
  o << "    m.inference_activation_bytes_per_sample = " << num(m.inference_activation_bytes_per_sample) << ";\n";
  for (const auto& c : m.convolutions)
    o << "    m.convolutions.push_back(ConvLayer{" << c.count << ", " << c.in_channels << ", " << c.out_channels << ", "
      << c.kernel << ", " << c.stride << ", " << c.output_size << ", " << c.groups << "});\n";
  o << "    m.published_parameters = " << num(m.published_parameters) << ";\n    m.published_active_parameters = " << num(m.published_active_parameters) << ";\n";
  o << "    m.source = " << str(m.source) << ";\n    m.origin = " << str(m.origin) << ";\n    m.where_id = " << location(m.where_id) << ";\n";
  o << "    return m;\n  }\n}\n\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: embed_data OUTPUT.cpp SOURCE_DIR\n");
    return 2;
  }
  fs::path source(argv[2]);
  std::ostringstream o;
  o << "// Generated at build time by tools/embed_data.cpp from catalog/ and models/. Do not edit.\n"
    << "#include \"io/embedded.hpp\"\n\nnamespace hwplan::io {\n\n";
  try {
    int devices = 0, models = 0;
    for (const auto& p : yaml_files(source / "catalog")) {
      std::string rel = "catalog/" + p.filename().string();
      Device d = parse_device(read(p), rel);
      if (p.stem().string() != d.id)
        throw InputError(d.where_id, "id", "'" + d.id + "' does not match the file name " + rel);
      emit_device(o, d, devices++);
    }
    for (const auto& p : yaml_files(source / "models")) {
      std::string rel = "models/" + p.filename().string();
      Model m = parse_model(read(p), rel);
      if (p.stem().string() != m.id)
        throw InputError(m.where_id, "id", "'" + m.id + "' does not match the file name " + rel);
      if (!(m.published_parameters > 0))
        throw InputError({rel, 0, 0}, "published_parameters", "required in the built-in zoo (the count is tested)");
      if (m.moe && !(m.published_active_parameters > 0))
        throw InputError({rel, 0, 0}, "published_active_parameters", "required for MoE models in the built-in zoo");
      emit_model(o, m, models++);
    }
    o << "std::vector<Device> builtin_devices() {\n  std::vector<Device> out;\n";
    for (int i = 0; i < devices; ++i) o << "  out.push_back(device_" << i << "());\n";
    o << "  return out;\n}\n\nstd::vector<Model> builtin_models() {\n  std::vector<Model> out;\n";
    for (int i = 0; i < models; ++i) o << "  out.push_back(model_" << i << "());\n";
    o << "  return out;\n}\n\n";
    // The CUDA / PyTorch compatibility table of `hwplan doctor`, as text (parsed only when doctor runs).
    std::string compat = read(source / "data" / "compat" / "cuda-pytorch.yaml");
    o << "const char* builtin_compat_text() {\n  return " << str(compat) << ";\n}\n\n}  // namespace hwplan::io\n";
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::string text = o.str();
  // Write only when changed, so an unchanged catalog does not trigger recompilation.
  std::ifstream existing(argv[1], std::ios::binary);
  std::ostringstream old;
  old << existing.rdbuf();
  if (old.str() != text) std::ofstream(argv[1], std::ios::binary) << text;
  return 0;
}
