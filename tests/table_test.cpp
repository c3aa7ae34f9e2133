// Text tables (src/report/table): long text cells wrap so a table fits 100 columns where it can; CSV, Markdown and
// HTML keep every cell whole.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "report/table.hpp"
#include "test_util.hpp"

using namespace hwplan;

namespace {

std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::size_t widest_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::size_t widest = 0;
  while (std::getline(in, line)) widest = std::max(widest, code_points(line));
  return widest;
}

// Every word of `text`, in order, as the table printed them (a wrapped cell keeps its words).
std::string words_of(const std::string& text) {
  std::istringstream in(text);
  std::string w, out;
  while (in >> w) out += w + " ";
  return out;
}

}  // namespace

TEST_CASE("a text table fits 100 columns by wrapping its long text cells, and keeps every word") {
  // Property over widths: a table of a short id column, a number column and a long text column of growing length
  // never exceeds 100 columns, and prints the same words in the same order as the unwrapped cells.
  std::string sentence;
  for (int n = 1; n <= 60; ++n) {
    sentence += (n > 1 ? " " : "") + std::string("wörd") + std::to_string(n);
    report::Table t;
    t.header = {"id", "value", "source"};
    t.right_align = {false, true, false};
    t.rows = {{"h100-sxm", "989.4", sentence}, {"rtx-4090", "165.2", "short"}, {"a-very-long-unbroken-" + std::string(n, 'x'), "1", ""}};
    const std::string text = report::render(t, report::Format::kTable);
    CAPTURE(text);
    CHECK(widest_line(text) <= report::kTableColumns);
    std::string expected;
    for (const auto& h : t.header) expected += h + " ";
    std::string rule_free;
    std::istringstream in(text);
    std::string line;
    int k = 0;
    while (std::getline(in, line))
      if (k++ != 1) rule_free += line + "\n";  // drop the ---- rule
    CHECK(words_of(rule_free).find(words_of(sentence)) != std::string::npos);
    CHECK(text.find("989.4") != std::string::npos);  // numbers are never cut
    // CSV and Markdown keep the cell whole.
    CHECK(report::render(t, report::Format::kCsv).find(sentence) != std::string::npos);
    CHECK(report::render(t, report::Format::kMarkdown).find(sentence) != std::string::npos);
  }
  // A table whose numbers alone are wider than 100 columns cannot fit: it is not wrapped at all (one line a row).
  report::Table wide;
  wide.header = {"name"};
  wide.right_align = {false};
  wide.rows = {{sentence}};
  for (int i = 0; i < 12; ++i) {
    wide.header.push_back("number" + std::to_string(i));
    wide.right_align.push_back(true);
    wide.rows[0].push_back("1234567.5");
  }
  const std::string wide_text = report::render(wide, report::Format::kTable);
  CHECK(std::count(wide_text.begin(), wide_text.end(), '\n') == 3);
  CHECK(wide_text.find(sentence) != std::string::npos);
  // A narrow table is printed as before: no wrapping, no extra lines.
  report::Table small;
  small.header = {"a", "b"};
  small.rows = {{"1", "two words"}};
  CHECK(report::render(small, report::Format::kTable) == "a  b\n-  ---------\n1  two words\n");
}

TEST_CASE("catalog show and catalog list fit 100 columns") {
  for (const char* args : {"catalog show h100-sxm", "catalog show rtx-4090", "catalog show jetson-agx-orin-64gb"}) {
    CAPTURE(args);
    auto r = test::run_hwplan(args);
    REQUIRE(r.exit_code == 0);
    // The table itself (up to the Sources list, whose citations are prose lines).
    std::string table = r.out.substr(0, r.out.find("\nSources:"));
    CHECK(widest_line(table) <= report::kTableColumns);
  }
}
