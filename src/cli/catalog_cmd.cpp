// hwplan catalog list | show ID
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "io/catalog_io.hpp"
#include "report/json.hpp"
#include "report/table.hpp"

namespace hwplan::cli {
namespace {

using nlohmann::json;

struct CatalogOptions {
  GlobalOptions* global = nullptr;
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  std::string device_class;
  std::string vendor;
  std::string id;
};

std::string tflops(const Device& d, Precision p) {
  double v = d.peak(p);
  return v > 0 ? report::num(v / kTera, 1) : "-";
}


std::string price_text(const Device& d) {
  if (d.price.street_usd) return report::money(*d.price.street_usd);
  if (d.price.launch_msrp_usd) return report::money(*d.price.launch_msrp_usd) + " (launch)";
  if (d.price.used_usd) return report::money(*d.price.used_usd) + " (used)";
  if (d.price.cloud_usd_per_hour) return report::money(*d.price.cloud_usd_per_hour) + "/h";
  return "-";
}

std::vector<const Device*> listed_devices(const CatalogOptions& o) {
  const io::Registry& registry = registry_of(*o.global);
  std::vector<const Device*> devices;
  if (!o.device_class.empty() && !parse_device_class(o.device_class))
    throw InputError({}, "class", "'" + o.device_class + "' is not one of: consumer, workstation, datacenter, npu, edge");
  for (const auto& d : registry.devices()) {
    if (!o.device_class.empty() && to_string(d.device_class) != o.device_class) continue;
    if (!o.vendor.empty() && to_lower(d.vendor) != to_lower(o.vendor)) continue;
    devices.push_back(&d);
  }
  return devices;
}

int run_list(const CatalogOptions& o) {
  std::vector<const Device*> devices = listed_devices(o);
  report::Format format = format_of(*o.global);
  if (format == report::Format::kJson) {
    emit(*o.global, report::catalog_json(devices).dump(2) + "\n");
    return 0;
  }
  report::Table t;
  t.header = {"id", "name", "class", "memory GiB", "BW GB/s", "FP32", "BF16/FP16", "FP8", "INT8", "TDP W", "link", "price"};
  t.right_align = {false, false, false, true, true, true, true, true, true, true, false, true};
  for (const Device* d : devices) {
    std::string half = d->supports(Precision::kBf16) ? tflops(*d, Precision::kBf16) : tflops(*d, Precision::kFp16);
    t.rows.push_back({d->id, d->name, to_string(d->device_class), report::num(d->memory_bytes / kGiB, 0),
                      report::num(d->memory_bandwidth_bytes_per_s / kGB, 0), tflops(*d, Precision::kFp32), half,
                      tflops(*d, Precision::kFp8), tflops(*d, Precision::kInt8), report::num(d->tdp_w, 0),
                      d->interconnect.type, price_text(*d)});
    if (format == report::Format::kCsv) {  // numbers with their unit in the column name, one unit per column
      auto buy = d->price.new_purchase_usd();
      t.rows.back().back() = buy ? fmt::format("{}", *buy) : "";
      t.rows.back().push_back(d->price.used_usd ? fmt::format("{}", *d->price.used_usd) : "");
      t.rows.back().push_back(d->price.cloud_usd_per_hour ? fmt::format("{}", *d->price.cloud_usd_per_hour) : "");
    }
  }
  if (format == report::Format::kCsv) {
    t.header.back() = "new_usd";
    t.header.push_back("used_usd");
    t.header.push_back("cloud_usd_per_device_hour");
    t.right_align.push_back(true);
    t.right_align.push_back(true);
  }
  std::string out = report::render(t, format);
  if (format == report::Format::kTable)
    out += fmt::format("\n{} devices. Peak figures are dense TFLOP/s (TOPS for INT8); FP16/BF16 with FP32 accumulate.\n",
                       devices.size());
  emit(*o.global, out);
  return 0;
}

CommandResult catalog_result(const CatalogOptions& o) {
  if (o.list->parsed()) return {report::catalog_json(listed_devices(o)), kExitOk};
  return {report::device_document(registry_of(*o.global).device(o.id)), kExitOk};
}

int run_show(const CatalogOptions& o) {
  const Device& d = registry_of(*o.global).device(o.id);
  if (o.global->format == "yaml") {  // a catalog file that loads back to the same device (--catalog DIR)
    emit(*o.global, io::device_to_yaml(d));
    return 0;
  }
  report::Format format = format_of(*o.global);
  if (format == report::Format::kJson) {
    emit(*o.global, report::device_document(d).dump(2) + "\n");
    return 0;
  }
  report::Table t;
  t.header = {"key", "value", "source"};
  // Sources are long: the table cites them by number and lists them below it.
  std::vector<std::string> cited;
  auto cite = [&](const std::string& text) -> std::string {
    if (text.empty()) return "";
    auto pos = std::find(cited.begin(), cited.end(), text);
    if (pos == cited.end()) {
      cited.push_back(text);
      pos = cited.end() - 1;
    }
    return "[" + std::to_string(pos - cited.begin() + 1) + "]";
  };
  auto src = [&](const std::string& key) -> std::string {
    auto it = d.sources.find(key);
    return it == d.sources.end() ? std::string() : cite(it->second);
  };
  auto row = [&](const std::string& k, const std::string& v, const std::string& source_key) {
    t.rows.push_back({k, v, src(source_key)});
  };
  row("id", d.id, "");
  row("name", d.name, "");
  std::string aliases;
  for (const auto& a : d.aliases) aliases += (aliases.empty() ? "" : "; ") + a;
  row("aliases", aliases, "");
  row("vendor / class", d.vendor + " / " + to_string(d.device_class), "");
  row("architecture", d.architecture + " (family: " + d.architecture_family + ")", "");
  if (d.devices_per_package > 1)
    row("devices per package", fmt::format("{} (this entry describes one of them)", d.devices_per_package),
        "devices_per_package");
  row("release_year", std::to_string(d.release_year), "release_year");
  row("memory", fmt::format("{:.0f} GiB {}", d.memory_bytes / kGiB, d.memory_type), "memory_gib");
  if (d.gpu_memory_limit_bytes)
    row("GPU's share by default", fmt::format("{:.0f} GiB (what plans fill)", *d.gpu_memory_limit_bytes / kGiB), "gpu_memory_limit_gib");
  if (d.reported_memory_bytes)
    row("reported by the driver", fmt::format("{:.0f} MiB (ECC on as shipped; what plans fill)", *d.reported_memory_bytes / kMiB),
        "memory_reported_mib");
  row("memory bandwidth", fmt::format("{:.0f} GB/s", d.memory_bandwidth_bytes_per_s / kGB), "memory_bandwidth_gb_per_s");
  if (d.measured_bandwidth_bytes_per_s)
    row("measured streaming", fmt::format("{:.1f} GB/s (what estimates read and write at)", *d.measured_bandwidth_bytes_per_s / kGB),
        "measured_bandwidth_gb_per_s");
  for (const auto& [p, v] : d.peak_flops) {
    std::string derived;
    auto it = d.derived.find(std::string("peak_tflops.") + to_string(p));
    if (it != d.derived.end()) derived = " (derived: " + it->second + ")";
    row(std::string("peak ") + to_string(p), fmt::format("{:.1f} T{}{}", v / kTera,
                                                         p == Precision::kInt8 || p == Precision::kInt4 ? "OPS" : "FLOP/s", derived),
        "peak_tflops");
  }
  if (d.fp32_matrix_flops) row("peak fp32 (matrix)", fmt::format("{:.1f} TFLOP/s", *d.fp32_matrix_flops / kTera), "peak_tflops");
  // A measurement above the peak (a card holding clocks above its rated boost) is shown as measured; estimates take
  // at most the peak (estimators/efficiency.cpp).
  for (const auto& [p, v] : d.measured_matmul_flops)
    row(std::string("measured matmul ") + to_string(p),
        fmt::format("{:.1f} TFLOP/s ({:.0f}% of peak{})", v / kTera, 100 * v / d.peak(p),
                    v > d.peak(p) ? "; estimates take the peak" : ""),
        "measured_matmul_tflops");
  if (d.sibling_matmul_fraction > 0)
    row("large-GEMM rate (derived)",
        fmt::format("{:.1f} TFLOP/s 16-bit ({:.0f}% of peak): {}", std::min(1.0, d.sibling_matmul_fraction) * peak16(d) / kTera,
                    100 * std::min(1.0, d.sibling_matmul_fraction),
                    d.sibling_matmul_capped ? "as measured on " + d.sibling_matmul_reference + " (no more power per unit)"
                                            : d.sibling_matmul_reference + "'s measured fraction at this TDP per unit"),
        "tdp_w");
  if (d.tensor_clock_fraction < 0.995)
    row("tensor clock under GEMMs (derived)",
        fmt::format("{:.0f}% of {}'s (scales TF32 / FP8 without a measurement)", 100 * d.tensor_clock_fraction,
                    d.tensor_clock_reference),
        "tdp_w");
  if (d.llc_bytes) row("L2 / last-level cache", fmt::format("{:.0f} MiB", *d.llc_bytes / kMiB), "l2_cache_mib");
  if (d.compute_units) row("compute units", std::to_string(*d.compute_units), "compute_units");
  if (d.boost_clock_mhz) row("boost clock", fmt::format("{:.0f} MHz", *d.boost_clock_mhz), "boost_clock_mhz");
  if (d.base_clock_mhz) row("base clock", fmt::format("{:.0f} MHz", *d.base_clock_mhz), "base_clock_mhz");
  if (d.sustained_clock_mhz)
    row("sustained clock (measured)", fmt::format("{:.0f} MHz", *d.sustained_clock_mhz), "sustained_clock_mhz");
  row("TDP", fmt::format("{:.0f} W", d.tdp_w), "tdp_w");
  row("host link", d.host_link.type == "pcie" ? fmt::format("PCIe {}.0 x{} ({:.1f} GB/s per direction)", d.host_link.pcie_gen,
                                                           d.host_link.pcie_lanes, d.host_link.bytes_per_s() / kGB)
                                             : d.host_link.type,
      "host_link");
  row("interconnect", d.interconnect.type == "none" ? "none (cannot pool memory across devices)"
                                                    : fmt::format("{} {:.0f} GB/s bidirectional, {} devices{}", d.interconnect.type,
                                                                  d.interconnect.bidirectional_bytes_per_s / kGB, d.interconnect.domain_size,
                                                                  d.interconnect.mesh ? ", point to point (mesh)" : ""),
      "interconnect");
  std::string sw;
  for (const auto& s : d.software) sw += (sw.empty() ? "" : ", ") + s;
  row("software", sw + (d.training ? "" : " (inference only)"), "");
  static const std::map<std::string, std::string> kPriceLabels = {{"launch_msrp", "launch list price"},
                                                                   {"street", "street price (new)"},
                                                                   {"used", "used price"},
                                                                   {"cloud", "cloud on-demand"},
                                                                   {"cloud_reserved", "cloud reserved"}};
  for (const auto& q : quotes_of(d.price)) {
    std::string value = report::money(q.usd) + (q.per_hour ? " per device-hour" : "") + " (" + q.date +
                        (q.provider.empty() ? "" : ", " + q.provider) + ")";
    auto origin = d.price.origins.find(q.kind);
    if (origin != d.price.origins.end()) value += " [your quote, " + origin->second + "]";
    t.rows.push_back({kPriceLabels.at(q.kind), value, cite(q.source)});
  }
  row("confidence", d.confidence, "");
  row("defined in", d.origin, "");
  std::string out = report::render(t, format);
  out += format == report::Format::kMarkdown ? "\nSources:\n\n" : "\nSources:\n";
  for (std::size_t i = 0; i < cited.size(); ++i) out += fmt::format("[{}] {}\n", i + 1, cited[i]);
  if (!d.notes.empty()) out += "\nNotes: " + d.notes + "\n";
  emit(*o.global, out);
  return 0;
}

}  // namespace

Command catalog_command() {
  auto o = std::make_shared<CatalogOptions>();
  Command c;
  c.name = "catalog";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    auto* cat = app.add_subcommand("catalog", "List and show the hardware catalog");
    cat->require_subcommand(1);
    o->list = cat->add_subcommand("list", "List devices (hwplan catalog list --class consumer --format csv)");
    o->list->add_option("--class", o->device_class, "consumer | workstation | datacenter | npu | edge");
    o->list->add_option("--vendor", o->vendor, "nvidia | amd | intel | google | huawei | qualcomm | apple");
    add_format_option(*o->list, g);
    o->show = cat->add_subcommand("show", "Show one device with the source of every figure");
    o->show->add_option("id", o->id, "Device id, alias or driver name")->required();
    o->show->add_option("--format", g.format, "Output format (yaml: a catalog file that loads back to the same device)")
        ->check(CLI::IsMember({"table", "json", "csv", "markdown", "yaml"}))
        ->capture_default_str();
    o->show->add_option("-o,--output", g.output, "Write the output to FILE (atomically) instead of stdout")->type_name("FILE");
  };
  c.parsed = [o] { return o->list->parsed() || o->show->parsed(); };
  c.run = [o] { return o->list->parsed() ? run_list(*o) : run_show(*o); };
  c.result = [o] { return catalog_result(*o); };
  c.reset = [o] {
    o->device_class.clear();
    o->vendor.clear();
    o->id.clear();
  };
  return c;
}

}  // namespace hwplan::cli
