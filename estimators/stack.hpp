// Software-stack presets: what a training framework or an inference engine does that changes memory and time
// (fused kernels, CUDA graphs, fp32 master weights, chunked loss, ...). Each preset is data with its source;
// every part can be overridden by its own flag (resolved in src/recommend/query.cpp).
#pragma once

#include <optional>
#include <string>

#include "core/device.hpp"
#include "core/model.hpp"
#include "core/workload.hpp"

namespace hwplan {

Stack framework_preset(Framework f);
Stack engine_preset(Engine e);
// The preset used when the user names none: PyTorch FSDP/DDP for training from scratch, Hugging Face Trainer
// (+PEFT) for fine-tuning, vLLM for language-model inference, eager PyTorch (hf) for a generic network. Printed
// with every estimate.
Framework default_framework(Task t);
Engine default_engine(const Model& m);
// Whether an engine runs on a device's software stack (its catalog `software` list): vLLM on CUDA, ROCm and its
// hardware plugins (TPU, Gaudi, Ascend, Neuron); llama.cpp and MLC on CUDA, ROCm and Apple's GPUs (Metal); none of
// them on Core ML, TFLite or QNN NPUs.
bool engine_runs_on(Engine e, const Device& d);
// The engine assumed when the user names none: default_engine(m) where it runs on the device, else one that does
// (llama.cpp on an Apple GPU); the same default where none does (an NPU with its own runtime).
Engine default_engine(const Model& m, const Device& d);
// The NPU runtime a device runs (its catalog software leads with tflite, coreml or qnn; SNPE counts as qnn), or "".
std::string npu_runtime_of(const Device& d);
// The NPU runtime an --engine names (tflite, coreml, qnn), or the device's own for npu-runtime or none given.
std::string npu_runtime_named(const std::optional<std::string>& engine, const Device& d);
// The NPU runtime preset under that runtime's name, with its invoke (the Edge TPU's delegate on the Edge TPU).
Stack npu_runtime_preset(const std::string& runtime, const Device& d);
// Host (CPU) time on the machine a device sits in, as a multiple of a GPU server's, where the presets' host times were
// measured: a GeForce card's desktop runs single-threaded work faster (assumptions().desktop_host_time_ratio);
// every other class keeps the server's time.
double host_time_ratio(const Device& device);
// The host a device sits in as inference with layers left in host memory sees it (Workload::device_layers): its
// memory's achieved read rate and its CPU's matrix rate, typical of the device's class (a GeForce card's desktop;
// every other class one socket of a GPU server, as host_time_ratio), and where the figures came from, in words.
struct HostRates {
  double memory_bytes_per_s = 0;
  double matrix_flops = 0;
  std::string memory_words;  // "a desktop's dual-channel DDR5-5600, 61 GB/s of its 90 GB/s peak"
  std::string cpu_words;     // "CPU 2.0 TFLOP/s"
  std::string words() const { return memory_words + "; " + cpu_words; }
};
HostRates typical_host(const Device& device);

}  // namespace hwplan
