// Presenting a cost of ownership (hwplan tco): the JSON document (schema_version 1), the table and sentences, CSV,
// the cumulative-cost chart of `hwplan plot tco`, and the values at which the decision flips, in words.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"
#include "tco/tco.hpp"

namespace hwplan::report {

struct TcoReport {
  const Device* device = nullptr;
  const tco::Inputs* inputs = nullptr;
  const tco::Result* result = nullptr;
  std::vector<std::string> notes;  // old prices, a missing rental price
};

nlohmann::json tco_json(const TcoReport& r);
std::string tco_csv(const TcoReport& r);
std::string tco_text(const TcoReport& r, Format format);
// The first line of the table output: what is costed, over what horizon and at what utilisation.
std::string tco_heading(const TcoReport& r);
// The own and rent cost tables (rows of tco_text) and the sensitivity table.
Table tco_cost_table(const TcoReport& r);
Table tco_flip_table(const TcoReport& r);
// "Owning is cheaper over 3 years by $1,234.", the break-even sentences; empty without a rental price.
std::vector<std::string> tco_verdict(const TcoReport& r);
// Cumulative cost against months, owning and renting (hwplan plot tco).
CostChart tco_chart(const TcoReport& r);

}  // namespace hwplan::report
