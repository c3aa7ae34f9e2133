#include "io/trace_io.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/error.hpp"

namespace hwplan::io {
namespace {

constexpr long long kMaxTokens = 100'000'000;
constexpr size_t kMaxRows = 10'000'000;

const std::vector<std::string> kArrivalNames = {"timestamp", "arrival_time", "arrival_time_s", "arrival_s", "time", "created"};
const std::vector<std::string> kPromptNames = {"contexttokens", "context_tokens", "prompt_tokens", "input_tokens",
                                               "input_len", "prompt_len", "num_prompt_tokens", "input_length"};
const std::vector<std::string> kOutputNames = {"generatedtokens", "generated_tokens", "output_tokens", "output_len",
                                               "num_output_tokens", "completion_tokens", "output_length"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\"'"), b = s.find_last_not_of(" \t\r\"'");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool matches(const std::string& name, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), lower(name)) != names.end();
}

std::optional<double> parse_number(const std::string& t) {
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

bool leap(long long y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Seconds (not negative), or "YYYY-MM-DD HH:MM:SS[.fraction]" (the Azure traces' TIMESTAMP; a 'T' separator is
// accepted), with an optional time-zone offset ("Z", "+HH:MM", "-HH:MM", "+HHMM") that is applied: rows in different
// zones are put on one clock. A date that does not exist (February 30) is not a time.
std::optional<double> parse_time(const std::string& t) {
  if (auto v = parse_number(t)) {
    if (*v < 0) return std::nullopt;
    return v;
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  char sep = 0;
  int consumed = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2d%c%2d:%2d:%n", &y, &mo, &d, &sep, &h, &mi, &consumed) < 6 || consumed == 0)
    return std::nullopt;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if ((sep != ' ' && sep != 'T') || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59) return std::nullopt;
  if (d > kDays[mo - 1] + (mo == 2 && leap(y) ? 1 : 0)) return std::nullopt;
  std::string rest = t.substr(static_cast<size_t>(consumed));
  double offset = 0;  // seconds east of UTC
  size_t zone = rest.find_first_of("+-Z");
  if (zone != std::string::npos) {
    const std::string z = rest.substr(zone);
    rest = rest.substr(0, zone);
    if (z != "Z") {
      int oh = 0, om = 0;
      const std::string digits = z.substr(1);
      if (digits.size() == 5 && digits[2] == ':' ? std::sscanf(digits.c_str(), "%2d:%2d", &oh, &om) != 2
          : digits.size() == 4                   ? std::sscanf(digits.c_str(), "%2d%2d", &oh, &om) != 2
          : digits.size() == 2                   ? std::sscanf(digits.c_str(), "%2d", &oh) != 1
                                                 : true)
        return std::nullopt;
      if (oh > 14 || om > 59) return std::nullopt;
      offset = (z[0] == '-' ? -1 : 1) * (oh * 3600.0 + om * 60.0);
    }
  }
  auto s = parse_number(rest);
  if (!s || *s < 0 || *s >= 61) return std::nullopt;
  return static_cast<double>(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400 + h * 3600 +
         mi * 60 + *s - offset;
}

long long tokens(const std::string& text, const SourceLocation& where, const std::string& key, long long min) {
  auto v = parse_number(text);
  if (!v || *v != std::floor(*v))
    throw InputError(where, key, "'" + text + "' is not a whole number of tokens");
  if (*v < static_cast<double>(min) || *v > static_cast<double>(kMaxTokens))
    throw InputError(where, key, "'" + text + "' is out of range (" + std::to_string(min) + " to 100000000 tokens)");
  return static_cast<long long>(*v);
}

// The longest a trace may span: the public Azure LLM inference traces cover an hour (2023) and a week (2024); a month
// is room for any real capture, while a typo in one timestamp (a year off, seconds where milliseconds were meant)
// spans years and would turn the whole run into one request every few days.
constexpr double kMaxTraceSpanSeconds = 31 * 86400.0;

void finish(std::vector<serve::TraceRow>& rows, const std::string& file, const std::string& arrival_key = "timestamp") {
  if (rows.empty()) throw InputError({file, 0, 0}, "", "the trace has no requests");
  if (rows.front().has_arrival) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const serve::TraceRow& a, const serve::TraceRow& b) { return a.arrival_seconds < b.arrival_seconds; });
    const double t0 = rows.front().arrival_seconds;
    const double span = rows.back().arrival_seconds - t0;
    if (span > kMaxTraceSpanSeconds) {
      // The mistyped row is on the short side of the widest gap between consecutive arrivals.
      size_t gap = 0;
      for (size_t i = 1; i < rows.size(); ++i)
        if (rows[i].arrival_seconds - rows[i - 1].arrival_seconds > rows[gap + 1].arrival_seconds - rows[gap].arrival_seconds)
          gap = i - 1;
      const serve::TraceRow& odd = gap + 1 < rows.size() - (gap + 1) ? rows[gap] : rows[gap + 1];
      char days[32];
      std::snprintf(days, sizeof days, "%.4g", span / 86400);
      throw InputError({file, odd.line, odd.line > 0 ? 1 : 0}, arrival_key,
                       std::string("the arrivals span ") + days +
                           " days, more than the 31 a trace may cover: a mistyped time? (" +
                           (odd.line > 0 ? "this row's arrival is the one apart from the rest)"
                                         : "one row's arrival is far from the rest)"));
    }
    for (auto& r : rows) r.arrival_seconds -= t0;
  }
}

std::vector<serve::TraceRow> parse_csv(std::istream& in, const std::string& file) {
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  int arrival = -1, prompt = -1, output = -1;
  // RFC 4180 cells: a field in double quotes may hold commas, and "" inside it is one quote. Each cell's 1-based
  // column is kept for the messages.
  std::vector<int> starts;
  auto split = [&](const std::string& l) {
    std::vector<std::string> cells;
    starts.clear();
    size_t i = 0;
    while (true) {
      starts.push_back(static_cast<int>(i) + 1);
      std::string cell;
      while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
      if (i < l.size() && l[i] == '"') {
        ++i;
        bool closed = false;
        while (i < l.size()) {
          if (l[i] == '"') {
            if (i + 1 < l.size() && l[i + 1] == '"') {
              cell += '"';
              i += 2;
              continue;
            }
            closed = true;
            ++i;
            break;
          }
          cell += l[i++];
        }
        if (!closed) throw InputError({file, line_no, starts.back()}, "", "a quoted field is not closed on its line");
        while (i < l.size() && l[i] != ',') {
          if (l[i] != ' ' && l[i] != '\t' && l[i] != '\r')
            throw InputError({file, line_no, static_cast<int>(i) + 1}, "", "text after a quoted field's closing quote");
          ++i;
        }
      } else {
        while (i < l.size() && l[i] != ',') cell += l[i++];
      }
      cells.push_back(trim(cell));
      if (i >= l.size()) break;
      ++i;  // the comma
    }
    return cells;
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (!trim(line).empty()) break;
  }
  header = split(line);
  for (int i = 0; i < static_cast<int>(header.size()); ++i) {
    if (arrival < 0 && matches(header[static_cast<size_t>(i)], kArrivalNames)) arrival = i;
    if (prompt < 0 && matches(header[static_cast<size_t>(i)], kPromptNames)) prompt = i;
    if (output < 0 && matches(header[static_cast<size_t>(i)], kOutputNames)) output = i;
  }
  if (prompt < 0 || output < 0)
    throw InputError({file, line_no, 1}, prompt < 0 ? "ContextTokens" : "GeneratedTokens",
                     "the header names no " + std::string(prompt < 0 ? "prompt-length" : "output-length") +
                         " column (accepted: ContextTokens/GeneratedTokens, prompt_tokens/output_tokens, input_len/output_len)");
  std::vector<serve::TraceRow> rows;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    if (rows.size() >= kMaxRows) throw InputError({file, line_no, 1}, "", "more than 10,000,000 requests");
    auto cells = split(line);
    // Column of a cell, 1-based, for the message.
    auto column = [&](int index) { return index < static_cast<int>(starts.size()) ? starts[static_cast<size_t>(index)] : 1; };
    // More cells than the header names (a comma inside an unquoted field?): which value is whose is not known.
    size_t filled = cells.size();
    while (filled > header.size() && cells[filled - 1].empty()) --filled;
    if (filled > header.size())
      throw InputError({file, line_no, column(static_cast<int>(header.size()))}, "",
                       "the row has " + std::to_string(cells.size()) + " columns, the header " + std::to_string(header.size()) +
                           " (a field with a comma must be in double quotes)");
    auto cell = [&](int index, const std::string& key) -> const std::string& {
      if (index >= static_cast<int>(cells.size()))
        throw InputError({file, line_no, static_cast<int>(line.size()) + 1}, key,
                         "missing: the row has " + std::to_string(cells.size()) + " columns, the header " +
                             std::to_string(header.size()));
      return cells[static_cast<size_t>(index)];
    };
    serve::TraceRow r;
    r.line = line_no;
    const std::string& pk = header[static_cast<size_t>(prompt)];
    const std::string& ok = header[static_cast<size_t>(output)];
    r.prompt_tokens = tokens(cell(prompt, pk), {file, line_no, column(prompt)}, pk, 1);
    r.output_tokens = tokens(cell(output, ok), {file, line_no, column(output)}, ok, 1);
    r.has_arrival = arrival >= 0;
    if (arrival >= 0) {
      const std::string& ak = header[static_cast<size_t>(arrival)];
      auto t = parse_time(cell(arrival, ak));
      if (!t) throw InputError({file, line_no, column(arrival)}, ak, "'" + cell(arrival, ak) + "' is not a time (seconds, not negative, or a real date YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM])");
      r.arrival_seconds = *t;
    }
    rows.push_back(r);
  }
  finish(rows, file, arrival >= 0 ? header[static_cast<size_t>(arrival)] : "timestamp");
  return rows;
}

serve::TraceRow json_row(const nlohmann::json& j, const SourceLocation& where) {
  if (!j.is_object()) throw InputError(where, "", "expected an object with prompt and output token counts");
  serve::TraceRow r;
  bool have_prompt = false, have_output = false;
  r.has_arrival = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const bool p = matches(key, kPromptNames), o = matches(key, kOutputNames), a = matches(key, kArrivalNames);
    if (!p && !o && !a) continue;  // other fields (texts, latencies) are not ours to check
    std::string text = it->is_string() ? it->get<std::string>() : it->is_number() ? it->dump() : "";
    if (text.empty()) throw InputError(where, key, "expected a number, found " + std::string(it->type_name()));
    if (p) {
      r.prompt_tokens = tokens(text, where, key, 1);
      have_prompt = true;
    } else if (o) {
      r.output_tokens = tokens(text, where, key, 1);
      have_output = true;
    } else {
      auto t = parse_time(text);
      if (!t) throw InputError(where, key, "'" + text + "' is not a time (seconds, not negative, or a real date YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM])");
      r.arrival_seconds = *t;
      r.has_arrival = true;
    }
  }
  if (!have_prompt) throw InputError(where, "prompt_tokens", "missing (or ContextTokens, input_len)");
  if (!have_output) throw InputError(where, "output_tokens", "missing (or GeneratedTokens, output_len)");
  return r;
}

}  // namespace

std::vector<serve::TraceRow> parse_trace(const std::string& raw, const std::string& file, long long* failed) {
  if (failed) *failed = 0;
  // A UTF-8 byte-order mark (spreadsheet exports) is not part of the first column's name.
  const std::string text = raw.rfind("\xEF\xBB\xBF", 0) == 0 ? raw.substr(3) : raw;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw InputError({file, 0, 0}, "", "the trace is empty");
  std::vector<serve::TraceRow> rows;
  if (text[first] != '{' && text[first] != '[') {
    std::istringstream in(text);
    return parse_csv(in, file);
  }
  // A whole JSON document: a vLLM benchmark result (input_lens, output_lens) or an array of rows.
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_discarded() && (doc.is_array() || (doc.is_object() && doc.contains("input_lens")))) {
    if (doc.is_array()) {
      if (doc.size() > kMaxRows) throw InputError({file, 0, 0}, "", "more than 10,000,000 requests");
      for (size_t i = 0; i < doc.size(); ++i) {
        const SourceLocation where{file + " [row " + std::to_string(i + 1) + "]", 0, 0};
        rows.push_back(json_row(doc[i], where));
        if (rows.back().has_arrival != rows.front().has_arrival)
          throw InputError(where, "timestamp", "some rows have an arrival time and some do not");
      }
    } else {
      const auto& in = doc["input_lens"];
      const auto* out = doc.contains("output_lens") ? &doc["output_lens"] : nullptr;
      if (!in.is_array() || !out || !out->is_array() || in.size() != out->size())
        throw InputError({file, 0, 0}, "output_lens", "expected input_lens and output_lens arrays of the same length");
      if (in.size() > kMaxRows) throw InputError({file, 0, 0}, "", "more than 10,000,000 requests");
      for (size_t i = 0; i < in.size(); ++i) {
        SourceLocation where{file + " [request " + std::to_string(i + 1) + "]", 0, 0};
        serve::TraceRow r;
        r.has_arrival = false;
        r.prompt_tokens = tokens(in[i].is_number() ? in[i].dump() : "", where, "input_lens", 1);
        // A request that failed in the benchmark has output 0: it is skipped, as the benchmark's metrics do.
        if ((*out)[i].is_number() && (*out)[i].get<double>() == 0) {
          if (failed) ++*failed;
          continue;
        }
        r.output_tokens = tokens((*out)[i].is_number() ? (*out)[i].dump() : "", where, "output_lens", 1);
        rows.push_back(r);
      }
    }
    finish(rows, file);
    return rows;
  }
  // JSON Lines.
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  std::optional<bool> arrivals;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    if (rows.size() >= kMaxRows) throw InputError({file, line_no, 1}, "", "more than 10,000,000 requests");
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) throw InputError({file, line_no, 1}, "", "not a JSON object");
    serve::TraceRow r = json_row(j, {file, line_no, 1});
    r.line = line_no;
    if (arrivals && *arrivals != r.has_arrival)
      throw InputError({file, line_no, 1}, "timestamp", "some rows have an arrival time and some do not");
    arrivals = r.has_arrival;
    rows.push_back(r);
  }
  finish(rows, file);
  return rows;
}

std::vector<serve::TraceRow> load_trace(const std::string& path, long long* failed) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "--trace", "cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_trace(ss.str(), path, failed);
}

std::vector<long long> load_lengths(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "file", "cannot open the file");
  std::vector<long long> out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    // A UTF-8 byte-order mark (a spreadsheet's export) is not part of the first length.
    if (line_no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line = line.substr(3);
    std::string t = trim(line.substr(0, line.find('#')));
    if (t.empty()) continue;
    if (out.size() >= kMaxRows) throw InputError({path, line_no, 1}, "", "more than 10,000,000 lengths");
    out.push_back(tokens(t, {path, line_no, 1}, "length", 1));
  }
  if (out.empty()) throw InputError({path, 0, 0}, "length", "the file has no lengths");
  return out;
}

}  // namespace hwplan::io
