// The JSON documents hwplan writes (--format json, the Python module): one schema version for all of them.
// Estimates are in estimate_report.hpp, recommend and fit results in recommend_report.hpp, the data here.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "core/device.hpp"
#include "core/model.hpp"
#include "estimators/params.hpp"

namespace hwplan::report {

// Bumped when a key changes meaning or disappears (adding keys keeps the version).
inline constexpr int kSchemaVersion = 1;

nlohmann::json device_json(const Device& d);
nlohmann::json model_json(const Model& m);
// "mha", "gqa", "mqa" or "mla".
const char* model_attention_kind(const Model& m);
// Bytes the weights take: exact when read from a checkpoint's headers, else the checkpoint's format, else bf16.
double model_weight_bytes(const Model& m, const ParameterCounts& c);
// `catalog list` / `catalog show` / `models list` / `models show` documents.
nlohmann::json catalog_json(const std::vector<const Device*>& devices);
nlohmann::json device_document(const Device& d);
nlohmann::json models_json(const std::vector<Model>& models);
nlohmann::json model_document(const Model& m);

}  // namespace hwplan::report
