// Collective communication time on the links between devices: NVLink-class fabrics inside a node (or PCIe for
// cards without one), the inter-node network beyond. Layout: tensor-parallel ranks innermost, then context-parallel,
// then data-parallel (expert-parallel groups are consecutive data-parallel ranks), pipeline stages outermost (Plan).
#pragma once

#include "core/device.hpp"
#include "core/workload.hpp"

namespace hwplan {

struct GroupLink {
  double bytes_per_s = 0;   // achieved bus bandwidth, one direction
  double latency_s = 0;     // per algorithm step
  bool crosses_nodes = false;
  const char* medium = "";  // "nvlink4", "pcie", "network"
};

// Devices one group can span before it needs the network: the node, or a scale-up fabric of more than 8 devices,
// which spans hosts (a TPU pod's ICI, Trainium2's NeuronLink), whichever is larger.
long long scale_up_span(const Device& device, const System& system);

// The link a group of `size` devices, `stride` apart in the global rank order, communicates over.
GroupLink group_link(const Device& device, const System& system, int size, int stride);
// The link a pipeline's point-to-point sends use: the chain of `chain` stages `stride` ranks apart sets whether they
// stay in a node, and a send runs at what two neighbours share (on a mesh, their one link).
GroupLink send_link(const Device& device, const System& system, int chain, int stride);

double allreduce_seconds(double bytes, int n, const GroupLink& link);
// An inference engine's own all-reduce kernel (vLLM's and SGLang's custom all-reduce, TensorRT-LLM's plugin,
// PyTorch's intra-node comm) inside a scale-up fabric: every rank reads its peers' buffers and reduces in one
// kernel, a fixed latency whatever the group size, with the ring's bandwidth term for large messages. Elsewhere
// (PCIe, the network) or with `custom` false: NCCL's allreduce_seconds.
double engine_allreduce_seconds(double bytes, int n, const GroupLink& link, bool custom);
double allgather_seconds(double bytes_total, int n, const GroupLink& link);     // each ends with bytes_total
double reduce_scatter_seconds(double bytes_total, int n, const GroupLink& link);
double p2p_seconds(double bytes, const GroupLink& link);
double alltoall_seconds(double bytes_per_device, int n, const GroupLink& link);

}  // namespace hwplan
