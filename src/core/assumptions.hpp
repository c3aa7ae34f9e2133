// The physics constants every estimate rests on, in one place: each with a name, a unit, a range and where it
// comes from (the derivations are in the comments of the estimator that uses it). They are read through
// assumptions(); `hwplan assumptions` lists them and `--assumptions FILE` (or HWPLAN_ASSUMPTIONS) overrides any of
// them for one run, without a rebuild.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hwplan {

struct Assumptions {
  // Matrix units and memory (estimators/efficiency.cpp).
  double tensor_gemm_efficiency = 0.80;             // large tensor-core GEMMs / dense peak, class default
  double unmeasured_tensor_gemm_efficiency = 0.70;  // the same for devices with no published GEMM measurement
  // A device without a GEMM measurement takes a measured sibling's at its own power budget (src/core/device.cpp):
  double power_clock_exponent = 3.0;          // dynamic power ~ f^n under DVFS (f V^2 with V rising with f: 3)
  double sibling_work_ratio_tolerance = 1.25;  // siblings' 16-bit tensor work per unit per clock differs by less
  double simt_gemm_efficiency = 0.90;               // FP32 SGEMM on the vector units / FP32 peak, class default
  double bandwidth_efficiency = 0.85;               // STREAM-like kernels / DRAM peak
  double kernel_overhead_cycles = 6000;             // a kernel's device-side floor, in GPU clock cycles
  double default_kernel_overhead_seconds = 4e-6;    // the same for devices whose clock the catalog lacks
  double conv_efficiency = 0.6;                     // convolutions (implicit GEMM) / dense peak
  // FlashAttention-2-class kernels (written for Ampere's synchronous warp-level MMA) on architectures whose full
  // tensor-core rate needs asynchronous warp-group MMA (Hopper, datacenter Blackwell), / the native kernels' rate.
  double portable_attention_fraction = 0.62;
  // NVIDIA GPUs before Ampere (Pascal, Volta, Turing) have no FlashAttention-2: fused attention runs as the
  // memory-efficient (CUTLASS, xFormers-derived) kernel that PyTorch's SDPA and xFormers fall back to, / FA2's rate.
  double memory_efficient_attention_fraction = 0.5;
  double simt_conv_efficiency = 0.78;               // FP32 convolutions on the vector units (Winograd 3x3) / SGEMM rate
  // A network whose convolutions are listed by shape prices each one (estimators/operators.cpp, generic_cost):
  double implicit_gemm_conv_efficiency = 0.85;      // a convolution as an implicit GEMM / a plain GEMM of its shape
  double winograd_speedup = 2.0;                    // FP32 3x3 stride-1 convolutions on the vector units (Winograd)
  double conv_traffic_overlap = 0.0;                // share of a convolution's traffic hidden under its arithmetic
  // Bytes a CNN's normalisation / activation / residual kernels move per byte of the activations training saves
  // (estimators/operators.cpp, generic_cost): training forward and backward, eager and fused inference.
  double cnn_training_forward_passes = 3.5;
  double cnn_training_backward_passes = 6.0;
  double cnn_eager_inference_passes = 3.0;
  double cnn_fused_inference_passes = 1.0;
  double default_forward_kernels = 150;             // kernels per forward pass of a generic network that names none
  // Host and software stack (estimators/stack.cpp).
  double eager_host_seconds_per_kernel = 27e-6;     // eager PyTorch: Python module call + dispatcher + launch
  double compiled_host_seconds_per_kernel = 8e-6;   // torch.compile's wrapper launching its kernels
  double native_host_seconds_per_kernel = 4e-6;     // a C++ engine's cudaLaunchKernel
  // One forward pass of a graph compiled for an NPU, beside its arithmetic and transfers (estimators/stack.cpp):
  double edgetpu_invoke_seconds = 1.8e-3;           // TensorFlow Lite's Edge TPU delegate (Coral)
  double npu_invoke_seconds = 0.23e-3;              // QNN on Qualcomm's Hexagon NPU (Core ML assumed alike)
  double desktop_host_time_ratio = 0.65;            // host time on a desktop CPU / on a GPU server's CPU
  // The host's memory and CPU, for inference layers kept in host memory (--gpu-layers; estimators/stack.cpp
  // typical_host): peak read rates, the share a CPU's matrix-vector products reach, and its matrix rate.
  double desktop_host_memory_gbps = 89.6;           // dual-channel DDR5-5600 (a GeForce card's desktop)
  double server_host_memory_gbps = 307.2;           // one socket of 8-channel DDR5-4800 (a GPU server)
  double host_memory_efficiency = 0.68;             // llama.cpp's CPU decode / the memory's peak
  double desktop_host_matrix_tflops = 2.0;          // a desktop CPU's quantized matrix products (all cores)
  double server_host_matrix_tflops = 4.0;           // one server socket's
  double eager_traffic_factor = 2.0;                // bytes eager 16-bit training moves / the per-op pass counts
  double fused_optimizer_bandwidth_share = 0.66;    // a fused AdamW kernel's bandwidth / a streaming kernel's
  // Links (estimators/comm.cpp, training.cpp).
  double fabric_efficiency = 0.80;                  // NVLink / Infinity Fabric collectives / link peak
  double pcie_efficiency = 0.70;                    // peer-to-peer collectives over PCIe / link peak
  double network_efficiency = 0.85;                 // inter-node collectives / NIC line rate
  double host_link_efficiency = 0.80;               // host <-> device copies (offload, paging) / link peak
  double collective_sms = 16;                       // streaming multiprocessors an overlapped collective holds
  double custom_allreduce_latency_seconds = 5e-6;   // an inference engine's one-kernel all-reduce inside the fabric
  double custom_allreduce_bandwidth_share = 0.2;    // its bus bandwidth / NCCL's over the same fabric
  // Share of a device's nominal memory the driver keeps for itself: what CUDA reports as total is the rest
  // (serve/capacity.cpp, the engines that size their cache from it).
  double driver_reserved_memory_fraction = 0.01;
  // Speed spread of identical devices (fastest to slowest, outliers aside) / the median: a synchronous job of many
  // steps at the pace of its slowest (estimators/training.cpp, slowest_device_slowdown).
  double device_speed_spread = 0.08;
  // Long jobs (estimators/training.cpp).
  double interruptions_per_device_hour = 1.97e-5;   // job interruptions per device-hour
  double restart_seconds = 600;                     // lost per interruption: restart and reload
  double checkpoint_stall_seconds = 20;             // per checkpoint
};

// The active set (the defaults above unless replaced).
const Assumptions& assumptions();
// Replaces the active set: at the start of a run (the CLI) or between calls (the Python module); never while an
// estimate is running on another thread.
void set_assumptions(const Assumptions& a);
// The overridden ones in words ("bandwidth_efficiency 0.7 (default 0.85)"); empty with the defaults. Every estimate
// carries it as a warning.
const std::string& assumptions_note();

struct AssumptionInfo {
  std::string name;
  double value = 0;
  double default_value = 0;
  std::string unit;
  double min = 0, max = 0;  // the accepted range
  std::string source;       // where the default comes from, in words
};
std::vector<AssumptionInfo> describe_assumptions(const Assumptions& a);
// Sets one by name; false when no assumption has that name. The value is not range-checked here (the loader does).
bool set_assumption(Assumptions& a, const std::string& name, double value);
// The assumption of that name (its default value, unit, range, source); none when no assumption has it.
std::optional<AssumptionInfo> find_assumption(const std::string& name);
std::vector<std::string> assumption_names();

}  // namespace hwplan
