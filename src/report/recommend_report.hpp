// Rendering recommend and fit results (table / JSON / CSV / Markdown).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "recommend/fit.hpp"
#include "recommend/recommend.hpp"
#include "report/table.hpp"

namespace hwplan::report {

// A rejection in words; an over-budget one names its cheapest working configuration in money.
std::string rejection_reason(const Rejection& x);

nlohmann::json recommendation_json(const Recommendation& r, const WorkloadSpec& w, const RecommendSpec& spec);
Table recommendation_table(const Recommendation& r, const WorkloadSpec& w, const RecommendSpec& spec);
std::string render_recommendation(const Recommendation& r, const WorkloadSpec& w, const RecommendSpec& spec,
                                  Format format);
nlohmann::json fit_json(const FitReport& f, const WorkloadSpec& w);
Table fit_table(const FitReport& f);
std::string render_fit(const FitReport& f, const WorkloadSpec& w, Format format);

}  // namespace hwplan::report
