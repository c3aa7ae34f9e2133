// What the user wants to run (task, batch, sequence) and how (the execution plan). Neither a model nor a device.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/precision.hpp"

namespace hwplan {

enum class Task { kTrain, kFinetune, kLora, kQlora, kInfer };
enum class Recompute { kNone, kSelective, kFull };
enum class Offload { kNone, kOptimizer, kParams };
enum class Attention { kEager, kFlash };
enum class Optimizer { kAdamW, kSgd, kAdafactor, kAdam8bit };

const char* to_string(Task t);
const char* to_string(Recompute r);
const char* to_string(Offload o);
const char* to_string(Attention a);
const char* to_string(Optimizer o);
std::optional<Task> parse_task(const std::string& s);
std::optional<Recompute> parse_recompute(const std::string& s);
std::optional<Offload> parse_offload(const std::string& s);
std::optional<Attention> parse_attention(const std::string& s);
std::optional<Optimizer> parse_optimizer(const std::string& s);

// The parallel layout and memory-saving choices. count = tp * pp * dp.
struct Plan {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;     // expert parallelism (MoE), carved out of dp
  int vp = 1;     // virtual pipeline stages per device (interleaved 1F1B): bubble / vp
  int zero = 0;  // 0..3 (3 = FSDP full sharding)
  Recompute recompute = Recompute::kNone;
  Offload offload = Offload::kNone;
  bool sequence_parallel = true;  // with tp > 1, Megatron-style sequence parallelism
  std::int64_t micro_batch = 1;   // sequences per device per micro-step
  std::int64_t grad_accum = 1;    // micro-steps per optimizer step (pipeline: micro-batches in flight)
  std::int64_t global_batch() const { return micro_batch * grad_accum * dp; }
  int count() const { return tp * pp * dp; }
};

// The cluster around the devices.
struct System {
  int count = 1;
  int devices_per_node = 8;
  double network_bytes_per_s = 50e9;  // inter-node, per device, one direction (400 Gb/s NIC per GPU)
  double host_memory_bytes = 0;       // 0 = unknown (not checked)
  // Whether the framework overlaps the data-parallel gradient reduction with the backward pass (PyTorch DDP,
  // FSDP, DeepSpeed, Megatron-core with overlap_grad_reduce); Megatron-LM before 2023 reduced after backward.
  bool overlap_grad_reduce = true;
};

struct Workload {
  Task task = Task::kTrain;
  Precision precision = Precision::kBf16;       // compute precision of training / inference
  std::optional<WeightFormat> weights;          // inference weight storage (default: precision)
  Precision kv_cache = Precision::kBf16;        // KV cache element format
  bool kv_cache_set = false;
  std::int64_t seq = 2048;
  std::optional<double> tokens;                 // total training tokens
  Attention attention = Attention::kFlash;
  Optimizer optimizer = Optimizer::kAdamW;
  int lora_rank = 16;
  std::string lora_targets = "all-linear";      // or "qv"
  // Inference.
  std::int64_t prompt = 512;
  std::int64_t generate = 256;
  // Generic models: samples, not sequences.
};

}  // namespace hwplan
