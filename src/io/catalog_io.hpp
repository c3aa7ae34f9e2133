// Loads hardware catalog files (catalog/*.yaml) into Device values, converting units once.
#pragma once

#include <string>
#include <vector>

#include "core/device.hpp"

namespace hwplan::io {

// Parses one device document. `file` names it in error messages.
Device parse_device(const std::string& text, const std::string& file);
Device load_device_file(const std::string& path);
// The device as a catalog file (the schema above, in its units), which parse_device reads back to the same device
// (numbers to 12 significant digits; a user's price quote keeps its citation but not its origin).
std::string device_to_yaml(const Device& d);

// Overrides prices with a user's own quotes (--prices FILE, HWPLAN_PRICES): a map of device id to price keys as
// in the catalog (`street_usd`, `street_date`, `street_source`, `cloud_usd_per_hour`, `cloud_provider`, ...).
// Unknown ids and keys are errors naming file:line:column; a quote without its own source cites the file.
void apply_price_file(std::vector<Device>& devices, const std::string& path);
// The same for text already read; `file` names it in errors.
void apply_price_text(std::vector<Device>& devices, const std::string& text, const std::string& file);

}  // namespace hwplan::io
