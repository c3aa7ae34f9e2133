// `hwplan compare`: one workload on several devices (x counts) side by side, the best value of each row marked.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "estimators/estimate_types.hpp"
#include "estimators/search.hpp"
#include "report/table.hpp"

namespace hwplan::report {

struct Compared {
  const EstimateInput* input = nullptr;
  const Estimate* estimate = nullptr;
  const SearchResult* search = nullptr;
};

// Quantities by row, configurations by column; '*' marks the best of each row among those that fit.
Table compare_table(const std::vector<Compared>& items);
// A list of documents in the shape of `estimate --format json`.
nlohmann::json compare_json(const std::vector<Compared>& items);
std::string compare_text(const std::vector<Compared>& items, Format format);

}  // namespace hwplan::report
