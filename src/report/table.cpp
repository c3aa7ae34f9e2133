#include "report/table.hpp"

#include "report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hwplan::report {

std::optional<Format> parse_format(const std::string& s) {
  if (s == "table") return Format::kTable;
  if (s == "json") return Format::kJson;
  if (s == "csv") return Format::kCsv;
  if (s == "markdown" || s == "md") return Format::kMarkdown;
  if (s == "html") return Format::kHtml;
  return std::nullopt;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string num(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

namespace {
// Display width of UTF-8 text (counts code points, good enough for the symbols used here).
std::size_t width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}
std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}
}  // namespace

std::string render(const Table& t, Format format) {
  std::string out;
  if (format == Format::kCsv) {
    auto line = [&](const std::vector<std::string>& row) {
      for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_field(row[i]);
      out += "\n";
    };
    line(t.header);
    for (const auto& r : t.rows) line(r);
    return out;
  }
  if (format == Format::kHtml) {
    auto cells = [&](const std::vector<std::string>& row, const char* tag) {
      out += "<tr>";
      for (std::size_t i = 0; i < row.size(); ++i) {
        bool right = i < t.right_align.size() && t.right_align[i];
        // A trailing " *" marks the best of a row (compare) or a change of numerics (fit): shown in bold.
        bool mark = row[i].size() > 2 && row[i].compare(row[i].size() - 2, 2, " *") == 0;
        out += std::string("<") + tag + (right ? " class=\"num\"" : "") + (mark ? " data-marked=\"true\"" : "") + ">" +
               (mark ? "<strong>" + xml_escape(row[i]) + "</strong>" : xml_escape(row[i])) + "</" + tag + ">";
      }
      out += "</tr>\n";
    };
    out += "<table>\n<thead>";
    cells(t.header, "th");
    out += "</thead>\n<tbody>\n";
    for (const auto& r : t.rows) cells(r, "td");
    out += "</tbody>\n</table>\n";
    return out;
  }
  if (format == Format::kMarkdown) {
    auto line = [&](const std::vector<std::string>& row) {
      out += "|";
      for (const auto& c : row) out += " " + md_escape(c) + " |";
      out += "\n";
    };
    line(t.header);
    out += "|";
    for (std::size_t i = 0; i < t.header.size(); ++i)
      out += (i < t.right_align.size() && t.right_align[i]) ? "---:|" : "---|";
    out += "\n";
    for (const auto& r : t.rows) line(r);
    return out;
  }
  std::vector<std::size_t> widths(t.header.size(), 0);
  for (std::size_t i = 0; i < t.header.size(); ++i) widths[i] = width(t.header[i]);
  for (const auto& r : t.rows)
    for (std::size_t i = 0; i < r.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], width(r[i]));
  auto line = [&](const std::vector<std::string>& row) {
    std::string l;
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      std::string pad(widths[i] - width(row[i]), ' ');
      bool right = i < t.right_align.size() && t.right_align[i];
      l += (i ? "  " : "") + (right ? pad + row[i] : row[i] + (i + 1 < row.size() ? pad : ""));
    }
    out += l + "\n";
  };
  line(t.header);
  std::string rule;
  for (std::size_t i = 0; i < widths.size(); ++i) rule += (i ? "  " : "") + std::string(widths[i], '-');
  out += rule + "\n";
  for (const auto& r : t.rows) line(r);
  return out;
}

std::string money(double usd) {
  if (!std::isfinite(usd)) return "-";
  std::string sign = usd < 0 ? "-" : "";
  double a = std::fabs(usd);
  if (a > 0 && a < 0.01) {  // two significant digits, never exponent notation
    int decimals = std::min(12, 1 - static_cast<int>(std::floor(std::log10(a))));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, a);
    return sign + "$" + buf;
  }
  int decimals = a < 100 ? 2 : 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, a);
  std::string digits = buf, frac;
  if (auto dot = digits.find('.'); dot != std::string::npos) frac = digits.substr(dot), digits = digits.substr(0, dot);
  std::string grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return sign + "$" + grouped + frac;
}

}  // namespace hwplan::report
