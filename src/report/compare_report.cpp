#include "report/compare_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <cmath>
#include <functional>
#include <optional>

#include "core/power.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "report/estimate_report.hpp"
#include "estimators/inference.hpp"

namespace hwplan::report {
namespace {

// Seconds to finish: the job (--tokens), else for inference one batch of requests; absent when unknown.
std::optional<double> finish_seconds(const Compared& c) {
  const Estimate& e = *c.estimate;
  if (e.total_seconds >= 0) return e.total_seconds;
  if (e.training) return std::nullopt;
  return e.infer.total_seconds;
}

// Rental where the catalog has a cloud price (count x $/h x time to finish), else the purchase price.
std::optional<double> cost_usd(const Compared& c, std::string* basis) {
  const Device& d = *c.input->device;
  const double count = static_cast<double>(c.input->system.count);
  std::optional<double> t = finish_seconds(c);
  if (d.price.cloud_usd_per_hour && t) {
    *basis = "rent";
    return count * *d.price.cloud_usd_per_hour * *t / 3600;
  }
  std::optional<double> price = d.price.new_purchase_usd();  // street before launch list, as tco and recommend
  if (price) {
    *basis = "buy";
    return count * *price;
  }
  return std::nullopt;
}

// Energy for the time to finish, the devices drawing what recommend, serve and tco count: 80% of TDP training, 60%
// serving.
std::optional<double> energy_kwh(const Compared& c) {
  std::optional<double> t = finish_seconds(c);
  if (!t) return std::nullopt;
  const double share = c.estimate->training ? kTrainingPowerFraction : kInferencePowerFraction;
  return c.input->system.count * c.input->device->tdp_w * share * *t / 3600 / 1000;
}

struct Row {
  std::string name;
  std::function<std::optional<double>(const Compared&)> value;  // the number compared (nullopt: not shown)
  std::function<std::string(const Compared&, double)> text;
  bool lower_is_better = true;
  bool marked = true;  // whether the best of the row is marked
};

std::vector<Row> rows_for(bool training, bool one_pass, const std::vector<Compared>& items) {
  std::vector<Row> rows;
  rows.push_back({"memory / device", [](const Compared& c) { return std::optional<double>(c.estimate->memory.total() / std::max(1.0, c.estimate->capacity_bytes)); },
                  [](const Compared& c, double) {
                    return fmt::format("{} of {}", human_bytes(c.estimate->memory.total()), human_bytes(c.estimate->capacity_bytes));
                  }});
  if (training) {
    rows.push_back({"step time", [](const Compared& c) { return std::optional<double>(c.estimate->train.step_seconds); },
                    [](const Compared&, double v) { return human_seconds(v); }});
    rows.push_back({"tokens/s", [](const Compared& c) { return std::optional<double>(c.estimate->train.tokens_per_second); },
                    [](const Compared&, double v) { return fmt::format("{:.0f}", v); }, false});
    rows.push_back({"MFU", [](const Compared& c) { return std::optional<double>(c.estimate->train.mfu); },
                    [](const Compared&, double v) { return fmt::format("{:.1f}%", 100 * v); }, false});
  } else if (one_pass) {
    // A CNN, an encoder or --generate 0: one forward pass over the batch (the per-token fields carry it per sample).
    rows.push_back({"batch latency", [](const Compared& c) { return std::optional<double>(c.estimate->infer.prefill_seconds); },
                    [](const Compared&, double v) { return human_seconds(v); }});
    rows.push_back({"samples/s", [](const Compared& c) { return std::optional<double>(c.estimate->forward_samples_per_second()); },
                    [](const Compared&, double v) { return fmt::format("{:.1f}", v); }, false});
  } else {
    // Layers left in host memory (--gpu-layers) in any column: each column's placement, not marked.
    const bool offloaded = std::any_of(items.begin(), items.end(), [](const Compared& c) {
      return layer_placement(*c.input->model, c.input->workload).offloaded();
    });
    if (offloaded)
      rows.push_back({"layers on device", [](const Compared& c) { return std::optional<double>(layer_placement(*c.input->model, c.input->workload).device_layers); },
                      [](const Compared& c, double v) {
                        const LayerPlacement p = layer_placement(*c.input->model, c.input->workload);
                        return fmt::format("{:.0f} of {:.0f}{}", v, p.total_layers, p.head_on_host ? " (head on host)" : "");
                      },
                      false, false});
    rows.push_back({"prefill (TTFT)", [](const Compared& c) { return std::optional<double>(c.estimate->infer.prefill_seconds); },
                    [](const Compared&, double v) { return human_seconds(v); }});
    rows.push_back({"time per output token", [](const Compared& c) { return std::optional<double>(c.estimate->infer.time_per_output_token_seconds); },
                    [](const Compared&, double v) { return human_seconds(v); }});
    // All replicas together, as estimate, batch and the JSON give it (one replica's rate beside another column's total
    // would mark the wrong best).
    rows.push_back({"decode tokens/s", [](const Compared& c) { return std::optional<double>(c.estimate->infer.total_decode_tokens_per_second()); },
                    [](const Compared&, double v) { return fmt::format("{:.1f}", v); }, false});
  }
  const bool job = !items.empty() && items.front().input->workload.tokens.has_value();
  rows.push_back({training ? "time to finish" : job ? "job time (--tokens)" : one_pass ? "time per batch" : "time per request", finish_seconds,
                  [](const Compared&, double v) { return human_seconds(v); }});
  // Rental and purchase are different questions: the best cost is marked only when every column has the same basis.
  bool one_basis = true;
  std::string first_basis;
  for (const auto& c : items) {
    std::string b;
    if (!cost_usd(c, &b)) continue;
    if (first_basis.empty()) first_basis = b;
    one_basis = one_basis && b == first_basis;
  }
  rows.push_back({"cost", [](const Compared& c) { std::string b; return cost_usd(c, &b); },
                  [](const Compared& c, double v) {
                    std::string b;
                    cost_usd(c, &b);
                    // One batch of requests costs fractions of a cent: significant digits, not $0.00.
                    return v < 0.01 ? fmt::format("${:.2g} {}", v, b) : fmt::format("${:.{}f} {}", v, v < 10 ? 2 : 0, b);
                  },
                  true, one_basis});
  rows.push_back({training ? "energy (80% of TDP)" : "energy (60% of TDP)", energy_kwh, [](const Compared&, double v) { return fmt::format("{:.3g} kWh", v); }});
  return rows;
}

}  // namespace

Table compare_table(const std::vector<Compared>& items) {
  Table t;
  t.header = {"quantity"};
  t.right_align = {false};
  for (const auto& c : items) {
    t.header.push_back(fmt::format("{} x{}", c.input->device->id, c.input->system.count));
    t.right_align.push_back(true);
  }
  std::vector<std::string> fits = {"fits"};
  for (const auto& c : items) fits.push_back(c.estimate->fits ? "yes" : "NO");
  t.rows.push_back(fits);
  const bool training = !items.empty() && items.front().estimate->training;
  const bool one_pass = !training && !items.empty() &&
                        one_forward_pass(*items.front().input->model, items.front().input->workload.generate);
  for (const Row& row : rows_for(training, one_pass, items)) {
    std::vector<std::optional<double>> values;
    std::optional<double> best;
    for (const auto& c : items) {
      values.push_back(row.value(c));
      if (!values.back() || !c.estimate->fits) continue;
      if (!best || (row.lower_is_better ? *values.back() < *best : *values.back() > *best)) best = values.back();
    }
    std::vector<std::string> cells = {row.name};
    int winners = 0;
    for (std::size_t i = 0; i < items.size(); ++i) winners += values[i] && best && items[i].estimate->fits && *values[i] == *best;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!values[i]) {
        cells.push_back("-");
        continue;
      }
      bool win = row.marked && items.size() > 1 && winners < static_cast<int>(items.size()) && best && items[i].estimate->fits && *values[i] == *best;
      // A configuration that does not fit runs nowhere: its figures (memory aside) are what it would do, in brackets.
      const bool would = !items[i].estimate->fits && row.name != std::string("memory / device");
      const std::string text = row.text(items[i], *values[i]);
      cells.push_back(would ? "(" + text + ")" : text + (win ? " *" : ""));
    }
    t.rows.push_back(cells);
  }
  return t;
}

nlohmann::json compare_json(const std::vector<Compared>& items) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : items) {
    nlohmann::json e = estimate_json(*c.input, *c.estimate, c.search);
    // The cost and energy rows the table compares, with the same rules (null where the table shows none).
    std::string basis;
    const std::optional<double> cost = cost_usd(c, &basis);
    const std::optional<double> energy = energy_kwh(c);
    e["comparison"] = {{"cost_usd", cost ? nlohmann::json(*cost) : nlohmann::json(nullptr)},
                       {"cost_basis", cost ? nlohmann::json(basis) : nlohmann::json(nullptr)},
                       {"energy_kwh", energy ? nlohmann::json(*energy) : nlohmann::json(nullptr)}};
    j.push_back(std::move(e));
  }
  return j;
}

std::string compare_text(const std::vector<Compared>& items, Format format) {
  if (format == Format::kJson) return compare_json(items).dump(2) + "\n";
  std::string out;
  if (format == Format::kTable && !items.empty()) {
    const EstimateInput& in = *items.front().input;
    const bool misses = std::any_of(items.begin(), items.end(), [](const Compared& c) { return !c.estimate->fits; });
    out += fmt::format("{} {} {} on {} configurations (* = best of the row among those that fit{})\n\n", in.model->id,
                       to_string(in.workload.task), to_string(in.workload.precision), items.size(),
                       misses ? "; (brackets) = would be, if it fit: it does not" : "");
  }
  Table t = compare_table(items);
  // A CSV keeps each column's warnings in a row of its own (several joined by " | "), as estimate's CSV keeps its.
  if (format == Format::kCsv) {
    std::vector<std::string> row{"warnings"};
    bool any = false;
    for (const auto& c : items) {
      row.push_back(fmt::format("{}", fmt::join(c.estimate->warnings, " | ")));
      any = any || !c.estimate->warnings.empty();
    }
    if (any) t.rows.push_back(std::move(row));
  }
  out += render(t, format);
  if (format == Format::kMarkdown)
    for (const auto& c : items)
      for (const auto& w : c.estimate->warnings)
        out += fmt::format("\n**warning:** {} x{}: {}\n", c.input->device->id, c.input->system.count, w);
  if (format == Format::kTable) {
    out += "\ncost: rental (count x catalog $/h x time to finish) where the catalog has a cloud price, else the purchase price\n"
           "(the best cost is marked only when every column has the same basis).\n"
           "energy: the devices drawing 80% of their TDP training, 60% serving (as recommend, serve and tco count it) for the\n"
           "time to finish.\n";
    for (const auto& c : items)
      for (const auto& w : c.estimate->warnings) out += fmt::format("warning: {} x{}: {}\n", c.input->device->id, c.input->system.count, w);
  }
  return out;
}

}  // namespace hwplan::report
