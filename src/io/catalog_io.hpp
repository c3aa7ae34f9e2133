// Loads hardware catalog files (catalog/*.yaml) into Device values, converting units once.
#pragma once

#include <string>

#include "core/device.hpp"

namespace hwplan::io {

// Parses one device document. `file` names it in error messages.
Device parse_device(const std::string& text, const std::string& file);
Device load_device_file(const std::string& path);

}  // namespace hwplan::io
