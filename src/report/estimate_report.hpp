// Presenting an Estimate: JSON (report/json.hpp's schema version), a table with an explanation in words, CSV and Markdown.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "estimators/estimate_types.hpp"
#include "estimators/search.hpp"
#include "report/json.hpp"
#include "report/table.hpp"

namespace hwplan::report {

nlohmann::json plan_json(const Plan& plan);
nlohmann::json estimate_json(const EstimateInput& in, const Estimate& e, const SearchResult* search = nullptr);
std::string estimate_text(const EstimateInput& in, const Estimate& e, const SearchResult* search, Format format);
// One-row summary used by listings and batch output.
Table estimate_summary_table(const EstimateInput& in, const Estimate& e);

}  // namespace hwplan::report
