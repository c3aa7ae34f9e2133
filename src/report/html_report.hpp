// `--format html`: one self-contained page per answer (inline CSS and SVG, no script, no external asset) for
// people who will not run the CLI. Sections, in order, each a <section id=...> that tests look for:
//   question (as asked), answer (first, in one sentence), tables, explanation (in words), plots (roofline,
//   memory), assumptions (every default and preset used), sources (the catalog's citations for the figures
//   used), about (hwplan's version and the accuracy bands).
#pragma once

#include <string>
#include <vector>

#include "core/workload_spec.hpp"
#include "estimators/estimate.hpp"
#include "estimators/search.hpp"
#include "recommend/fit.hpp"
#include "recommend/recommend.hpp"
#include "report/compare_report.hpp"

namespace hwplan::report {

struct HtmlContext {
  std::string question;  // the command line as typed (or the facade's call)
  std::string version;   // hwplan's version
};

std::string estimate_html(const EstimateInput& in, const Estimate& e, const SearchResult* search, const HtmlContext& ctx);
std::string recommendation_html(const Recommendation& r, const WorkloadSpec& w, const RecommendSpec& spec,
                                const HtmlContext& ctx);
std::string fit_html(const FitReport& f, const EstimateInput& in, const WorkloadSpec& w, const HtmlContext& ctx);
std::string compare_html(const std::vector<Compared>& items, const HtmlContext& ctx);

}  // namespace hwplan::report
