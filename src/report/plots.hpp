// The charts of an estimate: the device's roofline with the workload's operators, and its memory bar; the serving
// latency against load. Shared by `hwplan plot` and the HTML reports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "estimators/estimate_types.hpp"
#include "report/svg.hpp"
#include "serve/plan.hpp"

namespace hwplan::report {

// `in.plan` is the plan the estimate chose; the title names the device, model, task and precision.
// The operators at the precision the estimate runs them in (inference: the weights' compute format).
RooflineChart roofline_chart(const EstimateInput& in, const std::string& task);
MemoryBar memory_bar(const std::string& label, const Estimate& e);

// p95 TTFT and TPOT of one replica against its load (hwplan plot serve, the serve HTML report): the chosen layout,
// else the first that fits; the sweep runs past the knee (or past saturation without targets), which is marked.
// nullopt when no layout fits the device. `label` names the device.
std::optional<LatencySeries> serve_latency_series(const std::vector<const EstimateInput*>& layouts,
                                                  const serve::ServeQuestion& q, const serve::ServeAnswer& a,
                                                  const std::string& label);
// The chart around the series: title, load axis (rate or clients) and the p95 targets drawn.
LatencyChart serve_latency_chart(const std::string& model_id, std::vector<LatencySeries> series, const serve::ServeQuestion& q);

}  // namespace hwplan::report
