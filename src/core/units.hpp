// Unit constants. Inside hwplan every quantity is in SI base units (bytes, FLOP/s, bytes/s, seconds, W);
// conversions happen once, in the loaders and in the report layer.
#pragma once

namespace hwplan {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;
inline constexpr double kTera = 1e12;

}  // namespace hwplan
