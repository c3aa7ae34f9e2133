// Reading and writing calibration profiles (YAML).
#pragma once

#include <string>

#include "core/profile.hpp"

namespace hwplan::io {

Profile parse_profile(const std::string& text, const std::string& file);
Profile load_profile(const std::string& path);
std::string profile_to_yaml(const Profile& profile);
void save_profile(const Profile& profile, const std::string& path);  // atomic

}  // namespace hwplan::io
