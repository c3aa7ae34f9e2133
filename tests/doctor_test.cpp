// doctor's pure parts: driver version parsing and which PyTorch wheels run on a driver (no GPU needed).
#include <doctest/doctest.h>

#include "calibrate/doctor.hpp"
#include "io/compat_io.hpp"
#include "test_util.hpp"

using namespace hwplan;

TEST_CASE("the NVIDIA driver version is read from /proc/driver/nvidia/version") {
  CHECK(calibrate::parse_nvidia_driver_version(
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\nGCC version: gcc 12") ==
        "550.54.14");
  CHECK(calibrate::parse_nvidia_driver_version(
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build") == "570.86.15");
  CHECK(calibrate::parse_nvidia_driver_version("").empty());
}

TEST_CASE("the compatibility table loads and versions compare numerically") {
  io::CompatTable t = io::builtin_compat();
  CHECK(t.cuda.size() >= 10);
  CHECK(t.pytorch.size() >= 10);
  CHECK(io::compare_versions("550.54.14", "525.60.13") > 0);
  CHECK(io::compare_versions("525.60.13", "525.60.13") == 0);
  CHECK(io::compare_versions("470.82.01", "525.60.13") < 0);
  CHECK(io::compare_versions("12.10", "12.9") > 0);
}

TEST_CASE("which wheels run: a CUDA 12 build needs a >= 525.60.13 driver (NVIDIA minor-version compatibility)") {
  auto old_driver = calibrate::check_wheels("470.82.01", {});
  bool any_cu12 = false, any_cu118 = false;
  for (const auto& w : old_driver) {
    if (w.cuda.rfind("12.", 0) == 0 && w.driver_ok) any_cu12 = true;
    if (w.cuda == "11.8" && w.driver_ok) any_cu118 = true;
  }
  CHECK_FALSE(any_cu12);
  CHECK(any_cu118);  // 470 >= 450.80.02
  auto new_driver = calibrate::check_wheels("550.54.14", {});
  for (const auto& w : new_driver) {
    CAPTURE(w.pytorch);
    CAPTURE(w.cuda);
    if (w.cuda == "12.4") CHECK(w.full_features);
    if (w.cuda == "12.8") {
      CHECK(w.driver_ok);            // minor-version compatibility
      CHECK_FALSE(w.full_features);  // 12.8's own driver is 570.26
    }
  }
}

TEST_CASE("doctor runs on a machine without a GPU and says so") {
  auto r = test::run_hwplan("doctor --format json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"hints\"") != std::string::npos);
  // The JSON carries what the table says: the load average the hints judge by.
  CHECK(r.out.find("\"load_average_1min\"") != std::string::npos);
  auto text = test::run_hwplan("doctor");
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("CPU:") != std::string::npos);
}
