#include "estimators/comm.hpp"
#include "core/assumptions.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>

namespace hwplan {
namespace {
// NCCL reaches ~80% of NVLink's per-direction bandwidth as all-reduce bus bandwidth (nccl-tests on DGX A100/
// H100: ~230/600 GB/s bidirectional -> ~0.77-0.85 of 300/450 per direction), ~70% over PCIe peer paths and
// ~80-90% of the NIC rate across nodes.
// Used as assumptions().fabric_efficiency (src/core/assumptions.hpp, overridable with --assumptions).
// Used as assumptions().pcie_efficiency (src/core/assumptions.hpp, overridable with --assumptions).
// Used as assumptions().network_efficiency (src/core/assumptions.hpp, overridable with --assumptions).
}  // namespace

namespace {
// Whether some group of `size` ranks `stride` apart straddles a boundary of `block` consecutive ranks (a node or a
// scale-up domain), in a system of `count` ranks. Ranks are numbered tensor-parallel innermost, then context- and
// data-parallel, pipeline outermost (Megatron's order, Plan); group g at offset o holds base + i * stride, base = g *
// size * stride + o.
// The pattern repeats every lcm(size * stride, block) ranks, so checking one period (at most `count`) suffices.
bool some_group_straddles(long long size, long long stride, long long block, long long count) {
  if (size <= 1) return false;
  const long long group_span = size * stride;
  // The two layouts a layout search meets most, in closed form: groups that tile a block never leave it; members a
  // whole number of blocks apart are always in different blocks (whenever one complete group exists).
  if (block % group_span == 0) return false;
  if (stride % block == 0) return (size - 1) * stride < count;
  const long long period = std::lcm(group_span, block);
  const long long limit = std::min(count, period);
  for (long long start = 0; start < limit; start += group_span)
    for (long long o = 0; o < stride && start + o < limit; ++o) {
      long long first = start + o, last = first + (size - 1) * stride;
      if (last >= count) continue;  // a partial group does not exist
      if (first / block != last / block) return true;
    }
  return false;
}
}  // namespace

long long scale_up_span(const Device& device, const System& system) {
  const long long node = std::max(1, system.devices_per_node);
  const Interconnect& ic = device.interconnect;
  // A fabric of more devices than one 8-device board spans hosts by construction (TPU ICI pods, NeuronLink); an
  // 8-device one (NVLink, Infinity Fabric) stays inside its host, whatever node size the user gives.
  return ic.pools_memory() && ic.domain_size > 8 ? std::max<long long>(node, ic.domain_size) : node;
}

GroupLink group_link(const Device& device, const System& system, int size, int stride) {
  GroupLink link;
  const long long node = scale_up_span(device, system);
  const long long span = static_cast<long long>(size - 1) * stride + 1;
  // The slowest group sets the pace: a group whose ranks sit on two nodes talks over the network even when it
  // is small enough for one node (tp 7 on 8-GPU nodes: the second group spans ranks 7-13).
  const long long count = std::max<long long>(system.count, static_cast<long long>(size) * stride);
  if (span > node || some_group_straddles(size, stride, node, count)) {
    link.crosses_nodes = true;
    link.bytes_per_s = system.network_bytes_per_s * assumptions().network_efficiency;
    link.latency_s = 10e-6;
    link.medium = "network";
    return link;
  }
  const Interconnect& ic = device.interconnect;
  // Inside a node, a fabric smaller than the node (PCIe cards bridged in pairs) forms node-aligned domains.
  const bool within_domain = ic.domain_size >= node ||
                             (span <= ic.domain_size && node % ic.domain_size == 0 &&
                              !some_group_straddles(size, stride, ic.domain_size, count));
  if (ic.pools_memory() && within_domain) {
    double bidirectional = ic.bidirectional_bytes_per_s;
    // Several devices per package (MI250X GCDs): a group inside one package talks over the in-package link; a group
    // over several packages forms a ring through package-to-package links, whose slowest hop sets its pace.
    if (const long long package = std::max(1, device.devices_per_package); package > 1 && size > 1) {
      const bool one_package = span <= package && !some_group_straddles(size, stride, package, count);
      const double part = one_package ? ic.in_package_bidirectional_bytes_per_s : ic.between_packages_bidirectional_bytes_per_s;
      if (part > 0) bidirectional = part;
    }
    // A point-to-point fabric gives a group of fewer devices than its board only the links among them: (size - 1) /
    // (board - 1) of each device's. A mesh's board is its domain, however the hosts are described. An NVLink part of
    // an 8-GPU domain (not a bridged pair) on nodes of exactly 4 sits on NVIDIA's switchless 4-GPU HGX board, each GPU
    // linked to the other three by 6 of its 18 NVLink4 links (HGX H100 4-GPU: 'fully connected', no NVSwitch), so a
    // pair gets a third; a node of 2 is a slice of a switched board. Packages of several devices have their own links.
    const bool nvlink_board = ic.type.starts_with("nvlink") && ic.type != "nvlink-bridge";
    const long long board = ic.mesh ? ic.domain_size : (nvlink_board && node == 4 && ic.domain_size == 8) ? 4 : 0;
    if (board > 1 && size > 1 && size < board && device.devices_per_package <= 1)
      bidirectional *= static_cast<double>(size - 1) / static_cast<double>(board - 1);
    link.bytes_per_s = bidirectional / 2 * assumptions().fabric_efficiency;
    link.latency_s = 3e-6;
    link.medium = "scale-up fabric";
    return link;
  }
  double pcie = device.host_link.bytes_per_s();
  if (pcie <= 0) pcie = 1e9;  // SoCs and USB devices: nothing better than a slow host path
  link.bytes_per_s = pcie * assumptions().pcie_efficiency;
  link.latency_s = 8e-6;
  link.medium = "pcie";
  return link;
}

GroupLink send_link(const Device& device, const System& system, int chain, int stride) {
  GroupLink link = group_link(device, system, chain, stride);
  // A send goes between two neighbours over their own link: on a point-to-point fabric the pair's share, never more
  // than the chain's slowest hop.
  if (!link.crosses_nodes && std::string_view(link.medium) == "scale-up fabric")
    link.bytes_per_s = std::min(link.bytes_per_s, group_link(device, system, 2, stride).bytes_per_s);
  return link;
}

double allreduce_seconds(double bytes, int n, const GroupLink& link) {
  if (n <= 1 || bytes <= 0) return 0;
  // Ring bandwidth term; tree-like latency term (NCCL switches to trees at scale).
  return 2.0 * (n - 1) / n * bytes / link.bytes_per_s + 2 * std::log2(static_cast<double>(n)) * link.latency_s;
}

double engine_allreduce_seconds(double bytes, int n, const GroupLink& link, bool custom) {
  if (!custom || std::string_view(link.medium) != "scale-up fabric") return allreduce_seconds(bytes, n, link);
  if (n <= 1 || bytes <= 0) return 0;
  // One kernel that reads the peers' buffers: a few microseconds whatever the group size, but a slow data path
  // (custom_allreduce_bandwidth_share of NCCL's bus bandwidth). The engines switch to NCCL where it is faster (vLLM
  // above its buffer's size, TensorRT-LLM's strategy by message size): the faster of the two.
  const double own = 2.0 * (n - 1) / n * bytes / (link.bytes_per_s * assumptions().custom_allreduce_bandwidth_share) +
                     assumptions().custom_allreduce_latency_seconds;
  return std::min(own, allreduce_seconds(bytes, n, link));
}

double allgather_seconds(double bytes_total, int n, const GroupLink& link) {
  if (n <= 1 || bytes_total <= 0) return 0;
  return static_cast<double>(n - 1) / n * bytes_total / link.bytes_per_s + std::log2(static_cast<double>(n)) * link.latency_s;
}

double reduce_scatter_seconds(double bytes_total, int n, const GroupLink& link) {
  return allgather_seconds(bytes_total, n, link);
}

double p2p_seconds(double bytes, const GroupLink& link) {
  if (bytes <= 0) return 0;
  return bytes / link.bytes_per_s + link.latency_s;
}

double alltoall_seconds(double bytes_per_device, int n, const GroupLink& link) {
  if (n <= 1 || bytes_per_device <= 0) return 0;
  return static_cast<double>(n - 1) / n * bytes_per_device / link.bytes_per_s + (n - 1) * link.latency_s * 0.1;
}

}  // namespace hwplan
