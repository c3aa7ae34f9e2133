// `--format html`: one self-contained page per answer (inline CSS and SVG, no script, no external asset) for
// people who will not run the CLI. Sections, in order, each a <section id=...> that tests look for:
//   question (as asked), answer (first, in one sentence), tables, explanation (in words), plots (roofline,
//   memory, serving latency, cumulative cost), assumptions (every default and preset used), sources (the catalog's citations for the figures
//   used), about (hwplan's version and the accuracy bands).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/workload_spec.hpp"
#include "estimators/estimate_types.hpp"
#include "estimators/search.hpp"
#include "recommend/fit.hpp"
#include "recommend/recommend.hpp"
#include "report/compare_report.hpp"
#include "report/serve_report.hpp"
#include "report/svg.hpp"
#include "report/tco_report.hpp"

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
// hwplan serve: the plan with its latencies, the layouts tried, and the latency-against-load chart of
// `hwplan plot serve` (report::serve_latency_chart; no series when no layout fits). `layout`: the chosen (or first)
// layout, whose workload and stack are listed among the assumptions.
std::string serve_html(const ServeReport& r, const EstimateInput* layout, const LatencyChart& chart, const HtmlContext& ctx);
// recommend --task serve: the catalog ranked for a traffic within latency targets.
struct ServeRankingReport {
  nlohmann::json document;                  // what `--format json` prints (the figures shown come from it)
  const Model* model = nullptr;
  const serve::ServeQuestion* question = nullptr;  // as resolved for the first device: traffic, targets, engine
  std::string traffic;                      // in words
  std::vector<const Device*> devices;       // the candidates shown, best first (their catalog sources are cited)
  Table table;                              // the ranking as the table output shows it
  std::optional<LatencyChart> latency;      // p95 latencies against load of the first candidates (hwplan plot serve)
};
std::string recommend_serve_html(const ServeRankingReport& r, const HtmlContext& ctx);
// hwplan tco: owning against renting, the break-even points and what flips the decision, the cumulative-cost chart
// of `hwplan plot tco`, with the workload's estimate that sets the job length.
std::string tco_html(const TcoReport& r, const EstimateInput& in, const Estimate& e, const SearchResult* search,
                     const HtmlContext& ctx);

}  // namespace hwplan::report
