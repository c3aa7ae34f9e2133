// The charts of an estimate: the device's roofline with the workload's operators, and its memory bar. Shared by
// `hwplan plot` and the HTML reports.
#pragma once

#include <string>

#include "estimators/estimate.hpp"
#include "report/svg.hpp"

namespace hwplan::report {

// `in.plan` is the plan the estimate chose; the title names the device, model, task and precision.
RooflineChart roofline_chart(const EstimateInput& in, const std::string& task, const std::string& precision);
MemoryBar memory_bar(const std::string& label, const Estimate& e);

}  // namespace hwplan::report
