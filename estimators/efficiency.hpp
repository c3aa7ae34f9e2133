// What a device achieves, as opposed to its datasheet peak: GEMM throughput by shape (wave quantisation over the
// compute units, short-K pipelines), bandwidth efficiency, and per-kernel overhead. A calibration profile, when
// given, replaces the default curves with measured ones.
#pragma once

#include <string>

#include "core/device.hpp"
#include "core/precision.hpp"
#include "core/profile.hpp"

namespace hwplan {

struct DeviceRates {
  double matrix_flops = 0;           // peak GEMM FLOP/s in the compute precision
  double gemm_efficiency = 0.8;      // fraction of matrix_flops that large, well-shaped GEMMs reach
  double bandwidth = 0;              // DRAM bytes/s (peak)
  double bandwidth_efficiency = 0.85;
  double kernel_overhead_seconds = 4e-6;  // launch + ramp-up/tail of one kernel, at the clock held under dense GEMMs
  // The same floor in memory-bound work (decode): the device draws less than its power limit there and runs at its
  // boost clock, so a power-limited part (T4, L4) pays fewer microseconds per kernel than in a GEMM-bound step.
  double memory_bound_kernel_overhead_seconds = 4e-6;
  int compute_units = 0;             // SMs / CUs (0 = unknown: no wave quantisation)
  bool tensor_cores = true;          // GEMM runs on matrix units (tile 128x128) rather than SIMT (128x64)
  // cuDNN's tensor-core convolutions are NHWC-native: NCHW tensors are transposed around each one (NVIDIA only;
  // MIOpen and the other vendors' libraries take NCHW as it is).
  bool nhwc_convolutions = false;
  double simt_flops = 0;             // FP32 vector units: skinny GEMMs (GEMV) may run there instead
  const std::vector<CurvePoint>* gemm_curve = nullptr;       // measured, from a profile
  const std::vector<CurvePoint>* bandwidth_curve = nullptr;  // measured, from a profile
  double attention_efficiency = 0.7;  // fused flash-attention kernels vs GEMM efficiency
  // FlashAttention-2-class kernels' rate / the architecture's native attention kernels' (below 1 where the full
  // tensor-core rate needs asynchronous warp-group MMA that those kernels do not issue: Hopper, datacenter Blackwell).
  double portable_attention_fraction = 1.0;
  // Fused attention on a GPU without FlashAttention-2 (NVIDIA before Ampere): the memory-efficient kernel's rate / FA2's.
  double fused_attention_fraction = 1.0;
  double clock_fraction = 1.0;        // sustained / boost clock under dense GEMMs
  // Fused dequantize-and-multiply kernels for weight-only quantized GEMMs that keep the tensor cores at the large-GEMM
  // rate at decode-sized M (Marlin and its successors: NVIDIA, compute capability 8.0 and later).
  bool fused_dequant_gemm = false;
  bool gemm_efficiency_assumed = false;  // no published GEMM measurement: the conservative default was used
  // No published measurement of this device: its large-GEMM fraction is a measured sibling's at this device's power
  // budget (the sibling's id; empty otherwise). Device::sibling_matmul_fraction says how.
  std::string gemm_sibling;
  // A tensor format without a measurement on this device: its own 16-bit fraction times the format's ratio to 16 bits
  // on this sibling (Device::format_matmul_fraction); empty otherwise.
  std::string gemm_format_sibling;
  // The tensor cores' held clock against that of the measured sibling holding the highest
  // (Device::tensor_clock_fraction, tensor_clock_reference), applied to tensor formats without a measurement.
  double tensor_clock_fraction = 1.0;
  std::string tensor_clock_reference;
};

// The format a device actually computes a requested precision in. A device that lacks the format runs the
// nearest real format of the same width (fp16 <-> bf16), tf32 as fp32, fp8 in 16 bits, int8/int4 GEMMs in 16
// bits (weights dequantised); fp32 without fp32 units runs as three passes of the 16-bit format (split-bf16,
// what XLA's precision=HIGH does on TPU); a device that has only integer units runs int8 (the model must be
// quantised to run at all). `passes` divides the peak; `reason` is empty when nothing was substituted.
struct PrecisionChoice {
  Precision requested = Precision::kBf16;
  Precision effective = Precision::kBf16;
  double passes = 1;
  std::string reason;
  bool substituted() const { return !reason.empty(); }
};
PrecisionChoice effective_precision(const Device& device, Precision requested);

// Large-SGEMM fraction of the FP32 peak for the device's architecture, and the sustained clock fraction.
double sgemm_fraction(const Device& device);
double sustained_clock_fraction(const Device& device);

// New tokens per step below which a transformer step is memory-bound: its GEMMs read every weight once for fewer
// FLOPs than the matrix units do in the time the read takes (weight_bytes per parameter, 2 FLOPs per parameter and
// token).
double memory_bound_tokens(const DeviceRates& r, double weight_bytes);
// The rates of a step over `tokens` new tokens: below memory_bound_tokens a power-limited device holds its boost
// clock, and its kernels' fixed cost is memory_bound_kernel_overhead_seconds.
DeviceRates rates_at_load(const DeviceRates& r, double tokens, double weight_bytes);

// Rates of `device` when computing in `precision`. fp32 uses the non-tensor FP32 units (or IEEE-fp32 matrix
// units where they exist, AMD CDNA), as PyTorch does by default; fp16/bf16/tf32/fp8 use the matrix units.
DeviceRates device_rates(const Device& device, Precision precision, const Profile* profile = nullptr);

// Time of a (batched) GEMM C[m x n] = A[m x k] B[k x n], `batch` independent instances, elements of
// `bytes_per_element`; `weight_bytes_per_element` for the B operand when it is stored differently (quantised).
double gemm_seconds(const DeviceRates& rates, double m, double n, double k, double batch, double bytes_per_element,
                    double weight_bytes_per_element = -1);
// Fraction of peak a GEMM of this shape reaches (for reports and the roofline plot).
// `split_k`: a skinny GEMM may spread its reduction over idle compute units (stream-K); false where the caller splits
// K itself (implicit_gemm's convolutions).
double gemm_efficiency(const DeviceRates& rates, double m, double n, double k, double batch, bool split_k = true);
// Time of a memory-bound kernel moving `bytes`.
double memory_seconds(const DeviceRates& rates, double bytes);
// Achieved bandwidth for a transfer of this size (profile curve, else peak x efficiency).
double achieved_bandwidth(const DeviceRates& rates, double bytes);

}  // namespace hwplan
