#include "core/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace hwplan {

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest(std::string_view name, const std::vector<std::string>& candidates) {
  std::string lower = to_lower(name);
  std::optional<std::string> best;
  std::size_t best_distance = SIZE_MAX;
  for (const auto& c : candidates) {
    std::string lc = to_lower(c);
    std::size_t d = edit_distance(lower, lc);
    // A candidate that contains the query (or the reverse) is a strong hint even when far in edits.
    if (!lower.empty() && (lc.find(lower) != std::string::npos || lower.find(lc) != std::string::npos))
      d = std::min(d, std::size_t{2});
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  if (!best) return std::nullopt;
  std::size_t limit = std::max<std::size_t>(2, lower.size() / 3);
  if (best_distance > limit) return std::nullopt;
  return best;
}

namespace {
std::optional<double> parse_number_with_suffix(std::string_view s, char& suffix) {
  std::string str(s);
  while (!str.empty() && std::isspace(static_cast<unsigned char>(str.back()))) str.pop_back();
  if (str.empty()) return std::nullopt;
  suffix = static_cast<char>(std::tolower(static_cast<unsigned char>(str.back())));
  if (std::isalpha(static_cast<unsigned char>(suffix))) str.pop_back();
  else suffix = 0;
  if (str.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(str.c_str(), &end);
  if (end != str.c_str() + str.size() || !std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}
}  // namespace

namespace {
// A finite product or nothing: "1e305B" is a number times a suffix that overflows double.
std::optional<double> finite(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }
}  // namespace

std::optional<double> parse_param_count(std::string_view s) {
  char suffix = 0;
  auto v = parse_number_with_suffix(s, suffix);
  if (!v) return std::nullopt;
  switch (suffix) {
    case 'k': return finite(*v * 1e3);
    case 'm': return finite(*v * 1e6);
    case 'b': return finite(*v * 1e9);
    case 't': return finite(*v * 1e12);
    default: return std::nullopt;
  }
}

std::optional<double> parse_duration_seconds(std::string_view s) {
  char suffix = 0;
  auto v = parse_number_with_suffix(s, suffix);
  if (!v) return std::nullopt;
  switch (suffix) {
    case 0:
    case 's': return finite(*v);
    case 'm': return finite(*v * 60);
    case 'h': return finite(*v * 3600);
    case 'd': return finite(*v * 86400);
    case 'w': return finite(*v * 7 * 86400);
    default: return std::nullopt;
  }
}

std::string human_bytes(double bytes) {
  char buf[64];
  double gib = bytes / (1024.0 * 1024.0 * 1024.0);
  if (gib >= 1024 * 10) std::snprintf(buf, sizeof buf, "%.1f TiB", gib / 1024);
  else if (gib >= 1) std::snprintf(buf, sizeof buf, "%.1f GiB", gib);
  else std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

std::string human_seconds(double seconds) {
  char buf[64];
  if (!std::isfinite(seconds)) return "n/a";
  if (seconds < 1e-3) std::snprintf(buf, sizeof buf, "%.1f us", seconds * 1e6);
  else if (seconds < 1) std::snprintf(buf, sizeof buf, "%.1f ms", seconds * 1e3);
  else if (seconds < 120) std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  else if (seconds < 7200) std::snprintf(buf, sizeof buf, "%.1f min", seconds / 60);
  else if (seconds < 3 * 86400) std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  else std::snprintf(buf, sizeof buf, "%.1f days", seconds / 86400);
  return buf;
}

std::string human_days_or_hours(double seconds, double column_max_seconds) {
  char buf[64];
  if (!std::isfinite(seconds)) return "n/a";
  if (column_max_seconds >= 3 * 86400) std::snprintf(buf, sizeof buf, "%.2f days", seconds / 86400);
  else if (column_max_seconds >= 7200) std::snprintf(buf, sizeof buf, "%.2f h", seconds / 3600);
  else if (column_max_seconds >= 120) std::snprintf(buf, sizeof buf, "%.1f min", seconds / 60);
  else std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  return buf;
}

std::string human_count(double n) {
  char buf[64];
  if (n >= 1e12) std::snprintf(buf, sizeof buf, "%.2fT", n / 1e12);
  else if (n >= 1e9) std::snprintf(buf, sizeof buf, "%.2fB", n / 1e9);
  else if (n >= 1e6) std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
  else if (n >= 1e3) std::snprintf(buf, sizeof buf, "%.1fK", n / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

std::string binary_size(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes == std::floor(bytes) ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::optional<bool> parse_on_off(std::string_view s) {
  if (s == "on" || s == "true" || s == "yes" || s == "1") return true;
  if (s == "off" || s == "false" || s == "no" || s == "0") return false;
  return std::nullopt;
}

}  // namespace hwplan
