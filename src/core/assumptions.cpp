#include "core/assumptions.hpp"

#include <cstdio>

namespace hwplan {
namespace {

struct Entry {
  const char* name;
  double Assumptions::*member;
  const char* unit;
  double min, max;
  const char* source;
};

// Sources in short; the estimator that uses each one carries the derivation.
constexpr Entry kEntries[] = {
    {"tensor_gemm_efficiency", &Assumptions::tensor_gemm_efficiency, "fraction", 0.05, 1,
     "large bf16 GEMMs reach 80-87% of the dense peak on A100/H100 (stas00/ml-engineering MAMF table); replaced by a "
     "device's published measurement where the catalog has one"},
    {"unmeasured_tensor_gemm_efficiency", &Assumptions::unmeasured_tensor_gemm_efficiency, "fraction", 0.05, 1,
     "below every measured NVIDIA part (A100 PCIe 0.81, A100 SXM 0.87, H100 SXM 0.80): never better than a measured device"},
    {"power_clock_exponent", &Assumptions::power_clock_exponent, "exponent", 1, 4,
     "dynamic power f C V^2 with the voltage rising about in step with the clock over the DVFS range; checked on the "
     "A100 SXM4 80GB (400 W) and PCIe 80GB (300 W): the cube root of the power ratio predicts 0.790 of peak for the "
     "PCIe card from the SXM4's 0.869, the MAMF table measured 0.811"},
    {"sibling_work_ratio_tolerance", &Assumptions::sibling_work_ratio_tolerance, "ratio", 1, 2,
     "16-bit tensor work per compute unit per clock within this ratio counts as the same class: GeForce GA10x/AD10x "
     "tensor cores run fp32-accumulate at half the professional parts' rate (a ratio of 2), so they are not compared"},
    {"simt_gemm_efficiency", &Assumptions::simt_gemm_efficiency, "fraction", 0.05, 1,
     "FP32 SGEMM reaches ~90% of the FP32 peak on Pascal/Volta/Turing/GA100 (zzc0721/torch-performance-test-data); "
     "per-architecture fractions replace it"},
    {"bandwidth_efficiency", &Assumptions::bandwidth_efficiency, "fraction", 0.05, 1,
     "STREAM-like kernels reach 85-90% of the DRAM peak on HBM and GDDR parts"},
    {"kernel_overhead_cycles", &Assumptions::kernel_overhead_cycles, "cycles", 0, 1e6,
     "4 us at the ~1.5 GHz of V100/T4/A100/MI100 (NeuSight step latencies); llama.cpp's unfused decode implies "
     "5,800-6,100 cycles per kernel on RTX 3090/4090 and A100"},
    {"default_kernel_overhead_seconds", &Assumptions::default_kernel_overhead_seconds, "s", 0, 1e-3,
     "the 4 us above, for devices without a clock in the catalog"},
    {"conv_efficiency", &Assumptions::conv_efficiency, "fraction", 0.05, 1,
     "cuDNN implicit-GEMM convolutions of ResNet-class networks / dense peak, the whole forward pass at once; used "
     "when a generic model lists no convolutions (a listed one is priced by its shape)"},
    {"portable_attention_fraction", &Assumptions::portable_attention_fraction, "fraction", 0.05, 1,
     "H100 SXM, head dim 128, 4k-8k tokens (Shah et al. 2024, FlashAttention-3, arXiv:2407.08608, Fig. 5-6): "
     "FlashAttention-2 forward 319-333 TFLOP/s and backward 310-318 against cuDNN's 518-529 and 499-518 = 0.61-0.63; "
     "assumed the same on datacenter Blackwell, whose full rate also needs its own asynchronous MMA"},
    {"memory_efficient_attention_fraction", &Assumptions::memory_efficient_attention_fraction, "fraction", 0.05, 1,
     "xFormers issue 1074 (2024): its CUTLASS forward (fmha.cutlass.FwOp) about 2x slower than FlashAttention-2's on the "
     "same A40, head dim 128, 512-64k tokens; xFormers issues 950 and 674: FlashAttention does not run on a V100, where "
     "memory_efficient_attention and PyTorch SDPA use the CUTLASS kernel; backward assumed alike"},
    {"simt_conv_efficiency", &Assumptions::simt_conv_efficiency, "fraction", 0.05, 2,
     "FP32 without tensor cores: cuDNN runs 3x3 convolutions as Winograd transforms (2.25x fewer multiplies); in "
     "ResNet-50, 45% of the FLOPs are 3x3 convolutions, so at the implicit-GEMM 0.6 on the rest and a 2x Winograd "
     "gain on them the network runs at 0.6 / (0.55 + 0.45 / 2) = 0.78 of the SGEMM rate in useful FLOPs"},
    {"implicit_gemm_conv_efficiency", &Assumptions::implicit_gemm_conv_efficiency, "fraction", 0.05, 1,
     "a convolution run as an implicit GEMM (cuDNN, TensorRT) against a plain GEMM of the same M x N x K: the input "
     "gather (im2col on the fly) and its halo; used per layer when a model lists its convolutions"},
    {"winograd_speedup", &Assumptions::winograd_speedup, "x", 1, 4,
     "FP32 3x3 stride-1 convolutions on the vector units run as Winograd F(2x2, 3x3) transforms: 2.25x fewer "
     "multiplies, about 2x faster after the transforms (the figure simt_conv_efficiency's derivation uses)"},
    {"conv_traffic_overlap", &Assumptions::conv_traffic_overlap, "fraction", 0, 1,
     "0: a listed convolution's own reads and writes add to its arithmetic (the conservative bound, as the "
     "aggregate model's passes do); 1: the larger of the two (the roofline)"},
    {"cnn_training_forward_passes", &Assumptions::cnn_training_forward_passes, "bytes/byte", 0, 100,
     "conv -> BatchNorm -> ReLU in training: the conv reads its input and writes x, BatchNorm reads x for its statistics and again to "
     "write y, ReLU rewrites y in place, the next conv reads y: 7 passes over the 2 tensors saved"},
    {"cnn_training_backward_passes", &Assumptions::cnn_training_backward_passes, "bytes/byte", 0, 100,
     "ReLU backward (read dy and y, write dx: 3), BatchNorm backward (reduce over dy and x, then read both and write "
     "dx: 5), the conv's data gradient (read, write: 2) and weight gradient (read its output's gradient and its input: 2): "
     "12 passes over the 2 tensors saved"},
    {"cnn_eager_inference_passes", &Assumptions::cnn_eager_inference_passes, "bytes/byte", 0, 100,
     "eval-mode BatchNorm is one read and one write, ReLU another, the conv writes and the next reads: 6 passes over "
     "the 2 tensors training would save"},
    {"cnn_fused_inference_passes", &Assumptions::cnn_fused_inference_passes, "bytes/byte", 0, 100,
     "TensorRT-style engines fold BatchNorm into the conv weights and ReLU into its epilogue: the conv output is "
     "written once and read once (2 passes over 2 saved tensors)"},
    {"default_forward_kernels", &Assumptions::default_forward_kernels, "kernels", 1, 1e6,
     "a ResNet-50-class network (torchvision ResNet-50 issues 174 per forward pass); used when a generic model "
     "file gives no forward_kernels, with a warning"},
    {"eager_host_seconds_per_kernel", &Assumptions::eager_host_seconds_per_kernel, "s", 0, 1e-2,
     "gpt-fast write-up (pytorch.org, 2023): eager Llama-2-7B decode at 25.5 tok/s on A100 against ~7 ms of GPU work over "
     "~1,170 kernels"},
    {"compiled_host_seconds_per_kernel", &Assumptions::compiled_host_seconds_per_kernel, "s", 0, 1e-2,
     "Inductor's Python wrapper plus the CUDA driver call (CUDA launch-latency measurements)"},
    {"native_host_seconds_per_kernel", &Assumptions::native_host_seconds_per_kernel, "s", 0, 1e-2,
     "cudaLaunchKernel from C++ (llama.cpp, ExLlama)"},
    {"edgetpu_invoke_seconds", &Assumptions::edgetpu_invoke_seconds, "s", 0, 1,
     "coral.ai Edge TPU benchmarks, Table 1 (USB Accelerator, C++ benchmark): MobileNet v1 224 (1.14 GFLOP) 2.4 ms, "
     "Inception v1 224 (3.0 GFLOP) 3.4 ms: the line through them meets 0 FLOP at 1.8 ms, the image's hand-over included "
     "(the Dev Board, whose Edge TPU sits on PCIe, takes 2.4 ms for MobileNet v1 too); models the zoo has are left to "
     "check it"},
    {"npu_invoke_seconds", &Assumptions::npu_invoke_seconds, "s", 0, 1,
     "quic/ai-hub-models perf.yaml (052dc1f375), Samsung Galaxy S24 (Snapdragon 8 Gen 3), qnn_dlc w8a8, all layers on the "
     "NPU: ResNet-18 (1.82 GMAC) 0.402 ms, ResNet-101 (7.83 GMAC) 0.969 ms: the line through them meets 0 at 0.23 ms. "
     "Small networks' totals scatter around it: SqueezeNet 1.1 0.27 ms, ShuffleNet v2 0.338 ms, GoogLeNet 0.182 ms (less "
     "than the line's intercept: the fixed part is not one figure). No Core ML figure on a catalog device was found: "
     "assumed alike"},
    {"desktop_host_time_ratio", &Assumptions::desktop_host_time_ratio, "x", 0.05, 2,
     "single-thread host work scales with the core's clock at equal IPC: GPU servers' CPUs turbo to 3.7-3.8 GHz (AMD EPYC "
     "9654, Intel Xeon Platinum 8480+), desktops' to 5.7-5.8 GHz (Ryzen 9 7950X, Core i9-13900K): 3.7/5.7"},
    {"desktop_host_memory_gbps", &Assumptions::desktop_host_memory_gbps, "GB/s", 1, 10000,
     "dual-channel DDR5-5600, a current desktop's memory: 2 channels x 8 bytes x 5,600 MT/s (JEDEC arithmetic)"},
    {"server_host_memory_gbps", &Assumptions::server_host_memory_gbps, "GB/s", 1, 10000,
     "one socket of a GPU server (a single llama.cpp process reads mostly its own NUMA node): 8 channels of DDR5-4800, "
     "8 x 8 bytes x 4,800 MT/s (Intel Sapphire Rapids; EPYC Genoa has 12)"},
    {"host_memory_efficiency", &Assumptions::host_memory_efficiency, "fraction", 0.05, 1,
     "llama.cpp's CPU-only decode against the memory's peak: 18.27 tokens/s of LLaMA 7B Q4_0 (3.56 GiB) on a Core "
     "i9-13900K with DDR5-6400 (ggml-org/llama.cpp issue #34, slaren, 2023-08-12): 69.8 of 102.4 GB/s, 0.68; 2.89 "
     "tokens/s of Qwen2.5-Coder-14B Q4_K_M (about 9 GB) on a Core i7-8700 with dual-channel DDR4-2400 (inventivehq.com, "
     "'VRAM offload cliff' sweep): about 26 of 38.4 GB/s, 0.68"},
    {"desktop_host_matrix_tflops", &Assumptions::desktop_host_matrix_tflops, "TFLOP/s", 0.01, 1000,
     "a desktop CPU's matrix products on quantized weights: ik_llama.cpp pull request #128 reads a 512-token prompt of "
     "Llama 3.1 8B at 254 tokens/s on a Ryzen 9 7950X, 4.1 TFLOP/s, with a fork's repacked kernels; about half taken "
     "for mainline llama.cpp. Binds only where the host's layers see many tokens at once (prompts under the offload "
     "threshold, batched decode)"},
    {"server_host_matrix_tflops", &Assumptions::server_host_matrix_tflops, "TFLOP/s", 0.01, 1000,
     "one server socket: twice the desktop's (two to four times the cores at lower clocks); no measurement found"},
    {"eager_traffic_factor", &Assumptions::eager_traffic_factor, "x", 1, 10,
     "torchtune's eager vs compiled Llama 3.2 3B on one A100; checked on IBM's FSDP Llama 2 7B (57% vs 68% MFU); "
     "hwplan validate refits it per held-out group"},
    {"fused_optimizer_bandwidth_share", &Assumptions::fused_optimizer_bandwidth_share, "fraction", 0.05, 1,
     "a fused AdamW kernel's bandwidth against a streaming kernel's: pytorch/pytorch #117872 / #118361, a 7B bf16 "
     "step in 49.9 ms on an H100 (14 bytes x 6.74e9 at 56% of peak, against ~85% for copies)"},
    {"fabric_efficiency", &Assumptions::fabric_efficiency, "fraction", 0.05, 1,
     "NCCL all-reduce bus bandwidth over NVLink against the link peak (nccl-tests)"},
    {"pcie_efficiency", &Assumptions::pcie_efficiency, "fraction", 0.05, 1,
     "NCCL over PCIe through the host bridge against the link peak"},
    {"network_efficiency", &Assumptions::network_efficiency, "fraction", 0.05, 1,
     "NCCL inter-node bus bandwidth against the NIC line rate"},
    {"host_link_efficiency", &Assumptions::host_link_efficiency, "fraction", 0.05, 1,
     "pinned host <-> device copies against the PCIe peak (offload, paged optimizer states)"},
    {"custom_allreduce_latency_seconds", &Assumptions::custom_allreduce_latency_seconds, "s", 0, 1e-3,
     "small-message all-reduce of the engines' own kernels (each rank reads its peers' buffers over NVLink and reduces "
     "in one kernel): 3.7/4.8/5.9 us at 2/4/8 H100s for 512 bytes, 3.9/3.7/5.7 us for 4 KB (sgl-project/sglang pull "
     "request #2904's table, TensorRT-LLM-derived kernel); flat in the group size, where NCCL's steps grow with it"},
    {"custom_allreduce_bandwidth_share", &Assumptions::custom_allreduce_bandwidth_share, "fraction", 0.01, 1,
     "the engines' one-kernel all-reduce moves data far slower than NCCL's rings (few thread blocks, each waiting on "
     "its peers' NVLink reads): in sgl-project/sglang pull request #2904's H100 table, 512 KB -> 1 MB adds 7.4 / 10.9 "
     "/ 11.7 us at 2 / 4 / 8 GPUs, 71-78 GB/s of two-shot bus bandwidth, 0.2 of NCCL's 360 GB/s (fabric_efficiency x "
     "450); the engines use whichever of it and NCCL is faster"},
    {"collective_sms", &Assumptions::collective_sms, "SMs", 0, 256,
     "one CTA per NCCL channel, ~16 channels (NCCL_MAX_NCHANNELS); DeepSeek-V3 dedicates 20 of 132 SMs"},
    {"driver_reserved_memory_fraction", &Assumptions::driver_reserved_memory_fraction, "fraction", 0, 0.5,
     "the total memory CUDA reports against the nominal: 79.22 GiB on an 80 GB GPU (vLLM's memory profile in its "
     "pull request #10511), 23.58 GiB on a 24 GB one (vLLM's log in pull request #14447)"},
    {"device_speed_spread", &Assumptions::device_speed_spread, "fraction", 0, 1,
     "Sinha et al., 'Not All GPUs Are Created Equal', SC22 (arXiv:2208.11035): GPUs of one SKU in five clusters "
     "differ by 8% on average (max 22%) in speed under the same work, from power management and manufacturing "
     "variation, outliers (up to 1.5x slower) aside"},
    {"interruptions_per_device_hour", &Assumptions::interruptions_per_device_hour, "1/h", 0, 1,
     "Llama 3 paper: 419 unexpected interruptions in 54 days on 16,384 H100"},
    {"restart_seconds", &Assumptions::restart_seconds, "s", 0, 1e6, "restart and reload after an interruption"},
    {"checkpoint_stall_seconds", &Assumptions::checkpoint_stall_seconds, "s", 0, 1e5, "training stalled per checkpoint"},
};

Assumptions& active() {
  static Assumptions a;
  return a;
}

std::string& note() {
  static std::string n;
  return n;
}

}  // namespace

const Assumptions& assumptions() { return active(); }

void set_assumptions(const Assumptions& a) {
  active() = a;
  std::string n;
  for (const AssumptionInfo& i : describe_assumptions(a)) {
    if (i.value == i.default_value) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s%s %g (default %g)", n.empty() ? "" : ", ", i.name.c_str(), i.value, i.default_value);
    n += buf;
  }
  note() = n.empty() ? n : "assumptions overridden: " + n;
}

const std::string& assumptions_note() { return note(); }

std::vector<AssumptionInfo> describe_assumptions(const Assumptions& a) {
  const Assumptions defaults;
  std::vector<AssumptionInfo> out;
  for (const Entry& e : kEntries)
    out.push_back({e.name, a.*(e.member), defaults.*(e.member), e.unit, e.min, e.max, e.source});
  return out;
}

std::optional<AssumptionInfo> find_assumption(const std::string& name) {
  for (const AssumptionInfo& i : describe_assumptions(Assumptions{}))
    if (i.name == name) return i;
  return std::nullopt;
}

std::vector<std::string> assumption_names() {
  std::vector<std::string> out;
  for (const Entry& e : kEntries) out.push_back(e.name);
  return out;
}

bool set_assumption(Assumptions& a, const std::string& name, double value) {
  for (const Entry& e : kEntries)
    if (name == e.name) {
      a.*(e.member) = value;
      return true;
    }
  return false;
}

}  // namespace hwplan
