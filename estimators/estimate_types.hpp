// What an estimate is: its input (model, device, system, workload, plan) and its result (memory, time, throughput,
// MFU, the warnings and the reasons). Types only; estimators/estimate.hpp computes them.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/model.hpp"
#include "core/profile.hpp"
#include "core/workload.hpp"
#include "estimators/memory.hpp"
#include "estimators/params.hpp"

namespace hwplan {

struct TrainingTime {
  double forward_seconds = 0;        // per optimizer step, all micro-batches
  double backward_seconds = 0;       // incl. recomputation
  double recompute_seconds = 0;      // part of backward_seconds
  double optimizer_seconds = 0;
  double tp_comm_seconds = 0;
  double cp_comm_seconds = 0;        // context-parallel ring transfers that attention does not hide
  double pp_comm_seconds = 0;
  double dp_comm_seconds = 0;        // total data-parallel / ZeRO traffic time
  double dp_comm_exposed_seconds = 0;
  double dp_interference_seconds = 0;  // compute slowed by collectives that overlap it (SMs they occupy)
  double bubble_seconds = 0;
  double offload_seconds = 0;
  // A paged optimizer's states evicted to host memory come back for the step and go out again (bitsandbytes
  // prefetches them: link-speed copies, both directions at once on a full-duplex link).
  double paging_seconds = 0;
  // The job waits for its slowest device every step: the devices' own work at that device's pace less at a median
  // one's (training.cpp, slowest_device_slowdown).
  double slowest_device_seconds = 0;
  // Unpacked samples: the data-parallel ranks wait for the rank whose micro-batch is padded longest (training.cpp,
  // padded_rank_pace).
  double padding_wait_seconds = 0;
  // Exposed transfers plus the compute they slow while overlapping it.
  double communication_seconds() const {
    return tp_comm_seconds + cp_comm_seconds + pp_comm_seconds + dp_comm_exposed_seconds + dp_interference_seconds;
  }
  double step_seconds = 0;
  double tokens_per_step = 0;
  double tokens_per_second = 0;      // whole cluster
  double model_flops_per_step = 0;   // 6N + attention (PaLM convention), whole cluster
  double hardware_flops_per_step = 0;  // incl. recomputation, whole cluster
  double mfu = 0;
  double hfu = 0;
  double gemm_seconds = 0;    // per step, per device
  double host_wait_seconds = 0;  // per step: the GPU idle while the host issues eager kernels (inside forward,
                                 // backward and a looped optimizer step)
  double memory_bound_seconds = 0;
};

// Wall-clock share of a synchronous training job spent training: every interruption (a failed GPU, host or link
// stops all devices) costs a restart and the work since the last checkpoint; checkpoints stall the job while
// they are written (estimators/training.cpp, training_goodput).
struct Goodput {
  double fraction = 1;                  // training time / wall-clock time
  double expected_interruptions = 0;    // over the whole job
  double checkpoint_interval_seconds = 0;  // the interval that minimises the loss (Young's formula)
};

// The rate a job of many requests runs at, as recommend, tco and estimate --tokens count it: batches of whole requests
// back to back, all replicas, output tokens over a batch's whole time (prefill and decode). Where nothing is generated
// (an encoder, --generate 0) the prompt tokens read over the forward pass; a generic network (a CNN) counts samples.
struct InferenceJobRate {
  double per_second = 0;
  const char* counts = "output";  // "output" tokens, "input" tokens, or "samples"
};

struct InferenceTime {
  double prefill_seconds = 0;         // time to first token
  double time_per_output_token_seconds = 0;
  double decode_tokens_per_second = 0;  // one replica, across its batch
  int replicas = 1;                     // data-parallel copies of the model (plan.dp), each serving its own batch
  double total_decode_tokens_per_second() const { return decode_tokens_per_second * replicas; }
  double total_seconds = 0;           // prefill (which gives the first token) + (generate - 1) x tpot
  double decode_weight_bytes = 0;     // bytes read per decode step per device
  double decode_kv_bytes = 0;
  // Reading weights and cache is half the device's decode step or more, or the step barely grows with its batch.
  bool decode_memory_bound = true;
  // A decode step of twice the batch over this one's, as the estimators time it: below about 1.25 a larger batch
  // raises throughput almost for free.
  double decode_doubling_ratio = 2;
  bool decode_host_bound = false;     // the host issuing kernels, not the GPU, sets the pace (eager engines)
  double decode_comm_seconds = 0;     // per decode step: tensor-parallel all-reduces and pipeline sends
  // Per forward pass or decode step: the parameters a device without memory of its own streams from the host.
  double streamed_seconds = 0;
  double decode_gpu_seconds = 0;      // per decode step: the device's whole time (communication included)
  const char* decode_comm_medium = "";  // the tensor-parallel link's ("scale-up fabric", "pcie", "network")
  double host_seconds_per_token = 0;  // host time per decode step incl. the engine's per-step overhead
  // Layers left in host memory (--gpu-layers): how many, whether the host's CPU computes them (else their weights
  // stream to the device), and their part of each decode step and of the prefill (in the times above).
  double offload_host_layers = 0;
  bool offload_on_host = false;
  bool offload_decode_on_host = false;  // and its CPU computes them in a decode step (fewer sequences than the threshold)
  double offload_seconds_per_token = 0;
  double offload_prefill_seconds = 0;
  InferenceJobRate job;               // a job of many requests at these figures
};

struct Estimate {
  ParameterCounts params;
  Plan plan;
  MemoryBreakdown memory;
  double capacity_bytes = 0;
  double usable_bytes = 0;    // capacity less the headroom a plan must leave free (System::memory_headroom_fraction)
  bool fits = false;
  // Offloaded state beyond the memory a host of the device's class typically has (a warning: the host is not in the
  // catalog); fit does not suggest such a change.
  bool host_memory_short = false;
  bool training = true;
  TrainingTime train;
  InferenceTime infer;
  double total_seconds = -1;     // for --tokens: wall-clock, interruptions and checkpoints included; -1 when not asked
  double training_seconds = -1;  // for --tokens: steps x step time alone
  Goodput goodput;
  std::string bound;          // "compute", "memory", "communication"
  Precision requested_precision = Precision::kBf16;  // what the GEMMs were asked to run in
  Precision effective_precision = Precision::kBf16;  // what the device runs them in (see effective_precision)
  double precision_passes = 1;                        // > 1: emulated with several passes of effective_precision
  std::string fit_hint;       // when it does not fit: the change most likely to make it fit, in words
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // the explanation, in words
  // Inference that is one forward pass over the batch (inference.hpp one_forward_pass): samples per second, all
  // replicas together.
  double forward_samples_per_second() const {
    return plan.micro_batch * infer.replicas / std::max(1e-12, infer.prefill_seconds);
  }
};

struct EstimateInput {
  const Model* model = nullptr;
  const Device* device = nullptr;
  const Profile* profile = nullptr;
  System system;
  Workload workload;
  Plan plan;
};

}  // namespace hwplan
