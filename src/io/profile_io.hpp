// Reading and writing calibration profiles (YAML).
#pragma once

#include <memory>
#include <string>

#include "core/profile.hpp"

namespace hwplan::io {

Profile parse_profile(const std::string& text, const std::string& file);
Profile load_profile(const std::string& path);
// The same, parsed once per file version: later calls with the same path, size and modification time share the
// first parse (recommend resolves one workload per device and count; the Python module reuses the process).
std::shared_ptr<const Profile> load_profile_cached(const std::string& path);
std::string profile_to_yaml(const Profile& profile);
void save_profile(const Profile& profile, const std::string& path);  // atomic

}  // namespace hwplan::io
