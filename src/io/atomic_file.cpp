#include "io/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "core/error.hpp"

namespace hwplan::io {
namespace fs = std::filesystem;

void write_file_atomically(const std::string& path, const std::string& content) {
  fs::path target(path);
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError({path, 0, 0}, "", "output directory '" + dir.string() + "' does not exist");
  if (fs::is_directory(target, ec)) throw InputError({path, 0, 0}, "", "output path is a directory");
  std::random_device rd;
  fs::path tmp = dir / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw InputError({path, 0, 0}, "", std::string("cannot write: ") + std::strerror(errno));
  bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(fileno(f)) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    int err = errno;
    fs::remove(tmp, ec);
    throw InputError({path, 0, 0}, "", std::string("write failed: ") + std::strerror(err));
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError({path, 0, 0}, "", "cannot replace file: " + ec.message());
  }
}

}  // namespace hwplan::io
