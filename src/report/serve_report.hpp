// Presenting a serving plan (hwplan serve): JSON (the contract of issue 14, schema_version 1), a table with the
// binding constraint in words, CSV and Markdown.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/model.hpp"
#include "report/table.hpp"
#include "serve/plan.hpp"

namespace hwplan::report {

struct ServeReport {
  const Model* model = nullptr;
  const Device* device = nullptr;
  const serve::ServeQuestion* question = nullptr;
  const serve::ServeAnswer* answer = nullptr;
  std::string traffic;                 // the traffic in words ("Poisson 20 requests/s", "trace FILE")
  std::vector<std::string> warnings;   // assumptions that change a number
};

const char* binding_key(serve::Binding b);
// The binding constraint in words, with the numbers behind it.
std::string binding_words(const ServeReport& r);
// The closed-loop rounds a simulation left out of its latencies, in words ("a closed loop's first round"; "" for none).
std::string rounds_left_out(bool first, bool last);
nlohmann::json serve_json(const ServeReport& r);
std::string serve_text(const ServeReport& r, Format format);

}  // namespace hwplan::report
