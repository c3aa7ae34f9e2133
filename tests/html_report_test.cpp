// --format html: one self-contained page with every section, for estimate, recommend, fit, compare, serve and tco; rendered
// in headless Chromium (Debian chromium) when it is installed: the DOM has the sections and a screenshot is made.
#include <doctest/doctest.h>

#include <cstdlib>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "report/svg.hpp"
#include "report/table.hpp"
#include "test_util.hpp"

using hwplan::test::run_hwplan;
namespace fs = std::filesystem;

namespace {

const char* kSections[] = {"question", "answer", "tables", "explanation", "plots", "assumptions", "sources", "about"};

const char* kCommands[] = {
    "estimate --model llama-2-7b --device rtx-4090 --task lora --batch 4 --seq 1024 --recompute full",
    "recommend --model llama-2-7b --task lora --budget-usd 3000 --buy",
    "fit --model llama-2-13b --device rtx-4090 --task finetune --batch 4 --seq 2048",
    "compare --model llama-2-7b --devices rtx-4090,a100-80gb-sxm,h100-sxm --task lora --batch 4 --seq 1024",
    "serve --model llama-3-8b --device h100-sxm --rate 20 --prompt 2000 --generate 300 --ttft-p95 1 --tpot-p95 0.05 --requests 500",
    "tco --model llama-3-70b --device h100-sxm --count 8 --task infer --batch 32 --utilization 0.3",
    "recommend --model llama-3-8b --task serve --rate 50 --prompt 2000 --generate 300 --ttft-p95 1 --tpot-p95 0.05 --class datacenter "
    "--requests 200",
};
// A mark of each report's own plot, looked for in the rendered DOM (same order as kCommands).
const char* kPlotMarks[] = {"class=\"roof-memory\"", "class=\"bar\"", "class=\"bar\"", "class=\"bar\"", "class=\"knee\"",
                            "class=\"break-even\"", "class=\"knee\""};
static_assert(std::size(kPlotMarks) == std::size(kCommands));

void check_self_contained(const std::string& html) {
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("src=\"http") == std::string::npos);
  CHECK(html.find("href=\"http") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("url(h") == std::string::npos);  // url(#id) inside the SVG is local
  CHECK(html.find("url(/") == std::string::npos);
  CHECK(html.find("<svg") != std::string::npos);
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool have_chromium() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("html reports are self-contained and have every section") {
  for (const char* command : kCommands) {
    CAPTURE(command);
    auto r = run_hwplan(std::string(command) + " --format html");
    REQUIRE(r.exit_code == 0);
    check_self_contained(r.out);
    for (const char* id : kSections) CHECK(r.out.find(std::string("<section id=\"") + id + "\">") != std::string::npos);
    CHECK(r.out.find("hwplan 0.") != std::string::npos);                   // the version
    CHECK(r.out.find("within &#177;") != std::string::npos);              // the accuracy bands
    CHECK(r.out.find(std::string(command).substr(0, 12)) != std::string::npos);  // the question as asked
  }
}

TEST_CASE("the estimate report cites the catalog and states the stack assumed") {
  auto r = run_hwplan("estimate --model llama-2-7b --device h100-sxm --seq 2048 --format html");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("<dt>h100-sxm: ") != std::string::npos);
  CHECK(r.out.find("<dt>stack.preset</dt>") != std::string::npos);
  CHECK(r.out.find("set --framework") != std::string::npos);
  CHECK(r.out.find("class=\"roof-memory\"") != std::string::npos);  // the roofline
  CHECK(r.out.find("class=\"bar\"") != std::string::npos);          // the memory chart
}

// The <svg>...</svg> of a file `hwplan plot ...` wrote (it starts with an XML declaration the page leaves out).
std::string svg_element(const std::string& text) {
  auto begin = text.find("<svg");
  auto end = text.rfind("</svg>");
  if (begin == std::string::npos || end == std::string::npos) return "(no svg)";
  return text.substr(begin, end + 6 - begin);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

TEST_CASE("the serve report shows the JSON's numbers and the plot of hwplan plot serve") {
  const std::string flags = "--model llama-3-8b --device h100-sxm --rate 20 --prompt 2000 --generate 300 --ttft-p95 1 --tpot-p95 0.05 --requests 500";
  auto html = run_hwplan("serve " + flags + " --format html");
  REQUIRE(html.exit_code == 0);
  auto json = run_hwplan("serve " + flags + " --format json");
  REQUIRE(json.exit_code == 0);
  auto j = nlohmann::json::parse(json.out);
  const std::string& h = html.out;
  CHECK(h.find(fixed(j["latency"]["ttft_seconds"]["p95"].get<double>() * 1000, 1)) != std::string::npos);
  CHECK(h.find(fixed(j["latency"]["tpot_seconds"]["p95"].get<double>() * 1000, 1)) != std::string::npos);
  CHECK(h.find("own queue under load is not in it") != std::string::npos);  // latency.scope
  CHECK(h.find(fixed(j["serve"]["max_rate_per_replica"].get<double>(), 3)) != std::string::npos);
  CHECK(h.find(fixed(j["cost"]["usd_per_million_output_tokens"].get<double>(), 3)) != std::string::npos);
  CHECK(h.find(std::to_string(j["kv_cache"]["capacity_tokens"].get<long long>())) != std::string::npos);
  CHECK(h.find("Binding constraint: " + hwplan::report::xml_escape(j["serve"]["binding_constraint"].get<std::string>())) != std::string::npos);
  CHECK(h.find("<dt>engine.block_tokens</dt>") != std::string::npos);  // the engine defaults assumed
  CHECK(h.find("<dt>workload.precision</dt>") != std::string::npos);
  CHECK(h.find("<dt>h100-sxm: price</dt>") != std::string::npos);      // where the $/hour comes from
  CHECK(h.find("no --engine given") != std::string::npos);              // the warning of the JSON
  std::string svg = (std::filesystem::temp_directory_path() / ("hwplan_serve_" + std::to_string(::getpid()) + ".svg")).string();
  REQUIRE(run_hwplan("plot serve " + flags + " -o " + svg).exit_code == 0);
  CHECK(h.find(svg_element(read(svg))) != std::string::npos);            // the same picture, byte for byte
  CHECK(h.find("class=\"knee\"") != std::string::npos);
  fs::remove(svg);

  auto none = run_hwplan("serve --model llama-3-8b --device rtx-4090 --rate 5 --prompt 2000 --generate 300 --ttft-p95 0.001 "
                         "--requests 200 --format html");
  CHECK(none.exit_code == 3);  // the report is still written: nothing meets the targets, and it says why
  CHECK(none.out.find("No layout serves this load") != std::string::npos);
  CHECK(none.out.find("<section id=\"about\">") != std::string::npos);
}

TEST_CASE("the tco report shows the JSON's numbers and the plot of hwplan plot tco") {
  const std::string flags = "--model llama-3-70b --device h100-sxm --count 8 --task infer --batch 32 --utilization 0.3";
  auto html = run_hwplan("tco " + flags + " --format html");
  REQUIRE(html.exit_code == 0);
  auto json = run_hwplan("tco " + flags + " --format json");
  REQUIRE(json.exit_code == 0);
  auto j = nlohmann::json::parse(json.out);
  const std::string& h = html.out;
  using hwplan::report::money;
  CHECK(h.find(money(j["tco"]["own"]["total_usd"].get<double>())) != std::string::npos);
  CHECK(h.find(money(j["tco"]["rent"]["total_usd"].get<double>())) != std::string::npos);
  CHECK(h.find(money(j["tco"]["own"]["energy_usd"].get<double>())) != std::string::npos);
  CHECK(h.find(fixed(j["tco"]["break_even_months"].get<double>(), 1) + " months") != std::string::npos);
  CHECK(h.find("<dt>inputs.pue</dt><dd>1.5</dd>") != std::string::npos);  // the class defaults used
  CHECK(h.find("<dt>stack.preset</dt>") != std::string::npos);            // and the workload's stack
  CHECK(h.find("<dt>h100-sxm: price</dt>") != std::string::npos);
  CHECK(h.find("<dt>tco: usd_per_kwh</dt>") != std::string::npos);        // where the defaults come from
  std::string svg = (std::filesystem::temp_directory_path() / ("hwplan_tco_" + std::to_string(::getpid()) + ".svg")).string();
  REQUIRE(run_hwplan("plot tco " + flags + " -o " + svg).exit_code == 0);
  CHECK(h.find(svg_element(read(svg))) != std::string::npos);
  CHECK(h.find("class=\"break-even\"") != std::string::npos);
  fs::remove(svg);
}

TEST_CASE("the recommend --task serve report shows the ranking of the JSON") {
  const std::string flags = "--model llama-3-8b --task serve --rate 50 --prompt 2000 --generate 300 --ttft-p95 1 --tpot-p95 0.05 "
                            "--class datacenter --requests 200";
  auto html = run_hwplan("recommend " + flags + " --format html");
  REQUIRE(html.exit_code == 0);
  auto j = nlohmann::json::parse(run_hwplan("recommend " + flags + " --format json").out);
  REQUIRE_FALSE(j["candidates"].empty());
  const std::string& h = html.out;
  CHECK(h.rfind("<!DOCTYPE html>", 0) == 0);  // a page, not a bare table
  for (const auto& c : j["candidates"]) {
    CHECK(h.find("<td>" + c["device"].get<std::string>() + "</td>") != std::string::npos);
    CHECK(h.find(fixed(c["usd_per_million_output_tokens"].get<double>(), 3)) != std::string::npos);
  }
  for (const auto& x : j["excluded"]) CHECK(h.find("<td>" + x["device"].get<std::string>() + "</td>") != std::string::npos);
  const std::string first = j["candidates"][0]["device"].get<std::string>();
  CHECK(h.find("<dt>" + first + ": price") != std::string::npos);  // sources.price, or each quote's own citation
  CHECK(h.find("<dt>targets.ttft_p95_seconds</dt>") != std::string::npos);
  CHECK(h.find("data-label=\"" + first + " tp=") != std::string::npos);  // its latency curve
}

TEST_CASE("html is only offered where there is a report") {
  auto r = run_hwplan("catalog list --format html");
  CHECK(r.exit_code == 2);
}

TEST_CASE("html reports render in headless chromium") {
  if (!have_chromium()) {
    MESSAGE("chromium not found: the browser rendering check is skipped (Debian package chromium; scripts/deps.sh installs it)");
    return;
  }
  fs::path dir = fs::temp_directory_path() / ("hwplan_html_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  int index = 0;
  for (const char* command : kCommands) {
    CAPTURE(command);
    fs::path html = dir / ("report" + std::to_string(index) + ".html");
    fs::path png = dir / ("report" + std::to_string(index) + ".png");
    fs::path dom = dir / ("report" + std::to_string(index) + ".dom");
    ++index;
    REQUIRE(run_hwplan(std::string(command) + " --format html -o " + html.string()).exit_code == 0);
    // Root needs --no-sandbox; no GPU, no network, a fresh profile directory per run.
    std::string chromium = "timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" +
                           (dir / "profile").string() + " ";
    REQUIRE(std::system((chromium + "--dump-dom file://" + html.string() + " >" + dom.string() + " 2>/dev/null").c_str()) == 0);
    std::string d = read(dom);
    for (const char* id : kSections) CHECK(d.find(std::string("<section id=\"") + id + "\">") != std::string::npos);
    CHECK(d.find("<table>") != std::string::npos);
    CHECK(d.find("<svg") != std::string::npos);
    CHECK(d.find(kPlotMarks[index - 1]) != std::string::npos);
    REQUIRE(std::system((chromium + "--hide-scrollbars --window-size=1200,2400 --screenshot=" + png.string() + " file://" +
                         html.string() + " >/dev/null 2>&1").c_str()) == 0);
    std::string image = read(png);
    REQUIRE(image.size() > 20000);  // a blank page of this size compresses to a few kB
    CHECK(image.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  }
  if (std::getenv("HWPLAN_KEEP_SCREENSHOTS")) {
    MESSAGE("screenshots kept in " << dir.string());
  } else {
    fs::remove_all(dir);
  }
}
