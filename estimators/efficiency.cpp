#include "estimators/efficiency.hpp"
#include "core/assumptions.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace hwplan {
namespace {

// Defaults by device class, from published measurements (see data/measurements and catalog sources):
// large bf16 GEMMs reach 80-87% of dense peak on A100/H100 (stas00 MAMF table); FP32 SIMT SGEMM reaches
// ~90% of the FP32 peak; STREAM-like kernels reach ~85-90% of DRAM peak on HBM and GDDR parts.
// Used as assumptions().tensor_gemm_efficiency (src/core/assumptions.hpp, overridable with --assumptions).
// Used as assumptions().simt_gemm_efficiency (src/core/assumptions.hpp, overridable with --assumptions).
// Used as assumptions().bandwidth_efficiency (src/core/assumptions.hpp, overridable with --assumptions).

// Large IEEE-fp32 SGEMM (TF32 off) as a fraction of the spec-sheet FP32 peak, per architecture, at clocks the
// card holds. Since Ampere GA10x, NVIDIA's FP32 peak counts two FP32 issues per clock per lane, which SGEMM
// cannot use together with its loads: cuBLAS reaches about two thirds of it. Sources: the crowd-sourced
// torch.mm benchmark database zzc0721/torch-performance-test-data (database.md; best of 1k-10k squares):
// P100 0.90-0.93, V100 SXM2 0.92, RTX 2080 0.92, A100 0.90-0.98, RTX 3090 0.69-0.70, A6000 0.60-0.62, RTX 4090
// 0.66-0.67, H100 SXM 0.78, H200 0.77, RTX 5090 0.64-0.66; siboehm's SGEMM worklog (A6000 cuBLAS 23.25 of 38.7
// TFLOP/s = 0.60). AMD CDNA runs fp32 GEMM on the matrix cores: rocBLAS 37.9 TFLOP/s on an MI210 at 8192
// (ROCm/rocm-libraries issue 9453) = 0.84 of its 45.3 matrix peak; MI325X torch.matmul 130.6 of 163.4 = 0.80
// (ROCm/gpu-operator issue 419), taken for CDNA3.
struct ArchitectureFraction {
  const char* family;
  double fraction;
};
constexpr ArchitectureFraction kSgemmFraction[] = {
    {"pascal", 0.90},       {"volta", 0.92},        {"turing", 0.90},        {"ampere-ga100", 0.94},
    {"ampere-ga10x", 0.65}, {"ampere-ga10b", 0.65}, {"ada", 0.66},           {"hopper", 0.78},
    {"blackwell-gb20x", 0.65}, {"blackwell", 0.78}, {"cdna2", 0.84},         {"cdna3", 0.80},
};

// A kernel's fixed device-side cost (the launch reaching the SMs, blocks ramping up, the tail draining) is work
// done at the GPU's clock: 4 us at the 1.4-1.6 GHz of the GPUs whose step latencies set it (V100, T4, A100,
// MI100) = ~6,000 cycles. At a higher clock it is shorter: 2.4 us on an RTX 4090 at 2.52 GHz. llama.cpp's
// unfused decode (about 1,250 kernels per Llama 7B token) shows it: the time per token left after the weights
// are read is about 2.3 us per kernel on an RTX 4090, 3.4 on an RTX 3090 (1.70 GHz), 4.3 on an A100 PCIe (1.41
// GHz), i.e. 5,800-6,100 cycles each (XiongjieDai/GPU-Benchmarks-on-LLM-Inference, data/measurements). The clock is
// the one the device holds: a power-limited T4 or L4 runs its kernels' cycles slower than its boost clock in a
// GEMM-bound step, but not in a memory-bound one (decode), where it draws less than its limit
// (memory_bound_kernel_overhead_seconds: on the L4, vLLM's batch-1 decode of Qwen2.5-0.5B, about 470 kernels a
// token, was 44% slower than measured with the held clock's floor and is 22% slower with the boost clock's).
// Used as assumptions().kernel_overhead_cycles (src/core/assumptions.hpp, overridable with --assumptions).
// Used as assumptions().default_kernel_overhead_seconds (src/core/assumptions.hpp, overridable with --assumptions).

// Devices with no published GEMM measurement and no measured sibling (src/core/device.cpp): large tensor-core GEMMs
// at this fraction of peak, below every measured NVIDIA part (A100 PCIe 0.81, A100 SXM 0.87, H100 SXM 0.80 in the
// catalog's measured_matmul_tflops) and stated in the output as an assumption.
// Used as assumptions().unmeasured_tensor_gemm_efficiency (src/core/assumptions.hpp, overridable with --assumptions).

// The published fraction for the device's architecture family, if the table has it.
std::optional<double> table_sgemm_fraction(const Device& d) {
  for (const auto& a : kSgemmFraction)
    if (d.architecture_family == a.family) return a.fraction;
  return std::nullopt;
}

}  // namespace

double sgemm_fraction(const Device& d) { return table_sgemm_fraction(d).value_or(assumptions().simt_gemm_efficiency); }

// The compute clock a device holds under dense GEMMs, as a fraction of the boost clock its peaks assume: a
// published sustained clock when the catalog has one; else what a published SGEMM measurement of this very
// device implies against its architecture's unthrottled fraction (T4, L4 at 70 W: the power limit, not the
// kernels, holds them down); else the boost clock.
double sustained_clock_fraction(const Device& d) {
  if (!own_clock_measured(d)) return 1.0;
  if (d.sustained_clock_mhz && d.boost_clock_mhz && *d.boost_clock_mhz > 0)
    return std::clamp(*d.sustained_clock_mhz / *d.boost_clock_mhz, 0.1, 1.0);
  return std::clamp(d.measured_matmul_flops.at(Precision::kFp32) / d.peak(Precision::kFp32) / sgemm_fraction(d), 0.1, 1.0);
}

namespace {

double interpolate_log(const std::vector<CurvePoint>& curve, double size) {
  if (curve.empty()) return 0;
  if (size <= curve.front().size) return curve.front().achieved * (size / curve.front().size);
  if (size >= curve.back().size) return curve.back().achieved;
  for (std::size_t i = 1; i < curve.size(); ++i) {
    if (size <= curve[i].size) {
      double x0 = std::log(curve[i - 1].size), x1 = std::log(curve[i].size);
      double t = (std::log(size) - x0) / (x1 - x0);
      return curve[i - 1].achieved + t * (curve[i].achieved - curve[i - 1].achieved);
    }
  }
  return curve.back().achieved;
}

// Output tiles of a GEMM spread over the compute units in waves; a partial last wave idles the rest.
// cuBLAS-style kernels choose among tile sizes; smaller tiles fill the machine better but run each SM less
// efficiently (less operand reuse). Returns the best (utilisation x tile efficiency).
double shape_efficiency(const DeviceRates& r, double m, double n, double k, double batch, bool split_k) {
  struct Tile {
    double tm, tn, eff;
  };
  // The last entries are the skinny-M kernels (GEMV / split-K) used for decode-sized problems: the smallest
  // tensor-core MMA is 16 rows, so M = 1 uses 1/16 of the matrix units.
  static constexpr Tile kTensorTiles[] = {{256, 128, 1.0}, {128, 128, 0.97}, {128, 64, 0.88},
                                          {64, 64, 0.72},  {16, 128, 0.5}};
  static constexpr Tile kSimtTiles[] = {{128, 128, 1.0}, {128, 64, 0.95}, {64, 64, 0.85}, {32, 32, 0.6}, {1, 128, 0.5}};
  const Tile* tiles = r.tensor_cores ? kTensorTiles : kSimtTiles;
  // Short reductions pay the pipeline prologue/epilogue once per tile.
  double k_eff = k / (k + 32.0);
  if (r.compute_units <= 0) return k_eff;
  double best = 0;
  for (int i = 0; i < 5; ++i) {
    const Tile& t = tiles[i];
    double count = std::ceil(m / t.tm) * std::ceil(n / t.tn) * batch;
    double waves = std::ceil(count / r.compute_units);
    double util = count / (waves * r.compute_units);
    // The skinny kernels spread a long reduction over the compute units a few output tiles would leave idle
    // (stream-K / split-K, as cuBLAS and hipBLASLt do for decode-shaped GEMMs), in slices at least 256 deep, the work
    // balanced across the units rather than in whole waves. Not for callers that split K themselves (implicit_gemm).
    if (split_k && i == 4 && count < r.compute_units)
      util = std::min(1.0, count * std::max(1.0, std::floor(k / 256)) / r.compute_units);
    // Tiles larger than the problem waste work on padding.
    double pad = (m * n) / (std::ceil(m / t.tm) * t.tm * std::ceil(n / t.tn) * t.tn);
    best = std::max(best, util * t.eff * pad);
  }
  return best * k_eff;
}

}  // namespace

namespace {
bool has_rate(const Device& d, Precision p) {
  return d.peak(p) > 0 || (p == Precision::kFp32 && d.fp32_matrix_flops.has_value());
}
}  // namespace

PrecisionChoice effective_precision(const Device& d, Precision requested) {
  PrecisionChoice c;
  c.requested = c.effective = requested;
  if (has_rate(d, requested)) return c;
  auto pick = [&](std::initializer_list<Precision> chain, const std::string& why) {
    for (Precision p : chain)
      if (has_rate(d, p)) {
        c.effective = p;
        c.reason = std::string(to_string(requested)) + " is not supported by " + d.name + ": runs in " + to_string(p) +
                   " (" + why + ")";
        return true;
      }
    return false;
  };
  switch (requested) {
    case Precision::kFp16:
      if (pick({Precision::kBf16}, "the 16-bit format it has; bf16 needs no loss scaling")) return c;
      break;
    case Precision::kBf16:
      if (pick({Precision::kFp16}, "the 16-bit format it has; training in fp16 needs loss scaling")) return c;
      break;
    case Precision::kTf32:
      if (pick({Precision::kFp32}, "no TF32 matrix mode")) return c;
      break;
    case Precision::kFp8:
      if (pick({Precision::kBf16, Precision::kFp16}, "no fp8 matrix units: 16-bit GEMMs")) return c;
      break;
    case Precision::kInt8:
    case Precision::kInt4:
    case Precision::kFp4:
      if (pick({Precision::kFp16, Precision::kBf16, Precision::kInt8}, "no such integer GEMMs: weights dequantised"))
        return c;
      break;
    default:
      break;
  }
  if (requested == Precision::kFp32 || requested == Precision::kTf32 || requested == Precision::kFp64) {
    // Split-bf16 emulation: each fp32 operand is a sum of bf16 parts; 3 products keep fp32-like accuracy for
    // deep learning (XLA precision=HIGH on TPU; JAX documents DEFAULT 1 pass, HIGH 3, HIGHEST 6 passes).
    if (pick({Precision::kBf16}, "no fp32 units: emulated with three bf16 passes")) {
      c.passes = 3;
      return c;
    }
    // fp16-only engines (the Apple Neural Engine) cannot emulate fp32: Core ML casts the model to fp16.
    if (pick({Precision::kFp16}, "no fp32 units: the model is cast to fp16")) return c;
  }
  // Nothing of the kind: a 16-bit format if any, else the integer units (int8-only accelerators such as the
  // Edge TPU or a phone NPU run only models quantised to int8).
  if (pick({Precision::kBf16, Precision::kFp16, Precision::kFp32}, "nearest format it has")) return c;
  if (pick({Precision::kInt8, Precision::kInt4}, "integer-only accelerator: the model must be quantised to int8")) return c;
  c.reason = d.name + " lists no compute rate at all";
  return c;
}

DeviceRates device_rates(const Device& device, Precision precision, const Profile* profile) {
  DeviceRates r;
  r.bandwidth = device.memory_bandwidth_bytes_per_s;
  r.bandwidth_efficiency = assumptions().bandwidth_efficiency;
  if (device.measured_bandwidth_bytes_per_s) {
    r.bandwidth = *device.measured_bandwidth_bytes_per_s;
    r.bandwidth_efficiency = 1;
  }
  r.compute_units = device.compute_units.value_or(0);
  const double clock = sustained_clock_fraction(device);
  r.simt_flops = device.peak(Precision::kFp32) * clock;
  const PrecisionChoice choice = effective_precision(device, precision);
  if (choice.effective == Precision::kFp32) {
    if (device.fp32_matrix_flops) {
      r.matrix_flops = *device.fp32_matrix_flops;
      r.tensor_cores = true;
      // CDNA fp32 GEMMs run on the matrix cores: the published rocBLAS fraction where the table has the family.
      r.gemm_efficiency = table_sgemm_fraction(device).value_or(assumptions().tensor_gemm_efficiency);
    } else {
      r.matrix_flops = device.peak(Precision::kFp32);
      r.tensor_cores = false;
      r.gemm_efficiency = sgemm_fraction(device);
    }
  } else {
    // Matrix units in the effective format (a fallback or an emulation divides the peak by its passes). A 16-bit
    // format whose peak is no higher than the fp32 vector peak has no matrix units behind it: it runs on the vector ALUs
    // (the P100's fp16 with fp32 accumulation, Apple GPUs' simdgroup matrices), whose kernels tile without the
    // 16-row MMA granularity, so a batch of 17 is not priced as two padded tensor-core tiles.
    r.matrix_flops = device.peak(choice.effective) / choice.passes;
    const bool half = choice.effective == Precision::kFp16 || choice.effective == Precision::kBf16;
    r.tensor_cores = !half || r.matrix_flops > 1.05 * device.peak(Precision::kFp32);
    r.gemm_efficiency = assumptions().unmeasured_tensor_gemm_efficiency;
    r.gemm_efficiency_assumed = true;
  }
  auto measured = choice.passes == 1 ? device.measured_matmul_flops.find(choice.effective) : device.measured_matmul_flops.end();
  const bool sixteen_bit = choice.effective == Precision::kBf16 || choice.effective == Precision::kFp16;
  if (measured != device.measured_matmul_flops.end() && r.matrix_flops > 0) {
    // A measurement already includes the clock the device held while measured.
    r.gemm_efficiency = std::min(1.0, measured->second / r.matrix_flops);
    r.gemm_efficiency_assumed = false;
  } else if (auto f = device.format_matmul_fraction.find(choice.effective);
             !sixteen_bit && choice.passes == 1 && f != device.format_matmul_fraction.end() && r.tensor_cores) {
    // Its own 16-bit fraction times the format's ratio to it on a measured sibling (src/core/device.cpp).
    r.gemm_efficiency = f->second;
    r.gemm_efficiency_assumed = false;
    r.gemm_format_sibling = device.format_matmul_reference.at(choice.effective);
  } else if (sixteen_bit && choice.passes == 1 && device.sibling_matmul_fraction > 0) {
    // A measured sibling's fraction at this device's power budget (src/core/device.cpp); it includes the held clock.
    r.gemm_efficiency = std::min(1.0, device.sibling_matmul_fraction);
    r.gemm_efficiency_assumed = false;
    r.gemm_sibling = device.sibling_matmul_reference;
  } else {
    r.gemm_efficiency *= clock;
    // Tensor-core formats without a measurement (TF32, FP8, INT8) run at the clock the 16-bit GEMMs hold: FP32 and
    // FP64 run on other units (vector, or CDNA's fp32 matrix path with its own table), an emulation in passes is
    // priced by its passes.
    const bool tensor_format = choice.effective != Precision::kFp32 && choice.effective != Precision::kFp64;
    if (r.tensor_cores && tensor_format && choice.passes == 1) {
      r.gemm_efficiency *= device.tensor_clock_fraction;
      r.tensor_clock_fraction = device.tensor_clock_fraction;
      r.tensor_clock_reference = device.tensor_clock_reference;
    }
  }
  r.clock_fraction = clock;
  r.nhwc_convolutions = device.vendor == "nvidia";
  r.fused_dequant_gemm = device.vendor == "nvidia" && device.architecture_family != "pascal" &&
                         device.architecture_family != "volta" && device.architecture_family != "turing";
  // FlashAttention-2, PyTorch SDPA's flash backend, xformers and Triton kernels use the warp-level mma.sync of
  // Ampere; Hopper's full rate needs wgmma issued asynchronously from TMA-fed shared memory (FlashAttention-3,
  // cuDNN), and datacenter Blackwell's its tcgen05 MMA. Consumer Blackwell (GB20x) has neither: mma.sync is native.
  if (device.architecture_family == "hopper" || device.architecture_family == "blackwell")
    r.portable_attention_fraction = assumptions().portable_attention_fraction;
  // FlashAttention-2 needs sm80+ (PyTorch's SDPA flash backend too): Pascal, Volta and Turing run the CUTLASS
  // memory-efficient kernel instead, whatever the stack.
  if (device.vendor == "nvidia" && (device.architecture_family == "pascal" || device.architecture_family == "volta" ||
                                    device.architecture_family == "turing"))
    r.fused_attention_fraction = assumptions().memory_efficient_attention_fraction;
  const bool clocked = device.boost_clock_mhz && *device.boost_clock_mhz > 0;
  r.kernel_overhead_seconds = clocked ? assumptions().kernel_overhead_cycles / (*device.boost_clock_mhz * 1e6 * clock)
                                      : assumptions().default_kernel_overhead_seconds;
  r.memory_bound_kernel_overhead_seconds = clocked ? assumptions().kernel_overhead_cycles / (*device.boost_clock_mhz * 1e6)
                                                   : assumptions().default_kernel_overhead_seconds;
  // A device that streams its parameters (Device::streams_parameters) lists its host link's rate as its bandwidth:
  // what its layers read and write stays in on-chip SRAM, whose bandwidth is not published and is not what bounds a
  // systolic array fed from it. Its traffic is taken at one byte per operation of the matrix unit, so it never
  // outweighs an 8-bit layer's arithmetic; the parameters it cannot cache cross the host link (estimators/inference.cpp).
  if (device.streams_parameters() && r.matrix_flops > 0) r.bandwidth = r.matrix_flops;
  if (profile) {
    auto it = profile->gemm.find(precision);
    if (it != profile->gemm.end() && !it->second.empty()) r.gemm_curve = &it->second;
    if (!profile->bandwidth.empty()) r.bandwidth_curve = &profile->bandwidth;
    if (profile->kernel_launch_seconds > 0)
      r.kernel_overhead_seconds = r.memory_bound_kernel_overhead_seconds = profile->kernel_launch_seconds;
  }
  return r;
}

namespace {

// A profile's curves are what a kernel of each size achieved, its fixed cost (launch, ramp-up, tail) included;
// the estimators add that cost per kernel themselves (kernel_overhead_seconds, the profile's kernel_launch_us),
// so the rate they divide by is the one net of it: size / (measured time - floor). Without this a small kernel
// paid its floor twice (on the H200, 3 x 21 KiB triads measured 5 us and were predicted 15.5 us). Where the
// floor is nearly all of a measured time, the work keeps at least kMinWorkShare of it, so that the rate stays
// finite; the prediction is then at most that share above the measurement.
constexpr double kMinWorkShare = 0.1;

double net_of_floor(double raw_rate, double size, double floor_seconds) {
  if (raw_rate <= 0 || size <= 0 || floor_seconds <= 0) return raw_rate;
  const double measured = size / raw_rate;
  return size / std::max(measured - floor_seconds, kMinWorkShare * measured);
}

}  // namespace

double memory_bound_tokens(const DeviceRates& r, double weight_bytes) {
  const double bandwidth = r.bandwidth * r.bandwidth_efficiency;
  if (bandwidth <= 0) return 0;
  return r.matrix_flops * r.gemm_efficiency * weight_bytes / (2 * bandwidth);
}

DeviceRates rates_at_load(const DeviceRates& r, double tokens, double weight_bytes) {
  DeviceRates out = r;
  if (tokens < memory_bound_tokens(r, weight_bytes)) out.kernel_overhead_seconds = r.memory_bound_kernel_overhead_seconds;
  return out;
}

double gemm_efficiency(const DeviceRates& r, double m, double n, double k, double batch, bool split_k) {
  if (r.gemm_curve) {
    double flops = 2 * m * n * k * batch;
    return net_of_floor(interpolate_log(*r.gemm_curve, flops), flops, r.kernel_overhead_seconds) / r.matrix_flops;
  }
  return r.gemm_efficiency * shape_efficiency(r, m, n, k, batch, split_k);
}

double achieved_bandwidth(const DeviceRates& r, double bytes) {
  if (r.bandwidth_curve)
    return std::max(1.0, net_of_floor(interpolate_log(*r.bandwidth_curve, bytes), bytes, r.kernel_overhead_seconds));
  return r.bandwidth * r.bandwidth_efficiency;
}

double gemm_seconds(const DeviceRates& r, double m, double n, double k, double batch, double e, double we) {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0;
  if (we < 0) we = e;
  double flops = 2 * m * n * k * batch;
  double bytes = (m * k * e + k * n * we + m * n * e) * batch;
  double eff = std::max(1e-3, gemm_efficiency(r, m, n, k, batch));
  // Weight-only quantized weights at decode-sized M run fused dequantize-and-multiply kernels built for it (Marlin,
  // the int4 kernel vLLM, SGLang and TensorRT-LLM-class engines use on Ampere and later; not plain Transformers'
  // bitsandbytes or AutoGPTQ kernels: inference_rates): each weight tile is read once for all rows, activations stay
  // in L2 and registers, and the tensor cores run at the rate a large GEMM gets, on the rows padded to the 16-row MMA
  // (NVIDIA from Ampere on: the kernels need compute capability 8.0). Its README: "close to ideal (4x) speedups up
  // to batchsizes of 16-32 tokens" (IST-DASLab/marlin); priced with the skinny tile of
  // a 16-bit GEMM, an int4 decode step of 17-32 sequences came out compute-bound at nearly twice the step of 16. Up
  // to M = 1024; a longer prefill keeps the 16-bit GEMM's tile rate, which the large tiles bring close to it anyway.
  if (we < e && r.tensor_cores && r.fused_dequant_gemm && !r.gemm_curve && m <= 1024) {
    const double padded = std::ceil(m / 16) * 16;
    eff = std::max(eff, r.gemm_efficiency * m / padded * k / (k + 32.0));
  }
  double rate = r.matrix_flops * eff;
  // A skinny GEMM (decode, M of a few rows) wastes most of a tensor-core tile; GEMV kernels run it on the
  // FP32 vector units instead when that is faster.
  if (m < 16 && r.tensor_cores && !r.gemm_curve) rate = std::max(rate, r.simt_flops * assumptions().simt_gemm_efficiency);
  double compute = rate > 0 ? flops / rate : 0;
  double memory = bytes / achieved_bandwidth(r, bytes);
  return std::max(compute, memory) + r.kernel_overhead_seconds;
}

double memory_seconds(const DeviceRates& r, double bytes) {
  if (bytes <= 0) return 0;
  return bytes / achieved_bandwidth(r, bytes) + r.kernel_overhead_seconds;
}

}  // namespace hwplan
