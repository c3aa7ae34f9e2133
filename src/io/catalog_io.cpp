#include "io/catalog_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/precision.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "io/yaml_map.hpp"

namespace hwplan::io {
namespace {

const std::vector<std::string> kSourcedKeys = {
    "release_year",     "memory_gib",          "memory_type",    "memory_bandwidth_gb_per_s", "measured_bandwidth_gb_per_s", "peak_tflops",
    "vector_tflops",    "measured_matmul_tflops", "l2_cache_mib", "compute_units",            "boost_clock_mhz",
    "base_clock_mhz",   "sustained_clock_mhz", "devices_per_package", "tdp_w",                "host_link",
    "interconnect",     "price",               "gpu_memory_limit_gib", "memory_reported_mib"};

const std::vector<std::string> kInterconnectTypes = {
    "none", "nvlink2", "nvlink3", "nvlink4", "nvlink5", "nvlink-bridge", "infinity-fabric", "hccs", "roce", "ici",
    "neuronlink"};
const std::vector<std::string> kHostLinkTypes = {"pcie", "usb3", "soc", "cloud"};
const std::vector<std::string> kVendors = {"nvidia", "amd", "intel", "google", "huawei", "qualcomm", "apple", "aws"};
const std::vector<std::string> kSoftware = {"cuda",     "cudnn", "tensorrt", "rocm",    "cann", "mindspore", "synapseai", "xla",
                                            "jax",      "tflite", "coreml",  "snpe",    "qnn",  "jetpack",   "openvino",  "mlx",
                                            "pytorch",  "onnxruntime", "tensorflow", "edgetpu", "litert", "torch-npu", "neuron"};

// Architecture family: lower-case words joined by single hyphens ("hopper", "ampere-ga100", "tpu-v5e"). It keys the
// per-architecture assumptions, so it is required even in a user's own file.
std::string read_architecture_family(YamlMap& m) {
  static const std::regex kFamily("[a-z0-9]+(-[a-z0-9]+)*");
  const char* kExpected =
      "expected a lower-case family name of letters, digits and single hyphens, e.g. volta, turing, ampere-ga100, "
      "ampere-ga10x, ada, hopper, blackwell, cdna2, cdna3, gaudi2, tpu-v4";
  std::string family;
  try {
    family = *m.str("architecture_family", true);
  } catch (const InputError& e) {
    // A typo of the key is reported as such (its key differs); a plain omission says what to write.
    if (e.key() != "architecture_family" || m.has("architecture_family")) throw;
    m.fail("architecture_family", std::string("required key is missing: ") + kExpected);
  }
  if (!std::regex_match(family, kFamily)) m.fail("architecture_family", "'" + family + "' is not valid: " + kExpected);
  return family;
}

// Clocks in MHz: base (guaranteed at TDP) and a published sustained-GEMM measurement, each at most the boost clock.
void read_clocks(YamlMap& m, Device& d) {
  if (auto v = m.number("boost_clock_mhz", false, 0, 1e5)) d.boost_clock_mhz = *v;
  if (auto v = m.number("base_clock_mhz", false, 0, 1e5)) d.base_clock_mhz = *v;
  if (auto v = m.number("sustained_clock_mhz", false, 0, 1e5)) d.sustained_clock_mhz = *v;
  auto above_boost = [&](const char* key, double mhz) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%g MHz is above boost_clock_mhz (%g MHz); expected at most the boost clock", mhz,
                  *d.boost_clock_mhz);
    m.fail(key, buf);
  };
  if (d.boost_clock_mhz && d.base_clock_mhz && *d.base_clock_mhz > *d.boost_clock_mhz)
    above_boost("base_clock_mhz", *d.base_clock_mhz);
  if (d.boost_clock_mhz && d.sustained_clock_mhz && *d.sustained_clock_mhz > *d.boost_clock_mhz)
    above_boost("sustained_clock_mhz", *d.sustained_clock_mhz);
}

void check_id(YamlMap& m, const std::string& id) {
  static const std::regex kIdPattern("[a-z0-9][a-z0-9.-]*");
  if (!std::regex_match(id, kIdPattern))
    m.fail("id", "'" + id + "' is not a valid id (lower-case letters, digits, '.', '-')");
}

std::string require_one_of(YamlMap& m, const std::string& key, const std::string& value,
                           const std::vector<std::string>& allowed) {
  for (const auto& a : allowed)
    if (a == value) return value;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  m.fail(key, "'" + value + "' is not one of: " + list);
}


// Price quotes: each kind has its amount, a YYYY-MM date and a source; rentals name the provider (the built-in
// catalog always does; a user's file may leave it out). Used by catalog files
// and by --prices files alike, so a user's quote is held to the same rules as a built-in one.
struct PriceKindKeys {
  const char* kind;
  const char* amount;
  bool rental;
};
const PriceKindKeys kPriceKinds[] = {{"launch_msrp", "launch_msrp_usd", false},
                                     {"street", "street_usd", false},
                                     {"used", "used_usd", false},
                                     {"cloud", "cloud_usd_per_hour", true},
                                     {"cloud_reserved", "cloud_reserved_usd_per_hour", true}};

std::optional<double>& amount_of(Price& p, const std::string& kind) {
  if (kind == "launch_msrp") return p.launch_msrp_usd;
  if (kind == "street") return p.street_usd;
  if (kind == "used") return p.used_usd;
  if (kind == "cloud") return p.cloud_usd_per_hour;
  return p.cloud_reserved_usd_per_hour;
}
std::string& date_of(Price& p, const std::string& kind) {
  if (kind == "launch_msrp") return p.launch_msrp_date;
  if (kind == "street") return p.street_date;
  if (kind == "used") return p.used_date;
  if (kind == "cloud") return p.cloud_date;
  return p.cloud_reserved_date;
}

std::string general_price_source(YamlMap& m) {
  const YAML::Node& node = m.node()["sources"];
  if (node && node.IsMap() && node["price"] && node["price"].IsScalar()) return node["price"].as<std::string>();
  return "";
}

// Reads every price key of `m` into `p`. A kind given here replaces the whole quote (amount, date, source,
// provider); kinds not named are left as they were. `fallback_source` cites quotes without their own source.
void read_price(YamlMap& m, Price& p, const std::string& fallback_source, const std::string& origin = "") {
  static const std::regex kDate("(19|20)[0-9]{2}-(0[1-9]|1[0-2])");
  // Unknown keys first, so that a typo (`street_dat`) is named as such rather than as a missing date.
  std::vector<std::string> known = {"cloud_reserved_term", "rent_only", "rent_only_source"};
  for (const auto& k : kPriceKinds) {
    for (const char* suffix : {"_date", "_source"}) known.push_back(std::string(k.kind) + suffix);
    known.push_back(k.amount);
    if (k.rental) known.push_back(std::string(k.kind) + "_provider");
  }
  for (const auto& key : m.keys())
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      auto near = nearest(key, known);
      m.fail(key, "unknown key" + (near ? "; did you mean '" + *near + "'?" : std::string()));
    }
  if (auto only = m.boolean("rent_only", false)) {
    auto source = m.str("rent_only_source", false);
    if (*only && !source && fallback_source.empty())
      m.fail("rent_only", "needs rent_only_source beside it (where the vendor says it is only rented)");
    p.rent_only = *only;
    if (*only) p.sources["rent_only"] = source ? *source : fallback_source;
    else p.sources.erase("rent_only");
  } else if (m.has("rent_only_source")) {
    m.fail("rent_only_source", "is given without rent_only");
  }
  for (const auto& k : kPriceKinds) {
    std::string kind = k.kind;
    auto amount = m.number(k.amount, false, 0, k.rental ? 1e5 : 1e9);
    auto date = m.str(kind + "_date", false);
    auto source = m.str(kind + "_source", false);
    std::optional<std::string> provider, term;
    if (k.rental) provider = m.str(kind + "_provider", false);
    if (kind == "cloud_reserved") term = m.str("cloud_reserved_term", false);
    if (!amount) {
      for (const char* extra : {"_date", "_source", "_provider", "_term"})
        if (m.has(kind + extra)) m.fail(kind + extra, std::string("is given without ") + k.amount);
      continue;
    }
    if (!date) m.fail(k.amount, "needs " + kind + "_date (YYYY-MM, when the price was quoted) beside it");
    if (!std::regex_match(*date, kDate)) m.fail(kind + "_date", "'" + *date + "' is not a YYYY-MM date");
    // A quote of your own cannot be dated after today (a typo of the year, most often): the old-price notes and
    // the choice between quotes read the date.
    if (!origin.empty()) {
      const auto [year, month] = today_year_month();
      if (months_between(*date, year, month) < 0) {
        char today[16];
        std::snprintf(today, sizeof today, "%04d-%02d", year, month);
        m.fail(kind + "_date", "'" + *date + "' is after today (" + today + "): give the month the price was quoted");
      }
    }
    std::string cited = source ? *source : fallback_source;
    if (cited.empty())
      m.fail(k.amount, "needs " + kind + "_source beside it (who quoted this price: a pricing page, a retailer, a report)");
    if (provider && provider->empty()) m.fail(kind + "_provider", "must not be empty (the cloud that rents at this price)");
    if (term && term->empty()) m.fail("cloud_reserved_term", "must not be empty");
    amount_of(p, kind) = amount;
    date_of(p, kind) = *date;
    p.sources[kind] = cited;
    if (origin.empty()) p.origins.erase(kind);
    else p.origins[kind] = origin;
    if (kind == "cloud") p.cloud_provider = provider.value_or("");
    if (kind == "cloud_reserved") {
      p.cloud_reserved_provider = provider.value_or("");
      p.cloud_reserved_term = term.value_or("");
    }
  }
}

}  // namespace

Device parse_device(const std::string& text, const std::string& file) {
  YamlMap m(parse_document(text, file), file);
  Device d;
  d.origin = file;
  d.id = *m.str("id", true);
  check_id(m, d.id);
  d.where_id = m.where("id");

  d.name = *m.str("name", true);
  d.aliases = *m.string_list("aliases", true);
  d.where_aliases = m.where("aliases");
  d.vendor = require_one_of(m, "vendor", *m.str("vendor", true), kVendors);
  std::string cls = *m.str("class", true);
  auto parsed_class = parse_device_class(cls);
  if (!parsed_class) m.fail("class", "'" + cls + "' is not one of: consumer, workstation, datacenter, npu, edge");
  d.device_class = *parsed_class;
  d.architecture = *m.str("architecture", true);
  d.architecture_family = read_architecture_family(m);
  d.release_year = static_cast<int>(*m.integer("release_year", true, 1990, 2100));

  double memory_gib = *m.number("memory_gib", true, 0, 1e6, /*min_exclusive=*/false);
  d.memory_bytes = memory_gib * kGiB;
  if (auto limit = m.number("gpu_memory_limit_gib", false, 0, 1e6, /*min_exclusive=*/true)) {
    if (*limit > memory_gib) m.fail("gpu_memory_limit_gib", "is more than memory_gib");
    d.gpu_memory_limit_bytes = *limit * kGiB;
  }
  if (auto reported = m.number("memory_reported_mib", false, 0, 1e9, /*min_exclusive=*/true)) {
    if (*reported * kMiB > d.memory_bytes) m.fail("memory_reported_mib", "is more than memory_gib");
    d.reported_memory_bytes = *reported * kMiB;
  }
  d.memory_type = *m.str("memory_type", true);
  d.memory_bandwidth_bytes_per_s = *m.number("memory_bandwidth_gb_per_s", true, 0, 1e6) * kGB;
  if (auto v = m.number("measured_bandwidth_gb_per_s", false, 0, 1e6, /*min_exclusive=*/true)) {
    if (*v * kGB > d.memory_bandwidth_bytes_per_s)
      m.fail("measured_bandwidth_gb_per_s", "is more than memory_bandwidth_gb_per_s (it is what the device reaches of it)");
    d.measured_bandwidth_bytes_per_s = *v * kGB;
  }

  auto peaks = *m.map("peak_tflops", true);
  static const std::vector<std::string> kPeakKeys = {"fp64", "fp32", "tf32", "fp16", "bf16",
                                                     "fp8",  "int8", "int4", "fp4"};
  for (const auto& key : kPeakKeys)
    if (auto v = peaks.number(key, false, 0, 1e6)) d.peak_flops[*parse_precision(key)] = *v * kTera;
  if (auto v = peaks.number("fp32_matrix", false, 0, 1e6)) d.fp32_matrix_flops = *v * kTera;
  peaks.finish();
  if (d.peak_flops.empty()) m.fail("peak_tflops", "needs at least one precision");

  if (auto measured = m.map("measured_matmul_tflops", false)) {
    for (const auto& key : measured->keys()) {
      auto p = parse_precision(key);
      if (!p) measured->fail(key, "is not a precision (fp32, tf32, fp16, bf16, fp8, int8)");
      d.measured_matmul_flops[*p] = *measured->number(key, true, 0, 1e6) * kTera;
    }
  }
  if (auto v = m.number("vector_tflops", false, 0, 1e6)) d.vector_flops = *v * kTera;
  if (auto v = m.number("l2_cache_mib", false, 0, 1e6)) d.llc_bytes = *v * kMiB;
  if (auto v = m.integer("compute_units", false, 1, 1000000)) d.compute_units = static_cast<int>(*v);
  read_clocks(m, d);
  d.devices_per_package = static_cast<int>(m.integer("devices_per_package", false, 1, 16).value_or(1));
  d.tdp_w = *m.number("tdp_w", true, 0, 1e5);

  auto host = *m.map("host_link", true);
  d.host_link.type = require_one_of(host, "type", *host.str("type", true), kHostLinkTypes);
  if (d.host_link.type == "pcie") {
    d.host_link.pcie_gen = static_cast<int>(*host.integer("pcie_gen", true, 1, 7));
    d.host_link.pcie_lanes = static_cast<int>(*host.integer("pcie_lanes", true, 1, 32));
  } else {
    if (auto g = host.integer("pcie_gen", false, 1, 7)) d.host_link.pcie_gen = static_cast<int>(*g);
    if (auto l = host.integer("pcie_lanes", false, 1, 32)) d.host_link.pcie_lanes = static_cast<int>(*l);
  }
  host.finish();

  auto link = *m.map("interconnect", true);
  d.interconnect.type = require_one_of(link, "type", *link.str("type", true), kInterconnectTypes);
  bool none = d.interconnect.type == "none";
  d.interconnect.bidirectional_bytes_per_s =
      link.number("bandwidth_bidirectional_gb_per_s", !none, 0, 1e6, /*min_exclusive=*/!none).value_or(0) * kGB;
  if (!none && d.interconnect.bidirectional_bytes_per_s <= 0)
    link.fail("bandwidth_bidirectional_gb_per_s", "must be positive for a " + d.interconnect.type + " link");
  d.interconnect.domain_size = static_cast<int>(link.integer("domain_size", !none, 1, 1000000).value_or(1));
  if (none && d.interconnect.bidirectional_bytes_per_s > 0)
    link.fail("bandwidth_bidirectional_gb_per_s", "must be 0 for interconnect type none");
  for (auto [key, into] : {std::pair{"in_package_bidirectional_gb_per_s", &d.interconnect.in_package_bidirectional_bytes_per_s},
                           std::pair{"between_packages_bidirectional_gb_per_s", &d.interconnect.between_packages_bidirectional_bytes_per_s}}) {
    auto v = link.number(key, false, 0, 1e6, /*min_exclusive=*/true);
    if (!v) continue;
    if (d.devices_per_package <= 1) link.fail(key, "applies only to a device with devices_per_package above 1");
    if (*v * kGB > d.interconnect.bidirectional_bytes_per_s)
      link.fail(key, "cannot exceed bandwidth_bidirectional_gb_per_s (the device's links all together)");
    *into = *v * kGB;
  }
  if (auto t = link.str("topology", false)) {
    if (*t != "mesh" && *t != "switch") link.fail("topology", "must be mesh or switch, not '" + *t + "'");
    d.interconnect.mesh = *t == "mesh";
  }
  link.finish();

  d.software = *m.string_list("software", true);
  for (const auto& sw : d.software)
    if (std::find(kSoftware.begin(), kSoftware.end(), sw) == kSoftware.end()) {
      std::string list;
      for (const auto& a : kSoftware) list += (list.empty() ? "" : ", ") + a;
      m.fail("software", "'" + sw + "' is not a known software stack (" + list + ")");
    }
  d.training = *m.boolean("training", true);

  if (auto price = m.map("price", false)) {
    // A quote's citation sits beside it (`street_source`); a file-wide `sources.price` covers quotes without one.
    read_price(*price, d.price, m.has("sources") ? general_price_source(m) : std::string());
    price->finish();
    if (d.price.empty()) m.fail("price", "has no price: give launch_msrp_usd, street_usd, used_usd, cloud_usd_per_hour "
                                         "or cloud_reserved_usd_per_hour, or leave the key out");
  }

  std::string confidence = *m.str("confidence", true);
  static const std::vector<std::string> kConfidence = {"high", "medium", "low"};
  d.confidence = require_one_of(m, "confidence", confidence, kConfidence);

  auto sources = *m.map("sources", true);
  for (const auto& key : sources.keys()) {
    d.sources[key] = *sources.str(key, true);
  }
  for (const auto& key : kSourcedKeys)
    if (m.has(key) && !d.sources.count(key) && key != "price")
      sources.fail(key, "figure '" + key + "' has no source: add `" + key + ": \"<datasheet or URL>\"` under sources");
  for (const auto& [key, source] : d.sources)
    if (std::find(kSourcedKeys.begin(), kSourcedKeys.end(), key) == kSourcedKeys.end())
      sources.fail(key, "is not a figure key of the catalog schema");

  if (auto derived = m.map("derived", false)) {
    for (const auto& key : derived->keys()) {
      bool figure = std::find(kSourcedKeys.begin(), kSourcedKeys.end(), key) != kSourcedKeys.end();
      bool peak = key.rfind("peak_tflops.", 0) == 0 && (parse_precision(key.substr(12)) || key.substr(12) == "fp32_matrix");
      if (!figure && !peak)
        derived->fail(key, "is not a figure key (" + std::string("memory_gib, peak_tflops.<precision>, tdp_w, ...") + ")");
      d.derived[key] = *derived->str(key, true);
    }
  }
  d.notes = m.str("notes", false).value_or("");
  m.finish();

  if (d.memory_bytes <= 0 && d.device_class != DeviceClass::kEdge)
    m.fail("memory_gib", "a " + std::string(to_string(d.device_class)) + " device must have memory (found 0)");
  return d;
}

Device load_device_file(const std::string& path) {
  return parse_device(read_text_file(path, "file"), path);
}

namespace {

// A figure in its file unit: the shortest text within 12 significant digits, so that a value converted to base
// units and back (x 1e9 / 1e9) prints as it was written, and printing what was read back gives the same text.
// Plain decimals (120, 82.6, 0.35) for everyday magnitudes, exponent notation only outside them.
std::string figure(double v) {
  char buf[64];
  auto close = [&] {
    double back = std::strtod(buf, nullptr);
    return back == v || std::fabs(back - v) <= 1e-12 * std::fabs(v);
  };
  if (v == 0 || (std::fabs(v) >= 1e-4 && std::fabs(v) < 1e12)) {
    for (int decimals = 0; decimals <= 16; ++decimals) {
      std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
      if (close()) return buf;
    }
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (close()) break;
  }
  return buf;
}

std::string string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + yaml_quoted(items[i]);
  return out + "]";
}

void write_price(std::ostringstream& o, const Price& p) {
  if (p.empty()) return;
  o << "price:\n";
  for (const auto& q : quotes_of(p)) {
    std::string kind = q.kind;
    o << "  " << kind << (q.per_hour ? "_usd_per_hour: " : "_usd: ") << figure(q.usd) << "\n";
    o << "  " << kind << "_date: " << yaml_quoted(q.date) << "\n";
    if (!q.source.empty()) o << "  " << kind << "_source: " << yaml_quoted(q.source) << "\n";
    const std::string& provider = kind == "cloud" ? p.cloud_provider : p.cloud_reserved_provider;
    if (q.per_hour && !provider.empty()) o << "  " << kind << "_provider: " << yaml_quoted(provider) << "\n";
  }
  if (p.cloud_reserved_usd_per_hour && !p.cloud_reserved_term.empty())
    o << "  cloud_reserved_term: " << yaml_quoted(p.cloud_reserved_term) << "\n";
  if (p.rent_only) {
    o << "  rent_only: true\n";
    if (auto it = p.sources.find("rent_only"); it != p.sources.end()) o << "  rent_only_source: " << yaml_quoted(it->second) << "\n";
  }
}

void write_map(std::ostringstream& o, const char* key, const std::map<std::string, std::string>& items) {
  if (items.empty()) {
    o << key << ": {}\n";
    return;
  }
  o << key << ":\n";
  for (const auto& [k, v] : items) o << "  " << k << ": " << yaml_quoted(v) << "\n";
}

}  // namespace

std::string device_to_yaml(const Device& d) {
  std::ostringstream o;
  o << "id: " << d.id << "\nname: " << yaml_quoted(d.name) << "\naliases: " << string_list(d.aliases) << "\n";
  o << "vendor: " << d.vendor << "\nclass: " << to_string(d.device_class) << "\n";
  o << "architecture: " << yaml_quoted(d.architecture) << "\narchitecture_family: " << d.architecture_family << "\n";
  o << "release_year: " << d.release_year << "\n";
  o << "memory_gib: " << figure(d.memory_bytes / kGiB) << "\nmemory_type: " << yaml_quoted(d.memory_type) << "\n";
  if (d.gpu_memory_limit_bytes) o << "gpu_memory_limit_gib: " << figure(*d.gpu_memory_limit_bytes / kGiB) << "\n";
  if (d.reported_memory_bytes) o << "memory_reported_mib: " << figure(*d.reported_memory_bytes / kMiB) << "\n";
  o << "memory_bandwidth_gb_per_s: " << figure(d.memory_bandwidth_bytes_per_s / kGB) << "\n";
  if (d.measured_bandwidth_bytes_per_s) o << "measured_bandwidth_gb_per_s: " << figure(*d.measured_bandwidth_bytes_per_s / kGB) << "\n";
  o << "peak_tflops: {";
  bool first = true;
  for (const auto& [p, v] : d.peak_flops) {
    o << (first ? "" : ", ") << to_string(p) << ": " << figure(v / kTera);
    first = false;
  }
  if (d.fp32_matrix_flops) o << ", fp32_matrix: " << figure(*d.fp32_matrix_flops / kTera);
  o << "}\n";
  if (!d.measured_matmul_flops.empty()) {
    o << "measured_matmul_tflops: {";
    first = true;
    for (const auto& [p, v] : d.measured_matmul_flops) {
      o << (first ? "" : ", ") << to_string(p) << ": " << figure(v / kTera);
      first = false;
    }
    o << "}\n";
  }
  if (d.vector_flops) o << "vector_tflops: " << figure(*d.vector_flops / kTera) << "\n";
  if (d.llc_bytes) o << "l2_cache_mib: " << figure(*d.llc_bytes / kMiB) << "\n";
  if (d.compute_units) o << "compute_units: " << *d.compute_units << "\n";
  if (d.boost_clock_mhz) o << "boost_clock_mhz: " << figure(*d.boost_clock_mhz) << "\n";
  if (d.base_clock_mhz) o << "base_clock_mhz: " << figure(*d.base_clock_mhz) << "\n";
  if (d.sustained_clock_mhz) o << "sustained_clock_mhz: " << figure(*d.sustained_clock_mhz) << "\n";
  if (d.devices_per_package != 1) o << "devices_per_package: " << d.devices_per_package << "\n";
  o << "tdp_w: " << figure(d.tdp_w) << "\n";
  // A SoC, USB or cloud device has no PCIe generation: the keys are left out rather than written as 0.
  o << "host_link: {type: " << d.host_link.type;
  if (d.host_link.pcie_gen > 0) o << ", pcie_gen: " << d.host_link.pcie_gen;
  if (d.host_link.pcie_lanes > 0) o << ", pcie_lanes: " << d.host_link.pcie_lanes;
  o << "}\n";
  o << "interconnect: {type: " << d.interconnect.type
    << ", bandwidth_bidirectional_gb_per_s: " << figure(d.interconnect.bidirectional_bytes_per_s / kGB)
    << ", domain_size: " << d.interconnect.domain_size;
  if (d.interconnect.mesh) o << ", topology: mesh";
  if (d.interconnect.in_package_bidirectional_bytes_per_s > 0)
    o << ", in_package_bidirectional_gb_per_s: " << figure(d.interconnect.in_package_bidirectional_bytes_per_s / kGB);
  if (d.interconnect.between_packages_bidirectional_bytes_per_s > 0)
    o << ", between_packages_bidirectional_gb_per_s: " << figure(d.interconnect.between_packages_bidirectional_bytes_per_s / kGB);
  o << "}\n";
  o << "software: [";
  for (std::size_t i = 0; i < d.software.size(); ++i) o << (i ? ", " : "") << d.software[i];
  o << "]\ntraining: " << (d.training ? "true" : "false") << "\n";
  write_price(o, d.price);
  o << "confidence: " << d.confidence << "\n";
  write_map(o, "sources", d.sources);
  if (!d.derived.empty()) write_map(o, "derived", d.derived);
  if (!d.notes.empty()) o << "notes: " << yaml_quoted(d.notes) << "\n";
  return o.str();
}

}  // namespace hwplan::io

namespace hwplan::io {

void apply_price_file(std::vector<Device>& devices, const std::string& path) {
  apply_price_text(devices, read_text_file(path, "prices file"), path);
}

void apply_price_text(std::vector<Device>& devices, const std::string& text, const std::string& path) {
  YAML::Node root = parse_document(text, path);
  if (!root.IsMap())
    throw InputError(location_of(root, path), "", "a prices file is a map of device ids to prices, e.g. "
                                                   "`h100-sxm: {street_usd: 24000, street_date: \"2026-11\"}`");
  YamlMap top(root, path);
  for (const auto& id : top.keys()) {
    auto it = std::find_if(devices.begin(), devices.end(), [&](const Device& d) { return d.id == id; });
    if (it == devices.end()) {
      std::vector<std::string> ids;
      for (const auto& d : devices) ids.push_back(d.id);
      std::string message = "unknown device id";
      if (auto near = nearest(id, ids)) message += "; did you mean '" + *near + "'?";
      top.fail(id, message);
    }
    auto entry = *top.map(id, true);
    SourceLocation where = top.where(id);
    std::string origin = path + ":" + std::to_string(where.line);
    Price updated = it->price;
    read_price(entry, updated, "your quote (" + origin + ")", origin);
    entry.finish();
    if (entry.keys().empty()) top.fail(id, "gives no price");
    it->price = std::move(updated);
  }
  top.finish();
}

}  // namespace hwplan::io
