// --format html: one self-contained page with every section, for estimate, recommend, fit and compare; rendered
// in headless Chromium (Debian chromium) when it is installed: the DOM has the sections and a screenshot is made.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

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
};

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
