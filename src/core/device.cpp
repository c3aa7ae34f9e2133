// Large-GEMM rates of devices without a published measurement, from their measured siblings and the power budget.
//
// A compute unit's dynamic power grows with the tensor work it does per clock (k), with the clock f and with the
// square of the voltage, which the DVFS range raises about in step with f: P ~ N k f^3 for N units. A card that is
// power-limited under dense GEMMs therefore holds the clock at which N k f^3 meets its TDP. Between two siblings (same
// vendor and architecture family, and the same tensor work per unit per clock, so that consumer parts with half-rate
// fp32-accumulate tensor cores are not compared with professional ones) the held clocks stand in the ratio
//   f_D / f_R = cbrt(TDP_D / TDP_R x N_R k_R / (N_D k_D)),
// and as a fraction of its own spec-sheet peak (which scales with its boost clock) D reaches
//   e_D = e_R x (f_D / f_R) x (boost_R / boost_D),
// where e_R is the sibling's measured large-GEMM rate over its peak. Check on two measured siblings: the A100 SXM4 80GB
// (400 W) reaches 0.869 of its 312 TFLOP/s peak, which predicts 0.869 x cbrt(300 / 400) = 0.790 for the 300 W A100
// PCIe 80GB; the same maximum-achievable-matmul table measured 0.811.
// A device is never given a better fraction than its best measured sibling (a sibling with more power per unit than
// the best measured one would hold a higher clock, which nothing measured shows). Devices with a measurement of
// their own clock (a published sustained clock or SGEMM) keep it: estimators/efficiency.cpp reads those first.
#include <algorithm>
#include <cmath>

#include "core/device.hpp"

namespace hwplan {
namespace {

double measured16(const Device& d) {
  for (Precision p : {Precision::kBf16, Precision::kFp16}) {
    auto it = d.measured_matmul_flops.find(p);
    if (it != d.measured_matmul_flops.end() && it->second > 0) return it->second;
  }
  return 0;
}

double peak16(const Device& d) {
  const double bf16 = d.peak(Precision::kBf16);
  return bf16 > 0 ? bf16 : d.peak(Precision::kFp16);
}

// What the power model needs: the power limit, the compute units, the boost clock and a 16-bit tensor peak, for one
// device as the framework sees it (a package split into several devices shares one limit: left out).
bool has_power_facts(const Device& d) {
  return d.tdp_w > 0 && d.compute_units.value_or(0) > 0 && d.boost_clock_mhz.value_or(0) > 0 && peak16(d) > 0 &&
         !d.architecture_family.empty() && d.devices_per_package == 1;
}

// 16-bit tensor work per compute unit per clock (FLOP).
double work_per_unit_clock(const Device& d) { return peak16(d) / (*d.compute_units * *d.boost_clock_mhz * 1e6); }

bool siblings(const Device& a, const Device& b) {
  if (a.vendor != b.vendor || a.architecture_family != b.architecture_family) return false;
  const double ratio = work_per_unit_clock(a) / work_per_unit_clock(b);
  return ratio > 0.8 && ratio < 1.25;
}

// A measurement of the device's own clock under load: the estimators use it instead.
bool own_clock_measured(const Device& d) {
  return d.sustained_clock_mhz.has_value() ||
         (d.measured_matmul_flops.count(Precision::kFp32) != 0 && !d.fp32_matrix_flops.has_value());
}

}  // namespace

void derive_sibling_gemm(std::vector<Device>& devices) {
  struct Derived {
    double flops = 0;
    std::string reference;
    double clock = 1.0;
  };
  std::vector<Derived> out(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Device& d = devices[i];
    if (!has_power_facts(d) || own_clock_measured(d)) continue;
    const double own = measured16(d) / peak16(d);
    double best = 0, cap = own;
    std::string reference, best_measured;
    for (std::size_t j = 0; j < devices.size(); ++j) {
      const Device& r = devices[j];
      if (j == i || !has_power_facts(r) || measured16(r) <= 0 || !siblings(d, r)) continue;
      const double er = measured16(r) / peak16(r);
      if (er > cap) {
        cap = er;
        best_measured = r.id;
      }
      const double held = std::cbrt(d.tdp_w / r.tdp_w * static_cast<double>(*r.compute_units) / *d.compute_units *
                                    work_per_unit_clock(r) / work_per_unit_clock(d));
      const double ed = er * held * *r.boost_clock_mhz / *d.boost_clock_mhz;
      if (ed > best) {
        best = ed;
        reference = r.id;
      }
    }
    if (reference.empty()) continue;
    // Capped: the best measured sibling is what the device is said to reach.
    if (best > cap) reference = best_measured;
    const double e = own > 0 ? own : std::min(best, cap);
    out[i].clock = std::min(1.0, e / cap);
    if (own <= 0) {
      out[i].flops = e * peak16(d);
      out[i].reference = reference;
    }
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    devices[i].sibling_matmul_flops = out[i].flops;
    devices[i].sibling_matmul_reference = out[i].reference;
    devices[i].tensor_clock_fraction = out[i].clock;
  }
}

}  // namespace hwplan
