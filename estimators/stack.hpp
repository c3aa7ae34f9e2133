// Software-stack presets: what a training framework or an inference engine does that changes memory and time
// (fused kernels, CUDA graphs, fp32 master weights, chunked loss, ...). Each preset is data with its source;
// every part can be overridden by its own flag (resolved in src/recommend/query.cpp).
#pragma once

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
// Host (CPU) time on the machine a device sits in, as a multiple of a GPU server's, where the presets' host times were
// measured: a GeForce card's desktop runs single-threaded work faster (assumptions().desktop_host_time_ratio);
// every other class keeps the server's time.
double host_time_ratio(const Device& device);

}  // namespace hwplan
