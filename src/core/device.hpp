// A hardware device as described by one catalog file, in base units.
#pragma once

#include <algorithm>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/precision.hpp"

namespace hwplan {

enum class DeviceClass { kConsumer, kWorkstation, kDatacenter, kNpu, kEdge };

struct Interconnect {
  std::string type = "none";            // nvlink4, nvlink-bridge, hccs, infinity-fabric, ici, roce, neuronlink, none
  double bidirectional_bytes_per_s = 0;  // per device, all links, both directions added
  int domain_size = 1;                  // devices that share the scale-up fabric
  // Devices that share a package (MI250/MI250X GCDs, Device::devices_per_package > 1): the link between the devices
  // of one package, and one link between devices of different packages (both directions added; 0: not given, the
  // whole figure above serves every group). A ring over several packages runs at its slowest hop.
  double in_package_bidirectional_bytes_per_s = 0;
  double between_packages_bidirectional_bytes_per_s = 0;
  // Point to point: each device is linked directly to every other device of its domain, a share of its links to each
  // (AMD's 8-GPU Infinity Fabric platforms, Gaudi's on-die RoCE ports), no switch between them. A group of fewer
  // devices than the domain then has only the links among its members (catalog topology: mesh; switch otherwise).
  bool mesh = false;
  bool pools_memory() const { return type != "none" && bidirectional_bytes_per_s > 0; }
};

struct HostLink {
  std::string type = "pcie";  // pcie, usb3, soc, cloud
  int pcie_gen = 0;
  int pcie_lanes = 0;
  // One direction, bytes/s (PCIe gen N x lanes after 128b/130b encoding; USB 3: 5 Gb/s).
  double bytes_per_s() const;
  // A phone, laptop, Mac, Jetson or USB stick: no link to another device (a model is not split over several, nor
  // trained across them; several serve only as independent replicas).
  bool standalone() const { return type == "soc" || type == "usb3"; }
};

// Prices as quoted by a source on a date (YYYY-MM). Every quote carries its citation in `sources` under its kind
// ("launch_msrp", "street", "used", "cloud", "cloud_reserved"); rentals name the provider.
struct Price {
  std::optional<double> launch_msrp_usd;  // vendor list price at launch (GeForce, Jetson kits, Macs)
  std::string launch_msrp_date;
  std::optional<double> street_usd;  // new, from retailers or reported deal prices (datacenter parts have no MSRP)
  std::string street_date;
  std::optional<double> used_usd;  // second-hand market (eBay sold listings, refurbishers)
  std::string used_date;
  std::optional<double> cloud_usd_per_hour;  // on-demand, per device-hour
  std::string cloud_date;
  std::string cloud_provider;
  std::optional<double> cloud_reserved_usd_per_hour;  // committed / reserved, per device-hour
  std::string cloud_reserved_date;
  std::string cloud_reserved_provider;
  std::string cloud_reserved_term;  // "1-year", "3-year", ...
  // Sold to no one, only rented as a cloud service (Google's TPUs, AWS Trainium): hwplan tco costs the rent side
  // alone instead of asking for a purchase quote. Cited as sources["rent_only"].
  bool rent_only = false;
  std::map<std::string, std::string> sources;  // kind -> citation
  std::map<std::string, std::string> origins;  // kind -> where it was set when not the catalog ("prices.yaml:4")

  bool empty() const {
    return !launch_msrp_usd && !street_usd && !used_usd && !cloud_usd_per_hour && !cloud_reserved_usd_per_hour;
  }
  // A purchase price: the street price when one is known (what a buyer pays today), else the launch list price.
  std::optional<double> new_purchase_usd() const { return street_usd ? street_usd : launch_msrp_usd; }
};

// One quote of a Price, for listing and checking them all alike.
struct PriceQuote {
  const char* kind;  // launch_msrp, street, used, cloud, cloud_reserved
  double usd;        // USD, or USD per device-hour for rentals
  bool per_hour;
  std::string date;
  std::string provider;
  std::string source;
};
std::vector<PriceQuote> quotes_of(const Price& p);
// Whole months from a YYYY-MM date to (to_year, to_month); 0 for a malformed date.
int months_between(const std::string& from_yyyy_mm, int to_year, int to_month);
// Today as (year, month); HWPLAN_TODAY=YYYY-MM pins it (tests and reproducible documentation).
std::pair<int, int> today_year_month();
// "the street price of h100-sxm is from 2023-08, more than two years old: give a current quote with --prices FILE"
// when the quote `what` (dated `date`) of `device_id` is over two years old; empty otherwise.
std::string stale_price_note(const std::string& what, const std::string& device_id, const std::string& date);

struct Device {
  std::string id;
  std::string name;
  std::vector<std::string> aliases;
  std::string vendor;
  DeviceClass device_class = DeviceClass::kDatacenter;
  std::string architecture;
  int release_year = 0;
  double memory_bytes = 0;
  // What the GPU may use of memory it shares with the CPU, by default (macOS lets Metal wire only part of the
  // unified memory: recommendedMaxWorkingSetSize); absent where the device's own memory is all the GPU's.
  std::optional<double> gpu_memory_limit_bytes;
  // What the driver reports as the device's total with the board's default ECC mode (nvidia-smi): GDDR6 boards keep
  // ECC check bits in-band, 1/16 of the memory (T4: 15360 of 16384 MiB); HBM keeps them apart. Absent: all of it.
  std::optional<double> reported_memory_bytes;
  // No memory of its own beside on-chip SRAM (the Coral Edge TPU): the compiler caches the parameters there as far
  // as they fit and the rest stream in from the host over its link on every forward pass.
  bool streams_parameters() const { return memory_bytes <= 0 && llc_bytes && *llc_bytes > 0; }
  // The memory a plan may fill: what the driver reports of the device's, or the GPU's share of a unified memory; on a
  // device that streams its parameters, the on-chip cache they are kept in.
  double plan_memory_bytes() const {
    if (streams_parameters()) return *llc_bytes;
    double bytes = reported_memory_bytes ? std::min(memory_bytes, *reported_memory_bytes) : memory_bytes;
    return gpu_memory_limit_bytes ? std::min(bytes, *gpu_memory_limit_bytes) : bytes;
  }
  std::string memory_type;
  double memory_bandwidth_bytes_per_s = 0;
  // The streaming rate measured on the device itself where it falls short of the memory's (an engine on a shared
  // memory whose own port is narrower: Apple's Neural Engine reaches about half its SoC's bandwidth), bytes/s: it
  // replaces memory_bandwidth_bytes_per_s x assumptions().bandwidth_efficiency.
  std::optional<double> measured_bandwidth_bytes_per_s;
  // Dense peak per precision in FLOP/s (or op/s for integers); absent when unsupported.
  std::map<Precision, double> peak_flops;
  std::optional<double> fp32_matrix_flops;  // IEEE fp32 on matrix units (AMD MFMA)
  // Best GEMM throughput measured by others (e.g. the "maximum achievable matmul" tables), FLOP/s.
  std::map<Precision, double> measured_matmul_flops;
  std::optional<double> vector_flops;
  std::optional<double> llc_bytes;
  std::optional<int> compute_units;
  std::optional<double> boost_clock_mhz;
  // Base clock: the clock the vendor guarantees at TDP under a heavy load. Sustained clock: a published
  // measurement of the clock held under sustained dense GEMMs at the power limit, where one exists.
  std::optional<double> base_clock_mhz;
  std::optional<double> sustained_clock_mhz;
  // Architecture family (volta, turing, ampere-ga100, ampere-ga10x, ada, hopper, blackwell, cdna1, cdna2, ...):
  // keys the per-architecture achievable fractions in estimators/assumptions.
  std::string architecture_family;
  // Devices the framework sees per physical package (MI250/MI250X: 2 GCDs). The entry describes one of them.
  int devices_per_package = 1;
  double tdp_w = 0;
  HostLink host_link;
  Interconnect interconnect;
  std::vector<std::string> software;
  bool training = true;
  Price price;
  std::string confidence;
  std::map<std::string, std::string> sources;
  std::map<std::string, std::string> derived;
  std::string notes;
  // Derived when the registry loads, from the devices loaded (derive_sibling_gemm, src/core/device.cpp). A device
  // without a published 16-bit GEMM measurement takes the large-GEMM fraction of its 16-bit peak that a measured
  // sibling's (same vendor, architecture family and tensor work per unit per clock) implies at this device's power
  // budget (0: no sibling), naming the sibling; capped: the best measured sibling's own fraction, when this device
  // has at least its power per unit. Every device with measured siblings gets the clock its tensor cores hold under
  // dense GEMMs against the sibling that holds the highest (1: that one, or nothing to compare with), which scales
  // its tensor precisions without a measurement (TF32, FP8, INT8).
  double sibling_matmul_fraction = 0;
  std::string sibling_matmul_reference;
  bool sibling_matmul_capped = false;
  double tensor_clock_fraction = 1.0;
  std::string tensor_clock_reference;
  // A tensor format without a measurement of its own (TF32, FP8, INT8) on a device whose 16-bit fraction is known
  // (measured or derived): that fraction times the format's measured fraction over the 16-bit one on a sibling that
  // has both (the lowest ratio where several do), and that sibling's id. Absent: no such sibling.
  std::map<Precision, double> format_matmul_fraction;
  std::map<Precision, std::string> format_matmul_reference;
  std::string origin;  // file it came from ("built-in:catalog/x.yaml" or a path)
  SourceLocation where_id;       // for errors found after loading (duplicate ids, alias clashes)
  SourceLocation where_aliases;

  bool supports(Precision p) const { return peak_flops.count(p) != 0; }
  // The catalog lists `tag` among the device's software stacks (cuda, rocm, tensorrt, ...).
  bool has_software(const std::string& tag) const {
    for (const auto& s : software)
      if (s == tag) return true;
    return false;
  }
  double peak(Precision p) const {
    auto it = peak_flops.find(p);
    return it == peak_flops.end() ? 0.0 : it->second;
  }
};

const char* to_string(DeviceClass c);
std::optional<DeviceClass> parse_device_class(const std::string& s);

// The scale-out network each device gets in the vendor's reference system (the NICs per node divided by the devices
// per node), used when the user gives no --network-gbps. `system` names the reference in words.
struct ReferenceNetwork {
  double gbps = 400;
  std::string system;
};
ReferenceNetwork reference_network(const Device& d);

// The device's dense 16-bit tensor peak (bf16, else fp16), FLOP/s; 0 without one.
double peak16(const Device& d);
// A measurement of the device's own clock under dense GEMMs: a published sustained clock, or an SGEMM on vector
// units that implies one (estimators/efficiency.cpp, sustained_clock_fraction). It wins over a sibling's.
bool own_clock_measured(const Device& d);
// Fills the sibling_matmul_* and tensor_clock_* fields of every device from the measured 16-bit GEMMs of its
// siblings (src/core/device.cpp says how). Called by the registry once all devices are loaded.
void derive_sibling_gemm(std::vector<Device>& devices);

// stale_price_note of the prices a cost rests on: buying new (the street price, else the launch list price, as
// Price::new_purchase_usd picks it) and renting on demand; empty when recent or absent.
std::string stale_purchase_price_note(const Device& d);
std::string stale_rental_price_note(const Device& d);

}  // namespace hwplan
