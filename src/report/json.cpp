#include "report/json.hpp"

#include "core/precision.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "estimators/params.hpp"

namespace hwplan::report {
using nlohmann::json;

json device_json(const Device& d) {
  json peaks = json::object();
  for (const auto& [p, v] : d.peak_flops) peaks[to_string(p)] = v / kTera;
  if (d.fp32_matrix_flops) peaks["fp32_matrix"] = *d.fp32_matrix_flops / kTera;
  json measured = json::object();
  for (const auto& [p, v] : d.measured_matmul_flops) measured[to_string(p)] = v / kTera;
  json price = json::object();
  for (const auto& q : quotes_of(d.price)) {
    std::string kind = q.kind;
    price[q.per_hour ? kind + "_usd_per_hour" : kind + "_usd"] = q.usd;
    price[kind + "_date"] = q.date;
    price[kind + "_source"] = q.source;
    if (q.per_hour) price[kind + "_provider"] = kind == "cloud" ? d.price.cloud_provider : d.price.cloud_reserved_provider;
  }
  if (!d.price.cloud_reserved_term.empty()) price["cloud_reserved_term"] = d.price.cloud_reserved_term;
  if (d.price.rent_only) {
    price["rent_only"] = true;
    if (auto it = d.price.sources.find("rent_only"); it != d.price.sources.end()) price["rent_only_source"] = it->second;
  }
  json j = {{"id", d.id},
            {"name", d.name},
            {"aliases", d.aliases},
            {"vendor", d.vendor},
            {"class", to_string(d.device_class)},
            {"architecture", d.architecture},
            {"architecture_family", d.architecture_family},
            {"devices_per_package", d.devices_per_package},
            {"release_year", d.release_year},
            {"memory_bytes", d.memory_bytes},
            {"memory_gib", d.memory_bytes / kGiB},
            {"gpu_memory_limit_gib", d.gpu_memory_limit_bytes ? nlohmann::json(*d.gpu_memory_limit_bytes / kGiB) : nlohmann::json(nullptr)},
            {"memory_reported_mib", d.reported_memory_bytes ? nlohmann::json(*d.reported_memory_bytes / kMiB) : nlohmann::json(nullptr)},
            {"memory_type", d.memory_type},
            {"memory_bandwidth_gb_per_s", d.memory_bandwidth_bytes_per_s / kGB},
            {"measured_bandwidth_gb_per_s", d.measured_bandwidth_bytes_per_s ? nlohmann::json(*d.measured_bandwidth_bytes_per_s / kGB) : nlohmann::json(nullptr)},
            {"peak_tflops", peaks},
            {"measured_matmul_tflops", measured},
            {"tdp_w", d.tdp_w},
            {"host_link", {{"type", d.host_link.type}, {"pcie_gen", d.host_link.pcie_gen}, {"pcie_lanes", d.host_link.pcie_lanes}}},
            {"interconnect",
             {{"type", d.interconnect.type},
              {"bandwidth_bidirectional_gb_per_s", d.interconnect.bidirectional_bytes_per_s / kGB},
              {"domain_size", d.interconnect.domain_size},
              {"topology", d.interconnect.mesh ? "mesh" : "switch"},
              {"in_package_bidirectional_gb_per_s", d.interconnect.in_package_bidirectional_bytes_per_s > 0
                                                        ? nlohmann::json(d.interconnect.in_package_bidirectional_bytes_per_s / kGB)
                                                        : nlohmann::json()},
              {"between_packages_bidirectional_gb_per_s",
               d.interconnect.between_packages_bidirectional_bytes_per_s > 0
                   ? nlohmann::json(d.interconnect.between_packages_bidirectional_bytes_per_s / kGB)
                   : nlohmann::json()}}},
            {"software", d.software},
            {"training", d.training},
            {"price", price},
            {"confidence", d.confidence},
            {"sources", d.sources},
            {"derived", d.derived},
            {"notes", d.notes},
            {"origin", d.origin}};
  if (d.llc_bytes) j["l2_cache_mib"] = *d.llc_bytes / kMiB;
  if (d.compute_units) j["compute_units"] = *d.compute_units;
  if (d.boost_clock_mhz) j["boost_clock_mhz"] = *d.boost_clock_mhz;
  if (d.base_clock_mhz) j["base_clock_mhz"] = *d.base_clock_mhz;
  if (d.sustained_clock_mhz) j["sustained_clock_mhz"] = *d.sustained_clock_mhz;
  if (d.vector_flops) j["vector_tflops"] = *d.vector_flops / kTera;
  if (d.sibling_matmul_fraction > 0)
    j["sibling_matmul"] = {{"fraction", d.sibling_matmul_fraction},
                           {"used_fraction", std::min(1.0, d.sibling_matmul_fraction)},  // estimates take at most the peak
                           {"tflops", std::min(1.0, d.sibling_matmul_fraction) * peak16(d) / kTera},
                           {"reference", d.sibling_matmul_reference},
                           {"capped", d.sibling_matmul_capped}};
  if (d.tensor_clock_fraction < 1)
    j["tensor_clock"] = {{"fraction", d.tensor_clock_fraction}, {"reference", d.tensor_clock_reference}};
  return j;
}

const char* model_attention_kind(const Model& m) {
  if (m.mla) return "mla";
  if (m.kv_heads == 1 && m.attention_heads > 1) return "mqa";
  if (m.kv_heads != m.attention_heads) return "gqa";
  return "mha";
}

// Bytes the weights take: exact when read from a checkpoint's headers, else the checkpoint's format, else bf16.
double model_weight_bytes(const Model& m, const ParameterCounts& c) {
  if (m.checkpoint_weight_bytes > 0) return m.checkpoint_weight_bytes;
  if (m.weight_format) return c.total * bytes_per_param(*m.weight_format);
  return c.total * 2;
}

json model_json(const Model& m) {
  ParameterCounts c = count_parameters(m);
  json j = {{"id", m.id},
            {"name", m.name},
            {"family", to_string(m.family)},
            {"parameters", c.total},
            {"active_parameters", c.active},
            {"published_parameters", m.published_parameters},
            {"source", m.source},
            {"origin", m.origin}};
  if (m.is_transformer()) {
    j["layers"] = m.layers;
    if (m.decoder_layers) j["decoder_layers"] = m.decoder_layers;
    j["hidden_size"] = m.hidden_size;
    j["attention_heads"] = m.attention_heads;
    j["kv_heads"] = m.kv_heads;
    j["head_dim"] = m.head_dim;
    j["ffn_hidden_size"] = m.ffn_hidden_size;
    j["ffn_activation"] = to_string(m.ffn_activation);
    j["vocab_size"] = m.vocab_size;
    j["max_sequence_length"] = m.max_sequence_length;
    j["tied_embeddings"] = m.tied_embeddings;
    j["position_embedding"] = to_string(m.position_embedding);
    j["norm"] = to_string(m.norm);
    j["linear_bias"] = to_string(m.linear_bias);
    if (m.moe)
      j["moe"] = {{"experts", m.moe->experts}, {"experts_per_token", m.moe->experts_per_token},
                  {"shared_experts", m.moe->shared_experts}, {"expert_ffn_hidden_size", m.expert_ffn()},
                  {"dense_layers", m.moe->dense_layers}};
    j["attention"] = model_attention_kind(m);
    if (m.mla)
      j["mla"] = {{"q_lora_rank", m.mla->q_lora_rank}, {"kv_lora_rank", m.mla->kv_lora_rank},
                  {"qk_nope_head_dim", m.mla->qk_nope_head_dim}, {"qk_rope_head_dim", m.mla->qk_rope_head_dim},
                  {"v_head_dim", m.mla->v_head_dim}};
    if (m.sliding_window > 0) {
      j["sliding_window"] = m.sliding_window;
      j["sliding_window_layers"] = m.sliding_window_layers;
    }
    if (m.mtp_layers > 0) {
      j["mtp_layers"] = m.mtp_layers;
      j["mtp_parameters"] = c.mtp;
    }
    // KV cache in bf16: per token while the context is within every window, and per sequence at the full context.
    j["kv_cache_bytes_per_token_bf16"] = kv_cache_elements(m, 1) * 2;
    j["kv_cache_bytes_at_max_context_bf16"] = kv_cache_elements(m, static_cast<double>(m.max_sequence_length)) * 2;
    j["weight_bytes"] = model_weight_bytes(m, c);
    j["weight_format"] = m.checkpoint_weight_bytes > 0 ? "checkpoint (" + m.checkpoint_dtypes + ")"
                         : m.weight_format ? std::string(to_string(*m.weight_format)) + " (" + m.weight_format_note + ")"
                                           : std::string("bf16 (assumed)");
    if (!m.ingest_notes.empty()) j["notes"] = m.ingest_notes;
  } else {
    j["forward_flops_per_sample"] = m.forward_flops_per_sample;
    j["activation_bytes_per_sample"] = m.activation_bytes_per_sample;
    // fp32 bytes per sample alive at once in an inference pass; null when the model file gives none (a quarter of
    // activation_bytes_per_sample applies).
    j["inference_activation_bytes_per_sample"] =
        m.inference_activation_bytes_per_sample > 0 ? json(m.inference_activation_bytes_per_sample) : json(nullptr);
    // Kernels per eager forward pass; null when the model file gives none (default_forward_kernels applies).
    j["forward_kernels"] = m.forward_kernels > 0 ? json(m.forward_kernels) : json(nullptr);
    j["input"] = m.input;
    // Convolutions listed by shape (priced layer by layer); empty when the model file lists none.
    json convs = json::array();
    for (const auto& conv : m.convolutions)
      convs.push_back({{"count", conv.count}, {"in_channels", conv.in_channels}, {"out_channels", conv.out_channels},
                       {"kernel", conv.kernel}, {"stride", conv.stride}, {"output_size", conv.output_size},
                       {"groups", conv.groups}});
    j["convolutions"] = convs;
  }
  return j;
}

json catalog_json(const std::vector<const Device*>& devices) {
  json j = {{"schema_version", kSchemaVersion}, {"devices", json::array()}};
  for (const Device* d : devices) j["devices"].push_back(device_json(*d));
  return j;
}

json device_document(const Device& d) { return json{{"schema_version", kSchemaVersion}, {"device", device_json(d)}}; }

json models_json(const std::vector<Model>& models) {
  json j = {{"schema_version", kSchemaVersion}, {"models", json::array()}};
  for (const auto& m : models) j["models"].push_back(model_json(m));
  return j;
}

json model_document(const Model& m) { return json{{"schema_version", kSchemaVersion}, {"model", model_json(m)}}; }

}  // namespace hwplan::report
