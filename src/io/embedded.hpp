// The catalog and model zoo compiled into the binary: generated at build time by tools/embed_data.cpp, which
// parses catalog/*.yaml and models/*.yaml with the program's own strict loaders.
#pragma once

#include <vector>

#include "core/device.hpp"
#include "core/model.hpp"

namespace hwplan::io {

std::vector<Device> builtin_devices();
std::vector<Model> builtin_models();
const char* builtin_compat_text();  // data/compat/cuda-pytorch.yaml

}  // namespace hwplan::io
