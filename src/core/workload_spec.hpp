#pragma once

#include <optional>
#include <string>

namespace hwplan {

// A workload as the user states it (CLI flags, a batch scenario, a measurement case): strings and optional
// numbers, validated and resolved into an EstimateInput by cli::resolve_query.
struct WorkloadSpec {
  std::string model;
  std::string device;
  long long count = 1;
  std::string task = "train";
  std::string precision = "bf16";
  std::optional<std::string> weights;
  std::optional<long long> batch;
  std::optional<long long> seq;
  std::optional<long long> grad_accum;
  std::optional<long long> global_batch;
  std::optional<double> tokens;
  std::optional<long long> tp, pp, dp, ep, zero, vp;
  std::optional<std::string> recompute;
  std::string offload = "none";
  std::string attention = "flash";
  std::string optimizer = "adamw";
  long long lora_rank = 16;
  std::string lora_targets = "all-linear";
  long long prompt = 512;
  long long generate = 256;
  std::optional<std::string> kv_cache;
  std::optional<std::string> profile;
  long long devices_per_node = 8;
  double network_gbps = 400;  // per device, Gb/s
  bool no_sequence_parallel = false;
  bool no_overlap_grad_reduce = false;
};

}  // namespace hwplan
