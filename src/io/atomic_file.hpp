// Writing output files so that an existing file is never truncated or left half-written: write a temporary
// file beside the target, flush it, then rename it over the target.
#pragma once

#include <string>

namespace hwplan::io {

// Throws InputError (naming the path) when the directory is missing or not writable.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace hwplan::io
