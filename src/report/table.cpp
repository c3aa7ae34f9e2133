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
// Splits text into lines of at most `columns` code points, at spaces where it can, mid-word where a word is
// longer than the line.
std::vector<std::string> wrap(const std::string& text, std::size_t columns) {
  columns = std::max<std::size_t>(1, columns);
  std::vector<std::string> lines;
  std::string current;
  std::size_t current_width = 0;
  auto flush = [&] {
    lines.push_back(current);
    current.clear();
    current_width = 0;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = text.find(' ', i);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(i, end - i);
    i = end < text.size() ? end + 1 : end;
    std::size_t w = width(word);
    if (current_width > 0 && current_width + 1 + w <= columns) {
      current += " " + word;
      current_width += 1 + w;
      continue;
    }
    if (current_width > 0) flush();
    // A word longer than the line is cut at code-point boundaries.
    while (w > columns) {
      std::size_t bytes = 0, taken = 0;
      while (bytes < word.size() && taken < columns) {
        ++bytes;
        while (bytes < word.size() && (static_cast<unsigned char>(word[bytes]) & 0xC0) == 0x80) ++bytes;
        ++taken;
      }
      lines.push_back(word.substr(0, bytes));
      word = word.substr(bytes);
      w = width(word);
    }
    current = word;
    current_width = w;
  }
  if (current_width > 0 || lines.empty()) flush();
  return lines;
}

// Column widths for a text table of at most `limit` characters: the natural widths when they fit, else the widest
// wrappable column narrowed one step at a time. Wrappable: text, not numbers, and never below its header, its
// longest word (ids stay whole; a word over kLongestWholeWord characters, such as a URL, may be cut) or
// kNarrowestWrap characters (short cells such as "tp1 pp1 dp4" stay on one line). Tables whose numbers and short
// columns alone are wider than the limit are not wrapped at all.
constexpr std::size_t kLongestWholeWord = 30;
constexpr std::size_t kNarrowestWrap = 20;
std::vector<std::size_t> fitted_widths(const Table& t, std::size_t limit) {
  std::vector<std::size_t> widths(t.header.size(), 0), floors(t.header.size(), 0);
  for (std::size_t i = 0; i < t.header.size(); ++i) {
    widths[i] = width(t.header[i]);
    floors[i] = std::max(kNarrowestWrap, widths[i]);
  }
  for (const auto& r : t.rows)
    for (std::size_t i = 0; i < r.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], width(r[i]));
      std::size_t start = 0;
      while (start <= r[i].size()) {
        std::size_t end = std::min(r[i].find(' ', start), r[i].size());
        floors[i] = std::max(floors[i], std::min(kLongestWholeWord, width(r[i].substr(start, end - start))));
        start = end + 1;
      }
    }
  const std::vector<std::size_t> natural = widths;
  auto total = [&] {
    std::size_t sum = widths.empty() ? 0 : 2 * (widths.size() - 1);
    for (auto w : widths) sum += w;
    return sum;
  };
  while (total() > limit) {
    std::size_t widest = widths.size();
    for (std::size_t i = 0; i < widths.size(); ++i) {
      bool right = i < t.right_align.size() && t.right_align[i];
      if (right || widths[i] <= floors[i]) continue;
      if (widest == widths.size() || widths[i] > widths[widest]) widest = i;
    }
    if (widest == widths.size()) return natural;  // it cannot fit: wrapping would only make it longer
    --widths[widest];
  }
  return widths;
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
  std::vector<std::size_t> widths = fitted_widths(t, kTableColumns);
  auto line = [&](const std::vector<std::string>& row) {
    // A cell wider than its column wraps onto further lines of the same row.
    std::vector<std::vector<std::string>> cells;
    std::size_t height = 1;
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      cells.push_back(width(row[i]) <= widths[i] ? std::vector<std::string>{row[i]} : wrap(row[i], widths[i]));
      height = std::max(height, cells.back().size());
    }
    for (std::size_t k = 0; k < height; ++k) {
      std::string l;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::string cell = k < cells[i].size() ? cells[i][k] : std::string();
        std::string pad(widths[i] - std::min(widths[i], width(cell)), ' ');
        bool right = i < t.right_align.size() && t.right_align[i];
        l += (i ? "  " : "") + (right ? pad + cell : cell + (i + 1 < cells.size() ? pad : ""));
      }
      while (k > 0 && !l.empty() && l.back() == ' ') l.pop_back();
      out += l + "\n";
    }
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
