// Helpers for the tests: the built-in registry, and running the real hwplan binary.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "io/registry.hpp"

namespace hwplan::test {

inline const io::Registry& registry() {
  static io::Registry r;
  return r;
}

// doctest::Approx's default scale of 1 makes its tolerance absolute (about 1.2e-5) for values below one, so that any
// two microsecond timings compare equal: this one is relative (an expected zero keeps an absolute tolerance of about 1e-12).
inline doctest::Approx approx(double expected) { return doctest::Approx(expected).scale(expected == 0 ? 1e-7 : 0); }

inline std::string source_path(const std::string& rel) { return std::string(HWPLAN_SOURCE_DIR) + "/" + rel; }

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `hwplan ARGS` through the shell; stdout and stderr are captured separately.
inline RunResult run_hwplan(const std::string& args) {
  static int counter = 0;
  std::string err_file = "/tmp/hwplan_test_stderr_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  std::string cmd = std::string(HWPLAN_BINARY) + " " + args + " 2>" + err_file;
  RunResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::remove(err_file.c_str());
  return r;
}

}  // namespace hwplan::test
