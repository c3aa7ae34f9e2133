// Fuzzes the calibration-profile loader and the curve interpolation that consumes it.
#include "estimators/efficiency.hpp"
#include "fuzz_common.hpp"
#include "io/profile_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwplan;
  Profile p;
  try {
    p = io::parse_profile(fuzz::text_of(data, size), "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  }
  Device d;
  d.memory_bandwidth_bytes_per_s = 1e12;
  d.peak_flops[Precision::kFp32] = 1e13;
  d.peak_flops[Precision::kBf16] = 1e14;
  for (Precision prec : {Precision::kFp32, Precision::kBf16}) {
    DeviceRates r = device_rates(d, prec, &p);
    fuzz::require_finite(gemm_seconds(r, 1024, 1024, 1024, 1, 2));
    fuzz::require_finite(gemm_seconds(r, 1, 4096, 4096, 1, 2));
    fuzz::require_finite(memory_seconds(r, 1e8));
  }
  // Round trip: what we write, we read back.
  io::parse_profile(io::profile_to_yaml(p), "roundtrip.yaml");
  return 0;
}
