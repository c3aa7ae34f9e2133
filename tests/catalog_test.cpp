// The built-in catalog as loaded (src/io/catalog_io): every device names its architecture family, clocks are
// ordered, figures are sourced, and multi-die packages are described per framework device.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <regex>
#include <sstream>

#include "core/strings.hpp"
#include "core/units.hpp"
#include "estimators/efficiency.hpp"
#include "io/catalog_io.hpp"
#include "test_util.hpp"

using namespace hwplan;

namespace {

std::string read_source(const std::string& rel) {
  std::ifstream in(test::source_path(rel));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces the first occurrence of `from` (which must exist) in `text`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("PCIe host links: per-direction rates of each generation (128b/130b from gen 3)") {
  auto rate = [](int gen, int lanes) {
    hwplan::HostLink l;
    l.type = "pcie";
    l.pcie_gen = gen;
    l.pcie_lanes = lanes;
    return l.bytes_per_s() / 1e9;
  };
  CHECK(rate(1, 16) == ::hwplan::test::approx(4.0));
  CHECK(rate(2, 16) == ::hwplan::test::approx(8.0));
  CHECK(rate(3, 16) == ::hwplan::test::approx(15.754).epsilon(1e-3));
  CHECK(rate(4, 16) == ::hwplan::test::approx(31.508).epsilon(1e-3));
  CHECK(rate(5, 16) == ::hwplan::test::approx(63.015).epsilon(1e-3));
  CHECK(rate(4, 8) == ::hwplan::test::approx(15.754).epsilon(1e-3));
}

TEST_CASE("every built-in device has an architecture family") {
  const std::regex family("[a-z0-9]+(-[a-z0-9]+)*");
  const auto& devices = test::registry().devices();
  REQUIRE(devices.size() >= 40);
  for (const auto& d : devices) {
    CAPTURE(d.id);
    CHECK(std::regex_match(d.architecture_family, family));
  }
  CHECK(test::registry().device("h100-sxm").architecture_family == "hopper");
  CHECK(test::registry().device("a100-80gb-sxm").architecture_family == "ampere-ga100");
  CHECK(test::registry().device("rtx-3090").architecture_family == "ampere-ga10x");
  CHECK(test::registry().device("mi250").architecture_family == "cdna2");
}

TEST_CASE("clocks: base and sustained at most the boost clock, each with a source") {
  int with_base = 0;
  for (const auto& d : test::registry().devices()) {
    CAPTURE(d.id);
    if (d.base_clock_mhz) {
      ++with_base;
      CHECK(*d.base_clock_mhz > 0);
      CHECK(d.sources.count("base_clock_mhz") == 1);
      if (d.boost_clock_mhz) CHECK(*d.base_clock_mhz <= *d.boost_clock_mhz);
    }
    if (d.sustained_clock_mhz) {
      CHECK(d.sources.count("sustained_clock_mhz") == 1);
      if (d.boost_clock_mhz) CHECK(*d.sustained_clock_mhz <= *d.boost_clock_mhz);
    }
    CHECK(d.devices_per_package >= 1);
    if (d.devices_per_package > 1) CHECK(d.sources.count("devices_per_package") == 1);
  }
  // The GPUs whose base clock could be sourced (vendor or TechPowerUp GPU database): 17 of the catalog's 30 GPUs (Jetson included).
  CHECK(with_base >= 17);
  // Tesla T4: base 585 MHz, boost 1590 MHz (TechPowerUp GPU Database, 'Tesla T4'). Exact.
  const Device& t4 = test::registry().device("t4");
  REQUIRE(t4.base_clock_mhz);
  CHECK(*t4.base_clock_mhz == 585.0);
  CHECK(*t4.boost_clock_mhz == 1590.0);
}

TEST_CASE("MI250 and MI250X are described per GCD, as ROCm and PyTorch see them") {
  // ROCm 'AMD Instinct MI250 microarchitecture': each of the two GCDs of an OAM is one GPU device with 1.6 TB/s;
  // GPU hardware specifications table: 128 GiB and 208 (MI250) / 220 (MI250X) CUs per OAM. Exact.
  for (const char* id : {"mi250", "mi250x"}) {
    CAPTURE(id);
    const Device& d = test::registry().device(id);
    CHECK(d.devices_per_package == 2);
    CHECK(d.memory_bytes / kGiB == 64.0);
    CHECK(d.memory_bandwidth_bytes_per_s / kGB == ::hwplan::test::approx(1638.4).epsilon(1e-9));
    CHECK(d.derived.count("memory_gib") == 1);
    CHECK(d.interconnect.type == "infinity-fabric");
    CHECK(d.interconnect.domain_size == 8);
  }
  CHECK(*test::registry().device("mi250").compute_units == 104);
  CHECK(*test::registry().device("mi250x").compute_units == 110);
  // One GCD of an MI250 is the MI210's die: the same peak (181 TFLOPS FP16 dense, AMD MI210 datasheet), within 0.1%.
  CHECK(test::registry().device("mi250").peak(Precision::kFp16) ==
        ::hwplan::test::approx(test::registry().device("mi210").peak(Precision::kFp16)).epsilon(0.001));
  // The name older ROCm releases report for both parts, and the MI250's own, map to the MI250 GCD.
  CHECK(test::registry().device("AMD Instinct MI250X / MI250").id == "mi250");
  CHECK(test::registry().device("amd instinct mi250").id == "mi250");
  CHECK(test::registry().device("AMD Instinct MI250X").id == "mi250x");
}

TEST_CASE("catalog show reports the family, clocks and devices per package") {
  auto j = test::run_hwplan("catalog show mi250 --format json");
  REQUIRE(j.exit_code == 0);
  auto doc = nlohmann::json::parse(j.out)["device"];
  CHECK(doc["memory_gib"] == 64.0);
  CHECK(doc["devices_per_package"] == 2);
  CHECK(doc["architecture_family"] == "cdna2");
  auto t4 = nlohmann::json::parse(test::run_hwplan("catalog show t4 --format json").out)["device"];
  CHECK(t4["base_clock_mhz"] == 585.0);
  CHECK(t4["boost_clock_mhz"] == 1590.0);
  CHECK(t4["devices_per_package"] == 1);
  auto table = test::run_hwplan("catalog show t4");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("family: turing") != std::string::npos);
  CHECK(table.out.find("base clock") != std::string::npos);
  CHECK(table.out.find("585 MHz") != std::string::npos);
  auto mi = test::run_hwplan("catalog show mi250");
  CHECK(mi.out.find("devices per package") != std::string::npos);
}

TEST_CASE("the loader: family required with a clear message, clocks checked against the boost clock") {
  const std::string h100 = read_source("catalog/h100-sxm.yaml");
  Device d = io::parse_device(h100, "h100.yaml");
  CHECK(d.architecture_family == "hopper");
  CHECK(d.devices_per_package == 1);

  auto message = [](const std::string& text) -> std::string {
    try {
      io::parse_device(text, "user.yaml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  std::string missing = message(replaced(h100, "architecture_family: hopper\n", ""));
  CHECK(missing.rfind("user.yaml:1:1: key 'architecture_family': required key is missing", 0) == 0);
  CHECK(missing.find("e.g.") != std::string::npos);
  CHECK(message(replaced(h100, "architecture_family: hopper", "architecture_family: Hopper")).find("'Hopper' is not valid") !=
        std::string::npos);

  std::string boost = "boost_clock_mhz: 1980\n";
  std::string sourced = "  boost_clock_mhz: ";
  std::string with_clocks = replaced(replaced(h100, boost, boost + "sustained_clock_mhz: 2000\n"), sourced,
                                     "  sustained_clock_mhz: \"a measurement\"\n" + sourced);
  CHECK(message(with_clocks).find("key 'sustained_clock_mhz': 2000 MHz is above boost_clock_mhz (1980 MHz)") !=
        std::string::npos);
  std::string ok = replaced(with_clocks, "sustained_clock_mhz: 2000", "sustained_clock_mhz: 1755");
  Device measured = io::parse_device(ok, "user.yaml");
  REQUIRE(measured.sustained_clock_mhz);
  CHECK(*measured.sustained_clock_mhz == 1755.0);
  // Without a boost clock there is nothing to compare with: accepted.
  CHECK_NOTHROW(io::parse_device(replaced(ok, boost, ""), "user.yaml"));
  // Package links belong to devices that share a package, and are part of the device's links.
  const std::string link = "domain_size: 8}";
  CHECK(message(replaced(h100, link, "domain_size: 8, in_package_bidirectional_gb_per_s: 400}"))
            .find("key 'interconnect.in_package_bidirectional_gb_per_s': applies only to a device with devices_per_package above 1") !=
        std::string::npos);
  const std::string two = replaced(h100, "boost_clock_mhz: 1980\n", "boost_clock_mhz: 1980\ndevices_per_package: 2\n");
  const std::string sourced_two = replaced(two, sourced, "  devices_per_package: \"a document\"\n" + sourced);
  CHECK(message(replaced(sourced_two, link, "domain_size: 8, between_packages_bidirectional_gb_per_s: 1000}"))
            .find("cannot exceed bandwidth_bidirectional_gb_per_s") != std::string::npos);
  Device pkg = io::parse_device(replaced(sourced_two, link, "domain_size: 8, between_packages_bidirectional_gb_per_s: 100}"), "user.yaml");
  CHECK(pkg.interconnect.between_packages_bidirectional_bytes_per_s == 100 * kGB);
}

TEST_CASE("new catalog devices: dense peaks, per-GPU memory, Apple GPUs beside the ANE entries") {
  const auto& reg = test::registry();
  // H100 NVL: the datasheet's sparse headline 1,671 TFLOPS BF16 halved to the dense 835.5; 94 GB at 3.9 TB/s.
  const Device& nvl = reg.device("h100-nvl");
  CHECK(nvl.peak(Precision::kBf16) / kTera == ::hwplan::test::approx(835.5).epsilon(1e-6));
  CHECK(nvl.memory_bytes / kGiB == 94.0);
  CHECK(nvl.interconnect.domain_size == 2);
  // GH200: the H100 SXM's compute (989.4 dense BF16), with a measured matmul below peak (828.6, ml-engineering).
  const Device& gh = reg.device("gh200");
  CHECK(gh.peak(Precision::kBf16) == ::hwplan::test::approx(reg.device("h100-sxm").peak(Precision::kBf16)).epsilon(1e-9));
  CHECK(gh.measured_matmul_flops.at(Precision::kBf16) < gh.peak(Precision::kBf16));
  // MI325X: MI300X compute with 256 GB at 6 TB/s.
  CHECK(reg.device("mi325x").peak(Precision::kBf16) ==
        ::hwplan::test::approx(reg.device("mi300x").peak(Precision::kBf16)).epsilon(1e-9));
  CHECK(reg.device("mi325x").memory_bytes / kGiB == 256.0);
  // GeForce FP32-accumulate halving: RTX 4080 97.5 (Ada whitepaper v2.02, Appendix A), RTX 3080 59.5 (GA102
  // whitepaper, Appendix A); the pro RTX 6000 Ada is not halved (142 SM x 2.505 GHz x 1024 = 364.2). 0.1%.
  CHECK(reg.device("rtx-4080").peak(Precision::kFp16) / kTera == ::hwplan::test::approx(97.5).epsilon(0.001));
  CHECK(reg.device("rtx-3080").peak(Precision::kFp16) / kTera == ::hwplan::test::approx(59.5).epsilon(0.001));
  CHECK(reg.device("rtx-6000-ada").peak(Precision::kFp16) / kTera == ::hwplan::test::approx(364.2).epsilon(0.001));
  // Cloud parts: TPU v5p 459 / v6e 918 TFLOPS BF16 per chip (Google Cloud TPU docs), Trainium2 667 (AWS Neuron docs).
  CHECK(reg.device("tpu-v5p").peak(Precision::kBf16) / kTera == 459.0);
  CHECK(reg.device("tpu-v6e").peak(Precision::kBf16) / kTera == 918.0);
  CHECK(reg.device("trainium2").peak(Precision::kBf16) / kTera == 667.0);
  CHECK(reg.device("trainium2").host_link.type == "cloud");
  // Apple M-series GPUs: unified memory (soc), FP16 at the FP32 rate (no matrix units), no BF16 rate claimed.
  for (const char* id : {"apple-m2-max-gpu", "apple-m2-ultra-gpu", "apple-m3-max-gpu", "apple-m3-ultra-gpu",
                         "apple-m4-max-gpu"}) {
    CAPTURE(id);
    const Device& d = reg.device(id);
    CHECK(d.architecture_family == "apple-gpu");
    CHECK(d.host_link.type == "soc");
    CHECK(d.peak(Precision::kFp16) == d.peak(Precision::kFp32));
    CHECK_FALSE(d.supports(Precision::kBf16));
    CHECK(d.training);
  }
  // M2 Ultra: 76 GPU cores x 128 ALUs x 2 x 1.398 GHz = 27.2 TFLOPS; 192 GB at 800 GB/s (Apple). 0.1%.
  const Device& m2u = reg.device("apple-m2-ultra-gpu");
  CHECK(m2u.peak(Precision::kFp32) / kTera == ::hwplan::test::approx(27.2).epsilon(0.001));
  CHECK(m2u.memory_bytes / kGiB == 192.0);
  // The names MLX reports ('Apple M2 Ultra') find the GPU entry; the ANE entries keep their own ids.
  CHECK(reg.device("Apple M2 Ultra").id == "apple-m2-ultra-gpu");
  CHECK(reg.device("Apple M4").id == "apple-m4-ane");
}

namespace {

// Two devices agree on every figure the estimators and reports read (base units, within the 12 significant
// digits device_to_yaml writes).
void check_same_device(const Device& a, const Device& b) {
  auto near = [](double x, double y) { return x == ::hwplan::test::approx(y).epsilon(1e-11); };
  CHECK(a.id == b.id);
  CHECK(a.name == b.name);
  CHECK(a.aliases == b.aliases);
  CHECK(a.vendor == b.vendor);
  CHECK(a.device_class == b.device_class);
  CHECK(a.architecture == b.architecture);
  CHECK(a.architecture_family == b.architecture_family);
  CHECK(a.release_year == b.release_year);
  CHECK(near(a.memory_bytes, b.memory_bytes));
  CHECK(a.memory_type == b.memory_type);
  CHECK(near(a.memory_bandwidth_bytes_per_s, b.memory_bandwidth_bytes_per_s));
  REQUIRE(a.peak_flops.size() == b.peak_flops.size());
  for (const auto& [p, v] : a.peak_flops) CHECK(near(v, b.peak(p)));
  CHECK(a.fp32_matrix_flops.has_value() == b.fp32_matrix_flops.has_value());
  REQUIRE(a.measured_matmul_flops.size() == b.measured_matmul_flops.size());
  for (const auto& [p, v] : a.measured_matmul_flops) CHECK(near(v, b.measured_matmul_flops.at(p)));
  CHECK(a.vector_flops.has_value() == b.vector_flops.has_value());
  CHECK(a.llc_bytes.has_value() == b.llc_bytes.has_value());
  CHECK(a.compute_units == b.compute_units);
  CHECK(a.boost_clock_mhz == b.boost_clock_mhz);
  CHECK(a.base_clock_mhz == b.base_clock_mhz);
  CHECK(a.sustained_clock_mhz == b.sustained_clock_mhz);
  CHECK(a.devices_per_package == b.devices_per_package);
  CHECK(a.tdp_w == b.tdp_w);
  CHECK(a.host_link.type == b.host_link.type);
  CHECK(a.host_link.pcie_gen == b.host_link.pcie_gen);
  CHECK(a.host_link.pcie_lanes == b.host_link.pcie_lanes);
  CHECK(a.interconnect.type == b.interconnect.type);
  CHECK(near(a.interconnect.bidirectional_bytes_per_s, b.interconnect.bidirectional_bytes_per_s));
  CHECK(a.interconnect.domain_size == b.interconnect.domain_size);
  CHECK(near(a.interconnect.in_package_bidirectional_bytes_per_s, b.interconnect.in_package_bidirectional_bytes_per_s));
  CHECK(near(a.interconnect.between_packages_bidirectional_bytes_per_s, b.interconnect.between_packages_bidirectional_bytes_per_s));
  CHECK(a.software == b.software);
  CHECK(a.training == b.training);
  const auto qa = quotes_of(a.price), qb = quotes_of(b.price);
  REQUIRE(qa.size() == qb.size());
  for (std::size_t i = 0; i < qa.size(); ++i) {
    CHECK(std::string(qa[i].kind) == qb[i].kind);
    CHECK(qa[i].usd == qb[i].usd);
    CHECK(qa[i].date == qb[i].date);
    CHECK(qa[i].provider == qb[i].provider);
    CHECK(qa[i].source == qb[i].source);
  }
  CHECK(a.confidence == b.confidence);
  CHECK(a.sources == b.sources);
  CHECK(a.derived == b.derived);
  CHECK(a.notes == b.notes);
}

}  // namespace

TEST_CASE("catalog show --format yaml prints a catalog file that loads back to the same device, for every device") {
  // Property over the whole catalog, SoC, USB and cloud devices (no PCIe generation) included; printing what was
  // read back gives the same text.
  for (const Device& d : test::registry().devices()) {
    CAPTURE(d.id);
    const std::string yaml = io::device_to_yaml(d);
    Device back = io::parse_device(yaml, "show.yaml");
    check_same_device(d, back);
    CHECK(io::device_to_yaml(back) == yaml);
    if (d.host_link.type != "pcie") CHECK(yaml.find("pcie_gen") == std::string::npos);
    CHECK(yaml.find("e+") == std::string::npos);  // figures as people write them, not 1.2e+02
  }
  // Through the binary, a SoC device, into a --catalog directory that overrides the built-in entry.
  auto shown = test::run_hwplan("catalog show jetson-agx-orin-64gb --format yaml");
  REQUIRE(shown.exit_code == 0);
  CHECK(shown.out.find("host_link: {type: soc}") != std::string::npos);
  const std::string dir = "/tmp/hwplan_catalog_yaml_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir + "/orin.yaml");
    out << shown.out;
  }
  auto again = test::run_hwplan("catalog show jetson-agx-orin-64gb --format yaml --catalog " + dir);
  CHECK(again.exit_code == 0);
  CHECK(again.out == shown.out);
  auto est = test::run_hwplan("estimate --model llama-2-7b --device jetson-agx-orin-64gb --task infer --format json");
  auto est_file = test::run_hwplan("estimate --model llama-2-7b --device jetson-agx-orin-64gb --task infer --format json --catalog " + dir);
  CHECK(est.exit_code == est_file.exit_code);
  auto strip_origin = [](std::string s) {
    return std::regex_replace(s, std::regex("\"(origin|defined_in)\": \"[^\"]*\""), "");
  };
  CHECK(strip_origin(est.out) == strip_origin(est_file.out));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a short device name resolves when it names one device, and lists the candidates when it names several") {
  const auto& reg = test::registry();
  CHECK(reg.device("4090").id == "rtx-4090");
  CHECK(reg.device("mi300x").id == "mi300x");
  CHECK(reg.device("RTX-4090").id == "rtx-4090");
  CHECK(reg.device("5090").id == "rtx-5090");
  CHECK(reg.device("h100").id == "h100-sxm");  // an exact alias in the catalog wins over a short name
  try {
    reg.device("a100-80gb");
    FAIL("a100-80gb names two devices");
  } catch (const InputError& e) {
    CHECK(e.detail().find("ambiguous") != std::string::npos);
    CHECK(e.detail().find("a100-80gb-pcie, a100-80gb-sxm") != std::string::npos);
  }
  // Property over the catalog: every word run of every id resolves to that device when no other device has it,
  // and is reported ambiguous (naming this device among the candidates) when others do.
  for (const Device& d : reg.devices()) {
    std::vector<std::string> words;
    std::string w;
    for (char c : d.id + "-") {
      if (c == '-') {
        if (!w.empty()) words.push_back(w);
        w.clear();
      } else {
        w += c;
      }
    }
    for (std::size_t i = 0; i < words.size(); ++i) {
      std::string name;
      for (std::size_t j = i; j < words.size(); ++j) {
        name += (j > i ? "-" : "") + words[j];
        CAPTURE(name);
        auto matches = reg.short_name_matches(name);
        REQUIRE(std::find(matches.begin(), matches.end(), &d) != matches.end());
        const Device* found = reg.find_device(name);
        if (matches.size() == 1) {
          CHECK(found == &d);
          continue;
        }
        if (found) continue;  // an exact id or alias wins over a short name
        try {
          reg.device(name);
          FAIL("expected ambiguous");
        } catch (const InputError& e) {
          CHECK(e.detail().find(d.id) != std::string::npos);
        }
      }
    }
  }
  // Every command looks devices up in the same place.
  auto est = test::run_hwplan("estimate --model llama-2-7b --device 4090 --task lora --format json");
  CHECK(est.exit_code == 0);
  CHECK(est.out.find("\"rtx-4090\"") != std::string::npos);
  auto ambiguous = test::run_hwplan("estimate --model llama-2-7b --device 4060 --task lora");
  CHECK(ambiguous.exit_code == 2);
  CHECK(ambiguous.err.find("rtx-4060, rtx-4060-ti-16gb") != std::string::npos);
  auto rec = test::run_hwplan("recommend --model llama-2-7b --task lora --devices 4090 --format json");
  CHECK(rec.exit_code == 0);
  CHECK(rec.out.find("\"rtx-4090\"") != std::string::npos);
  CHECK(test::run_hwplan("catalog show 4090 --format yaml").out.find("id: rtx-4090") != std::string::npos);
}

TEST_CASE("unified memory: the GPU's default share of a Mac's memory is what plans fill, in every command") {
  // Every Apple GPU entry carries macOS's default working-set limit, below its memory and with a source.
  int apple = 0;
  for (const Device& d : test::registry().devices()) {
    if (d.vendor != "apple" || d.id.find("-gpu") == std::string::npos) continue;
    ++apple;
    REQUIRE(d.gpu_memory_limit_bytes);
    CHECK(*d.gpu_memory_limit_bytes < d.memory_bytes);
    CHECK(d.plan_memory_bytes() == *d.gpu_memory_limit_bytes);
  }
  CHECK(apple >= 5);
  CHECK(test::registry().device("h100-sxm").plan_memory_bytes() == test::registry().device("h100-sxm").memory_bytes);
  // gpt-oss-120b in fp8 needs about 115 GiB: it does not fit the 96 GiB a 128 GiB M4 Max lends its GPU, and estimate,
  // serve and the table say why.
  const std::string work = "--model gpt-oss-120b --device apple-m4-max-gpu --weights fp8";
  auto est = nlohmann::json::parse(test::run_hwplan("estimate --task infer --format json " + work).out);
  CHECK(est["memory"]["fits"] == false);
  CHECK(est["memory"]["capacity_bytes"].get<double>() == ::hwplan::test::approx(96 * kGiB));
  bool noted = false;
  for (const auto& n : est["notes"]) noted = noted || n.get<std::string>().find("iogpu.wired_limit_mb") != std::string::npos;
  CHECK(noted);
  auto srv = test::run_hwplan("serve --concurrency 1 --requests 20 " + work);
  CHECK(srv.exit_code == 3);
  CHECK(srv.out.find("Metal working-set limit") != std::string::npos);  // the report's warnings
  // The loader refuses a limit above the memory, naming the key.
  const std::string m4 = read_source("catalog/apple-m4-max-gpu.yaml");
  try {
    io::parse_device(replaced(m4, "gpu_memory_limit_gib: 96", "gpu_memory_limit_gib: 200"), "user.yaml");
    FAIL("a limit above the memory was accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("gpu_memory_limit_gib") != std::string::npos);
  }
}

TEST_CASE("a GDDR6 board with ECC on is planned in the memory its driver reports (1/16 keeps the check bits)") {
  const Device& l4 = test::registry().device("l4");
  CHECK(l4.plan_memory_bytes() == ::hwplan::test::approx(23034 * kMiB));
  CHECK(test::registry().device("t4").plan_memory_bytes() == ::hwplan::test::approx(15360 * kMiB));
  CHECK(test::registry().device("rtx-4090").plan_memory_bytes() == test::registry().device("rtx-4090").memory_bytes);
  auto est = nlohmann::json::parse(test::run_hwplan("estimate --model llama-3-8b --device l4 --task infer --format json").out);
  CHECK(est["memory"]["capacity_bytes"].get<double>() == ::hwplan::test::approx(23034 * kMiB));
  bool noted = false;
  for (const auto& n : est["notes"]) noted = noted || n.get<std::string>().find("ECC on as the board ships") != std::string::npos;
  CHECK(noted);
  // The loader refuses a reported total above the memory, naming the key.
  const std::string file = read_source("catalog/l4.yaml");
  try {
    io::parse_device(replaced(file, "memory_reported_mib: 23034", "memory_reported_mib: 30000"), "user.yaml");
    FAIL("a reported total above the memory was accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("memory_reported_mib") != std::string::npos);
  }
}

TEST_CASE("a power figure the vendor does not publish is said to be an estimate wherever it is used") {
  auto r = test::run_hwplan("estimate --model llama-2-7b --device tpu-v5p --task infer --format json");
  REQUIRE(r.exit_code == 0);
  bool said = false;
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& w : doc["warnings"])
    said = said || w.get<std::string>().find("tpu-v5p's power (192 W) is an estimate") != std::string::npos;
  CHECK(said);
  CHECK(test::run_hwplan("estimate --model llama-2-7b --device h100-sxm --task infer").out.find("is an estimate, not a vendor figure") ==
        std::string::npos);
}

TEST_CASE("a rent-only device is a cited catalog fact that survives a write and a read") {
  const std::string tpu = read_source("catalog/tpu-v5e.yaml");
  Device d = io::parse_device(tpu, "tpu.yaml");
  CHECK(d.price.rent_only);
  CHECK(d.price.sources.count("rent_only") == 1);
  Device back = io::parse_device(io::device_to_yaml(d), "back.yaml");
  CHECK(back.price.rent_only);
  CHECK(back.price.sources.at("rent_only") == d.price.sources.at("rent_only"));
  CHECK(test::registry().device("tpu-v5e").price.rent_only);  // the embedded catalog carries it too
  CHECK_FALSE(test::registry().device("h100-nvl").price.rent_only);  // sold, only no dated quote
  auto message = [](const std::string& text) -> std::string {
    try {
      io::parse_device(text, "user.yaml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string line = "  rent_only_source: ";
  const auto at = tpu.find(line);
  REQUIRE(at != std::string::npos);
  const std::string unsourced = tpu.substr(0, at) + tpu.substr(tpu.find('\n', at) + 1);
  // The catalog file's sources.price cites it when it has no source of its own; a file without either is refused.
  std::string no_price_source = unsourced;
  const auto price_src = no_price_source.find("  price: \"");
  REQUIRE(price_src != std::string::npos);
  no_price_source.erase(price_src, no_price_source.find('\n', price_src) + 1 - price_src);
  CHECK(message(no_price_source).find("rent_only") != std::string::npos);
}

TEST_CASE("a measured streaming rate replaces the memory's peak x efficiency: the M4 Neural Engine decodes at its own port's 64 GB/s") {
  const Device& ane = test::registry().device("apple-m4-ane");
  REQUIRE(ane.measured_bandwidth_bytes_per_s);
  CHECK(*ane.measured_bandwidth_bytes_per_s == ::hwplan::test::approx(64.18 * kGB));
  const DeviceRates r = device_rates(ane, Precision::kFp16);
  CHECK(r.bandwidth * r.bandwidth_efficiency == ::hwplan::test::approx(64.18 * kGB));
  // A batch-1 int4 decode is bandwidth-bound: its step reads the weights at the measured rate.
  auto est = nlohmann::json::parse(
      test::run_hwplan("estimate --model llama-3-8b --device apple-m4-ane --task infer --weights int4 --batch 1 --format json").out);
  const double tps = est["inference"]["decode_tokens_per_second"].get<double>();
  CHECK(tps < 64.18e9 / (3.5 * kGiB));
  CHECK(tps > 0.8 * 64.18e9 / (3.7 * kGiB));
  // The loader refuses a measured rate above the memory's, naming the key.
  const std::string text = read_source("catalog/apple-m4-ane.yaml");
  try {
    io::parse_device(replaced(text, "measured_bandwidth_gb_per_s: 64.18", "measured_bandwidth_gb_per_s: 130"), "user.yaml");
    FAIL("a measured rate above the memory's was accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("measured_bandwidth_gb_per_s") != std::string::npos);
  }
}
