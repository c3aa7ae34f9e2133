// Large-GEMM rates derived from measured siblings at a device's power budget (src/core/device.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/assumptions.hpp"
#include "core/device.hpp"
#include "estimators/efficiency.hpp"
#include "test_util.hpp"

using namespace hwplan;

TEST_CASE("a device without a GEMM measurement takes its measured sibling's fraction at its own power budget") {
  const auto& reg = test::registry();
  // The H100 PCIe (350 W, 114 SMs) from the H100 SXM (700 W, 132 SMs, 794.5 of 989.4 TFLOP/s): the held clock
  // scales with the cube root of the power per SM, the peak with the boost clock (1,980 against 1,755 MHz).
  const Device& pcie = reg.device("h100-pcie");
  DeviceRates r = device_rates(pcie, Precision::kBf16);
  CHECK_FALSE(r.gemm_efficiency_assumed);
  CHECK(r.gemm_sibling == "h100-sxm");
  CHECK_FALSE(pcie.sibling_matmul_capped);
  const double per_clock = (989.4 / (132 * 1980.0)) / (756.5 / (114 * 1755.0));
  CHECK(r.gemm_efficiency ==
        ::hwplan::test::approx(794.5 / 989.4 * std::cbrt(350.0 / 700 * 132 / 114 * per_clock) * 1980 / 1755).epsilon(0.002));
  // Never better than its measured siblings, better than the default for devices with none.
  CHECK(r.gemm_efficiency < device_rates(reg.device("h100-sxm"), Precision::kBf16).gemm_efficiency);
  CHECK(r.gemm_efficiency > assumptions().unmeasured_tensor_gemm_efficiency);
}

TEST_CASE("the power scaling predicts one measured sibling from the other") {
  const auto& reg = test::registry();
  // Without its own figure, the 300 W A100 PCIe 80GB is predicted from the 400 W SXM4's 271.2 of 312 TFLOP/s at 0.79
  // of its peak; stas00/ml-engineering's maximum-achievable-matmul table measured 252.9 (0.81).
  std::vector<Device> pair{reg.device("a100-80gb-sxm"), reg.device("a100-80gb-pcie")};
  pair[1].measured_matmul_flops.clear();
  derive_sibling_gemm(pair);
  CHECK(pair[1].sibling_matmul_reference == "a100-80gb-sxm");
  CHECK(pair[1].sibling_matmul_fraction == ::hwplan::test::approx(271.2 / 312 * std::cbrt(300.0 / 400)).epsilon(0.002));
  CHECK(std::fabs(pair[1].sibling_matmul_fraction / (252.9 / 312) - 1) < 0.05);
  // The other way round the PCIe card's 300 W predicts more than the SXM4 measured: capped at the PCIe's fraction.
  std::vector<Device> other{reg.device("a100-80gb-sxm"), reg.device("a100-80gb-pcie")};
  other[0].measured_matmul_flops.clear();
  derive_sibling_gemm(other);
  CHECK(other[0].sibling_matmul_capped);
  CHECK(other[0].sibling_matmul_fraction == ::hwplan::test::approx(252.9 / 312).epsilon(0.001));
}

TEST_CASE("tensor formats without a measurement run at the clock the 16-bit GEMMs hold") {
  const auto& reg = test::registry();
  // The A100 PCIe 80GB measures 252.9 against its SXM4 sibling's 271.2: its TF32 (no measurement) scales the same.
  const Device& a100_pcie = reg.device("a100-80gb-pcie");
  CHECK(a100_pcie.sibling_matmul_fraction == 0);
  CHECK(a100_pcie.tensor_clock_fraction == ::hwplan::test::approx(252.9 / 271.2).epsilon(0.001));
  CHECK(a100_pcie.tensor_clock_reference == "a100-80gb-sxm");
  DeviceRates tf32 = device_rates(a100_pcie, Precision::kTf32);
  CHECK(tf32.gemm_efficiency == ::hwplan::test::approx(assumptions().unmeasured_tensor_gemm_efficiency * 252.9 / 271.2).epsilon(0.001));
  CHECK(tf32.tensor_clock_reference == "a100-80gb-sxm");
  CHECK(reg.device("a100-80gb-sxm").tensor_clock_fraction == ::hwplan::test::approx(1.0));
  // Not FP32 or FP64 (vector units) and not the 16-bit GEMMs it measured.
  CHECK(device_rates(a100_pcie, Precision::kFp32).tensor_clock_fraction == ::hwplan::test::approx(1.0));
  CHECK(device_rates(a100_pcie, Precision::kFp64).tensor_clock_fraction == ::hwplan::test::approx(1.0));
  CHECK(device_rates(a100_pcie, Precision::kBf16).gemm_efficiency == ::hwplan::test::approx(252.9 / 312).epsilon(0.001));
}

TEST_CASE("siblings do the same tensor work per unit per clock, and a device's own clock measurement wins") {
  const auto& reg = test::registry();
  // GeForce GA10x tensor cores run fp32-accumulate at half the professional parts' rate: the A10 is the RTX A6000's
  // sibling, the RTX 3060 the RTX 3090's, and the A6000 is not held to the 3090's above-peak fraction.
  CHECK(reg.device("a10").sibling_matmul_reference == "rtx-a6000");
  CHECK(reg.device("rtx-3060-12gb").sibling_matmul_reference == "rtx-3090");
  CHECK(reg.device("rtx-a6000").tensor_clock_fraction == ::hwplan::test::approx(1.0));
  // The RTX 3060 has more power per SM than the 3090 (170 W / 28 against 350 W / 82): capped at the 3090's measured
  // fraction, which is above the rated peak (GeForce cards hold clocks above their rated boost), so its full peak.
  const Device& rtx3060 = reg.device("rtx-3060-12gb");
  const Device& rtx3090 = reg.device("rtx-3090");
  CHECK(rtx3060.sibling_matmul_capped);
  CHECK(rtx3060.sibling_matmul_fraction ==
        ::hwplan::test::approx(rtx3090.measured_matmul_flops.at(Precision::kBf16) / rtx3090.peak(Precision::kBf16)));
  CHECK(device_rates(rtx3060, Precision::kFp16).gemm_efficiency == ::hwplan::test::approx(1.0));
  // A device whose own clock under load is measured (the L4's SGEMM) keeps it; a package split into two devices
  // (MI250X) and a family with no measured member (Volta) keep the stated default.
  CHECK(own_clock_measured(reg.device("l4")));
  CHECK(reg.device("l4").sibling_matmul_fraction == 0);
  CHECK(device_rates(reg.device("l4"), Precision::kBf16).gemm_efficiency_assumed);
  CHECK(device_rates(reg.device("mi250x"), Precision::kBf16).gemm_efficiency_assumed);
  CHECK(device_rates(reg.device("v100-32gb-sxm"), Precision::kFp16).gemm_efficiency_assumed);
}

TEST_CASE("a device without a boost clock takes the one its peak implies at its sibling's work per unit per clock") {
  const auto& reg = test::registry();
  // The H100 NVL (400 W, 132 SMs, 835.5 TFLOP/s; no boost clock in the catalog): at the H100 SXM's work per SM per
  // clock its peak implies 1.67 GHz; it lands between the 350 W PCIe card and the 700 W SXM.
  const Device& nvl = reg.device("h100-nvl");
  REQUIRE_FALSE(nvl.boost_clock_mhz.has_value());
  CHECK(nvl.sibling_matmul_reference == "h100-sxm");
  const double implied = 835.5 / (132 * 989.4 / (132 * 1980.0));
  CHECK(nvl.sibling_matmul_fraction ==
        ::hwplan::test::approx(794.5 / 989.4 * std::cbrt(400.0 / 700) * 1980 / implied).epsilon(0.002));
  CHECK(nvl.sibling_matmul_fraction > reg.device("h100-pcie").sibling_matmul_fraction);
  CHECK(nvl.sibling_matmul_fraction < 794.5 / 989.4);
}
