// Small string helpers: case folding, nearest-name suggestions, size and duration parsing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hwplan {

std::string to_lower(std::string_view s);
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `name` (case-insensitive), if it is close enough to be a plausible typo.
std::optional<std::string> nearest(std::string_view name, const std::vector<std::string>& candidates);
// "7B", "1.3b", "70b", "350M" -> parameter count.
std::optional<double> parse_param_count(std::string_view s);
// "14d", "36h", "90m", "3600s", "2w" -> seconds.
std::optional<double> parse_duration_seconds(std::string_view s);
// An on/off switch's value: on|true|yes|1, off|false|no|0 (the CLI's switches and Python's booleans); else none.
std::optional<bool> parse_on_off(std::string_view s);
// Human-readable forms for reports.
std::string human_bytes(double bytes);       // GiB with one decimal, MiB below 1 GiB
std::string human_seconds(double seconds);   // us / ms / s / min / h / days
std::string human_count(double n);           // 6.74B, 124M
std::string human_days_or_hours(double seconds, double column_max_seconds);  // one unit for a whole column
std::string binary_size(double bytes);       // exact-looking sizes for benchmark shapes: 128 MiB, 1.5 GiB

}  // namespace hwplan
