// Large-GEMM rates of devices without a published measurement, from their measured siblings and the power budget.
//
// A compute unit's dynamic power grows with the tensor work it does per clock (k), with the clock f and with the
// square of the voltage, which the DVFS range raises about in step with f: P ~ N k f^3 for N units. A card that is
// power-limited under dense GEMMs therefore holds the clock at which N k f^3 meets its TDP. Between two siblings (same
// vendor and architecture family, and the same tensor work per unit per clock, so that GeForce parts, whose
// fp32-accumulate tensor cores run at half the professional parts' rate, are not compared with those) the held
// clocks stand in the ratio
//   f_D / f_R = (TDP_D / TDP_R x N_R k_R / (N_D k_D)) ^ (1/3),
// and as a fraction of its own spec-sheet peak (which scales with its boost clock) D reaches
//   e_D = e_R x (f_D / f_R) x (boost_R / boost_D),
// where e_R is the sibling's measured large-GEMM rate over its peak. Check on two measured siblings: the A100 SXM4 80GB
// (400 W) reaches 0.869 of its 312 TFLOP/s peak, which predicts 0.869 x (300 / 400)^(1/3) = 0.790 for the 300 W A100
// PCIe 80GB; the same maximum-achievable-matmul table (stas00/ml-engineering) measured 0.811.
// A device whose catalog entry lacks a boost clock gets the one its peak implies at the sibling's work per unit per
// clock (the H100 NVL: 835.5 TFLOP/s over 132 SMs at the H100 SXM's 989.4 TFLOP/s / 132 SMs / 1,980 MHz = 1.67 GHz).
// A device is never given a better fraction than its best measured sibling: one with more power per unit than that
// sibling would hold a higher clock, which nothing measured shows (the GeForce siblings measure at or above their
// rated peak, RTX 3090 1.08 and RTX 4090 1.01: the cards with more power per SM than them are capped there).
// The clock a device's tensor cores hold against its best measured sibling's is that sibling's fraction over the
// device's own (measured or derived): the same kernels on the same architecture, at the clock each one's power
// allows. Devices whose own clock under load is measured (a sustained clock, an SGEMM) keep that one.
// Used as assumptions().power_clock_exponent and assumptions().sibling_work_ratio_tolerance
// (src/core/assumptions.hpp, overridable with --assumptions).
#include <algorithm>
#include <cmath>

#include "core/assumptions.hpp"
#include "core/device.hpp"

namespace hwplan {
namespace {

// The measured large-GEMM fraction of the device's 16-bit peak (bf16, else fp16, each against its own peak).
double measured16_fraction(const Device& d) {
  for (Precision p : {Precision::kBf16, Precision::kFp16}) {
    auto it = d.measured_matmul_flops.find(p);
    if (it != d.measured_matmul_flops.end() && it->second > 0 && d.peak(p) > 0) return it->second / d.peak(p);
  }
  return 0;
}

// What the power model needs: the power limit, the compute units and a 16-bit tensor peak, for one device as the
// framework sees it (a package split into several devices shares one limit: left out); a measured sibling needs its
// boost clock too.
bool has_power_facts(const Device& d) {
  return d.tdp_w > 0 && d.compute_units.value_or(0) > 0 && peak16(d) > 0 && !d.architecture_family.empty() &&
         d.devices_per_package == 1;
}
bool has_boost(const Device& d) { return d.boost_clock_mhz.value_or(0) > 0; }

// 16-bit tensor work per compute unit per clock (FLOP).
double work_per_unit_clock(const Device& d) { return peak16(d) / (*d.compute_units * *d.boost_clock_mhz * 1e6); }

// The boost clock the device's peak assumes, MHz: the catalog's, or, where the catalog has none, the one its peak
// implies if it does the sibling's work per unit per clock (its peak / (units x that work)).
double boost_mhz(const Device& d, const Device& sibling) {
  if (has_boost(d)) return *d.boost_clock_mhz;
  return peak16(d) / (*d.compute_units * work_per_unit_clock(sibling)) / 1e6;
}

// Same vendor and family, and the same tensor work per unit per clock within the tolerance; for a device without a
// boost clock, a clock implied by the sibling's work that lies within the tolerance of the sibling's boost clock.
bool siblings(const Device& d, const Device& r) {
  if (d.vendor != r.vendor || d.architecture_family != r.architecture_family) return false;
  const double ratio = has_boost(d) ? work_per_unit_clock(d) / work_per_unit_clock(r) : boost_mhz(d, r) / *r.boost_clock_mhz;
  const double tolerance = assumptions().sibling_work_ratio_tolerance;
  return ratio < tolerance && ratio > 1 / tolerance;
}

}  // namespace

double peak16(const Device& d) {
  const double bf16 = d.peak(Precision::kBf16);
  return bf16 > 0 ? bf16 : d.peak(Precision::kFp16);
}

bool own_clock_measured(const Device& d) {
  if (d.sustained_clock_mhz && d.boost_clock_mhz && *d.boost_clock_mhz > 0) return true;
  return d.measured_matmul_flops.count(Precision::kFp32) != 0 && !d.fp32_matrix_flops && d.peak(Precision::kFp32) > 0;
}

void derive_sibling_gemm(std::vector<Device>& devices) {
  struct Derived {
    double fraction = 0;
    std::string reference;
    bool capped = false;
    double clock = 1.0;
    std::string clock_reference;
  };
  std::vector<Derived> out(devices.size());
  const double exponent = assumptions().power_clock_exponent;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Device& d = devices[i];
    if (!has_power_facts(d) || own_clock_measured(d)) continue;
    const double own = measured16_fraction(d);
    double best = 0, cap = 0;  // the best power-scaled estimate; the best measured sibling's own fraction
    std::string best_reference, cap_reference;
    for (std::size_t j = 0; j < devices.size(); ++j) {
      const Device& r = devices[j];
      const double er = j == i ? 0 : measured16_fraction(r);
      if (er <= 0 || !has_power_facts(r) || !has_boost(r) || !siblings(d, r)) continue;
      if (er > cap) {
        cap = er;
        cap_reference = r.id;
      }
      const double work_ratio = has_boost(d) ? work_per_unit_clock(r) / work_per_unit_clock(d) : 1.0;
      const double held =
          std::pow(d.tdp_w / r.tdp_w * static_cast<double>(*r.compute_units) / *d.compute_units * work_ratio, 1 / exponent);
      const double ed = er * held * *r.boost_clock_mhz / boost_mhz(d, r);
      if (ed > best) {
        best = ed;
        best_reference = r.id;
      }
    }
    if (cap <= 0) continue;
    Derived& o = out[i];
    const double e = own > 0 ? own : std::min(best, cap);
    if (own <= 0) {
      o.fraction = e;
      o.capped = best >= cap;
      o.reference = o.capped ? cap_reference : best_reference;
    }
    if (e < cap) {
      o.clock = e / cap;
      o.clock_reference = cap_reference;
    }
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    devices[i].sibling_matmul_fraction = out[i].fraction;
    devices[i].sibling_matmul_reference = out[i].reference;
    devices[i].sibling_matmul_capped = out[i].capped;
    devices[i].tensor_clock_fraction = out[i].clock;
    devices[i].tensor_clock_reference = out[i].clock_reference;
  }
  // The other tensor formats: a sibling measured in both a format and 16 bits gives the format's rate against the
  // 16-bit one on the same kernels and architecture (the H100's fp8 reaches 0.709 of its peak where its bf16 reaches
  // 0.803: 0.88 of it); a device with its own 16-bit fraction, and none in the format, keeps that ratio.
  for (std::size_t i = 0; i < devices.size(); ++i) {
    Device& d = devices[i];
    d.format_matmul_fraction.clear();
    d.format_matmul_reference.clear();
    const double own16 = measured16_fraction(d) > 0 ? measured16_fraction(d) : d.sibling_matmul_fraction;
    if (own16 <= 0 || !has_power_facts(d)) continue;
    for (Precision p : {Precision::kTf32, Precision::kFp8, Precision::kInt8}) {
      if (d.peak(p) <= 0 || d.measured_matmul_flops.count(p)) continue;
      double ratio = 0;
      std::string reference;
      for (std::size_t j = 0; j < devices.size(); ++j) {
        const Device& r = devices[j];
        auto it = r.measured_matmul_flops.find(p);
        const double r16 = j == i ? 0 : measured16_fraction(r);
        if (it == r.measured_matmul_flops.end() || r16 <= 0 || r.peak(p) <= 0 || !has_power_facts(r) || !has_boost(r) ||
            !siblings(d, r))
          continue;
        const double rr = it->second / r.peak(p) / r16;
        if (ratio == 0 || rr < ratio) {
          ratio = rr;
          reference = r.id;
        }
      }
      if (ratio <= 0) continue;
      d.format_matmul_fraction[p] = std::min(1.0, own16 * ratio);
      d.format_matmul_reference[p] = reference;
    }
  }
}

}  // namespace hwplan
