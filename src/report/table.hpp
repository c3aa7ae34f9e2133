// Rendering of rows as an aligned text table, CSV (RFC 4180 quoting), a Markdown table or an HTML <table>.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace hwplan::report {

enum class Format { kTable, kJson, kCsv, kMarkdown, kHtml };
std::optional<Format> parse_format(const std::string& s);

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right_align;  // per column; numbers read better right-aligned
};

// Text tables fit kTableColumns characters where they can: long text cells wrap onto further lines of their row
// (numbers never do). CSV, Markdown and HTML keep every cell whole.
constexpr std::size_t kTableColumns = 100;
std::string render(const Table& table, Format format);
std::string csv_field(const std::string& s);
// Numbers for tables: fixed decimals, "-" for absent.
std::string num(double v, int decimals = 1);
// Money for people: thousands separators, whole dollars from $100 up, cents below, and two significant digits
// under one cent ("$1,234,567", "$12.34", "$0.0042"). Negative amounts keep their sign ("-$1,200").
std::string money(double usd);

}  // namespace hwplan::report
