// Standalone SVG 1.1 charts: a log-log roofline (compute and memory roofs, operators as points) and a
// stacked memory-breakdown bar chart against each device's capacity. Inputs are in SI base units
// (bytes, bytes/s, FLOP/s); the charts show TFLOP/s and GiB. Depends on the standard library and fmt only.
//
// Elements carry classes so that tests and style sheets can find them:
//   roofline: class="roof-memory" (data-kind="peak" | "measured"), class="roof-compute" (data-label),
//             class="point" (one circle per operator, data-label)
//   memory:   class="bar" (a group per device, data-label), class="segment" (data-name),
//             class="capacity" (data-fits="true" | "false"), class="overflow" (the "does not fit" text)
// Non-finite and non-positive values are skipped, so no NaN or inf is ever written; a chart with nothing
// to draw is still a valid SVG that says "no data".
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hwplan::report {

// A horizontal compute roof, e.g. {"bf16 peak 989 TFLOP/s", 989e12}.
struct RooflineCeiling {
  std::string label;
  double flops_per_s;
};

// One operator: its arithmetic intensity and the throughput it reached (or is predicted to reach).
struct RooflinePoint {
  std::string label;
  double intensity_flop_per_byte;
  double achieved_flops_per_s;
};

struct RooflineChart {
  std::string title;
  double bandwidth_bytes_per_s = 0;           // memory roof (peak); 0 = none
  std::string bandwidth_name = "memory roof";  // what that roof is, in the legend
  double measured_bandwidth_bytes_per_s = 0;  // optional second memory roof, drawn dashed; 0 = none
  std::vector<RooflineCeiling> ceilings;      // one or more
  std::vector<RooflinePoint> points;
};

std::string render_roofline_svg(const RooflineChart& chart);

// One device (or configuration): its capacity and the stacked parts of its memory use, bottom first.
struct MemoryBar {
  std::string label;  // e.g. "rtx-4090 x1"
  double capacity_bytes;
  std::vector<std::pair<std::string, double>> segments;  // e.g. {"weights", 1.3e10}, {"gradients", ...}
};

struct MemoryChart {
  std::string title;
  std::vector<MemoryBar> bars;
};

std::string render_memory_svg(const MemoryChart& chart);

// p95 TTFT and TPOT against load, one line per device (serving): two panels over a shared linear x axis, log y.
// Classes: class="series" (a polyline per device and panel, data-label, data-metric), class="target"
// (data-metric), class="knee" (the highest load within the targets, data-label).
struct LatencyPoint {
  double load;           // requests/s (or clients)
  double ttft_seconds;  // at the chart's percentile (LatencyChart::ttft_percentile)
  double tpot_seconds;
};

struct LatencySeries {
  std::string label;
  std::vector<LatencyPoint> points;
  double knee_load = 0;  // 0 = none
};

struct LatencyChart {
  std::string title;
  std::string load_label = "Request rate per replica (requests/s)";
  std::vector<LatencySeries> series;
  double ttft_target_seconds = 0;  // 0 = none
  double tpot_target_seconds = 0;
  // The percentile each panel plots: 99 where the target given is a p99 one, else 95.
  int ttft_percentile = 95, tpot_percentile = 95;
};

std::string render_latency_svg(const LatencyChart& chart);
// Cumulative cost over months, owning against renting, with the break-even month marked.
//   cost: class="series" (data-name="own" | "rent"), class="break-even" (data-months)
struct CostSeries {
  std::string name;                                 // "own", "rent"
  std::string label;                                // legend text
  std::vector<std::pair<double, double>> points;    // (month, cumulative USD)
};

struct CostChart {
  std::string title;
  std::vector<CostSeries> series;
  double break_even_months = -1;  // < 0: none
};

std::string render_cost_svg(const CostChart& chart);

// Text safe for XML character data and quoted attribute values: & < > " ' become entities and control
// characters that XML 1.0 forbids (everything below U+0020 except tab, newline, carriage return) become '?'.
std::string xml_escape(const std::string& s);

}  // namespace hwplan::report
