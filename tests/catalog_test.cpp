// The built-in catalog as loaded (src/io/catalog_io): every device names its architecture family, clocks are
// ordered, figures are sourced, and multi-die packages are described per framework device.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "core/units.hpp"
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
    CHECK(d.memory_bandwidth_bytes_per_s / kGB == doctest::Approx(1638.4).epsilon(1e-9));
    CHECK(d.derived.count("memory_gib") == 1);
    CHECK(d.interconnect.type == "infinity-fabric");
    CHECK(d.interconnect.domain_size == 8);
  }
  CHECK(*test::registry().device("mi250").compute_units == 104);
  CHECK(*test::registry().device("mi250x").compute_units == 110);
  // One GCD of an MI250 is the MI210's die: the same peak (181 TFLOPS FP16 dense, AMD MI210 datasheet), within 0.1%.
  CHECK(test::registry().device("mi250").peak(Precision::kFp16) ==
        doctest::Approx(test::registry().device("mi210").peak(Precision::kFp16)).epsilon(0.001));
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
}

TEST_CASE("new catalog devices: dense peaks, per-GPU memory, Apple GPUs beside the ANE entries") {
  const auto& reg = test::registry();
  // H100 NVL: the datasheet's sparse headline 1,671 TFLOPS BF16 halved to the dense 835.5; 94 GB at 3.9 TB/s.
  const Device& nvl = reg.device("h100-nvl");
  CHECK(nvl.peak(Precision::kBf16) / kTera == doctest::Approx(835.5).epsilon(1e-6));
  CHECK(nvl.memory_bytes / kGiB == 94.0);
  CHECK(nvl.interconnect.domain_size == 2);
  // GH200: the H100 SXM's compute (989.4 dense BF16), with a measured matmul below peak (828.6, ml-engineering).
  const Device& gh = reg.device("gh200");
  CHECK(gh.peak(Precision::kBf16) == doctest::Approx(reg.device("h100-sxm").peak(Precision::kBf16)).epsilon(1e-9));
  CHECK(gh.measured_matmul_flops.at(Precision::kBf16) < gh.peak(Precision::kBf16));
  // MI325X: MI300X compute with 256 GB at 6 TB/s.
  CHECK(reg.device("mi325x").peak(Precision::kBf16) ==
        doctest::Approx(reg.device("mi300x").peak(Precision::kBf16)).epsilon(1e-9));
  CHECK(reg.device("mi325x").memory_bytes / kGiB == 256.0);
  // GeForce FP32-accumulate halving: RTX 4080 97.5 (Ada whitepaper v2.02, Appendix A), RTX 3080 59.5 (GA102
  // whitepaper, Appendix A); the pro RTX 6000 Ada is not halved (142 SM x 2.505 GHz x 1024 = 364.2). 0.1%.
  CHECK(reg.device("rtx-4080").peak(Precision::kFp16) / kTera == doctest::Approx(97.5).epsilon(0.001));
  CHECK(reg.device("rtx-3080").peak(Precision::kFp16) / kTera == doctest::Approx(59.5).epsilon(0.001));
  CHECK(reg.device("rtx-6000-ada").peak(Precision::kFp16) / kTera == doctest::Approx(364.2).epsilon(0.001));
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
  CHECK(m2u.peak(Precision::kFp32) / kTera == doctest::Approx(27.2).epsilon(0.001));
  CHECK(m2u.memory_bytes / kGiB == 192.0);
  // The names MLX reports ('Apple M2 Ultra') find the GPU entry; the ANE entries keep their own ids.
  CHECK(reg.device("Apple M2 Ultra").id == "apple-m2-ultra-gpu");
  CHECK(reg.device("Apple M4").id == "apple-m4-ane");
}
