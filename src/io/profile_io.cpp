#include "io/profile_io.hpp"
#include <memory>
#include <mutex>
#include <map>
#include <filesystem>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "io/atomic_file.hpp"
#include "io/yaml_map.hpp"

namespace hwplan::io {
namespace {

std::vector<CurvePoint> read_curve(YamlMap& parent, const std::string& parent_prefix, const std::string& key,
                                   const char* size_key, const char* value_key, double value_scale) {
  std::vector<CurvePoint> out;
  YAML::Node list = parent.node()[key];
  if (!list.IsSequence())
    parent.fail(key, "expected a list of {" + std::string(size_key) + ", " + value_key + "} points");
  for (const auto& item : list) {
    YamlMap point(item, parent.file(), parent_prefix + key + "[].");
    CurvePoint p;
    p.size = *point.number(size_key, true, 0, 1e30);
    p.achieved = *point.number(value_key, true, 0, 1e30) * value_scale;
    point.str("shape", false);
    point.number("median", false, 0, 1e30);
    point.finish();
    out.push_back(p);
  }
  std::sort(out.begin(), out.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.size < b.size; });
  return out;
}

}  // namespace

Profile parse_profile(const std::string& text, const std::string& file) {
  YamlMap m(parse_document(text, file), file);
  Profile p;
  p.origin = file;
  if (auto v = m.integer("schema_version", true, 0, INT64_MAX); *v != 1)
    m.fail("schema_version", "version " + std::to_string(*v) + " is not supported (this hwplan reads version 1)");
  p.device_name = *m.str("device", true);
  p.catalog_id = m.str("catalog_id", false).value_or("");
  p.backend = *m.str("backend", true);
  if (p.backend != "cpu" && p.backend != "cuda") m.fail("backend", "'" + p.backend + "' is not one of: cpu, cuda");
  p.host = m.str("host", false).value_or("");
  p.date = m.str("date", false).value_or("");
  if (auto launch = m.number("kernel_launch_us", false, 0, 1e6)) p.kernel_launch_seconds = *launch * 1e-6;
  if (auto sync = m.number("sync_latency_us", false, 0, 1e6)) p.sync_latency_seconds = *sync * 1e-6;
  if (m.has("bandwidth")) p.bandwidth = read_curve(m, "", "bandwidth", "bytes", "gb_per_s", 1e9);
  if (auto gemm = m.map("gemm", false)) {
    for (const auto& key : gemm->keys()) {
      auto prec = parse_precision(key);
      if (!prec) gemm->fail(key, "is not a precision (fp64, fp32, tf32, fp16, bf16, fp8)");
      YamlMap& g = *gemm;
      p.gemm[*prec] = read_curve(g, "gemm.", key, "flops", "tflops", 1e12);
    }
  }
  p.host_detail = m.str("host_detail", false).value_or("");
  if (m.has("measurements")) {
    YAML::Node list = m.node()["measurements"];
    if (!list.IsSequence()) m.fail("measurements", "expected a list of measurements");
    for (const auto& item : list) {
      YamlMap x(item, file, "measurements[].");
      ProfileMeasurement pm;
      pm.kernel = *x.str("kernel", true);
      pm.shape = x.str("shape", false).value_or("");
      pm.size = *x.number("size", true, 0, 1e30);
      pm.best = *x.number("best", true, 0, 1e30);
      pm.median = *x.number("median", true, 0, 1e30);
      pm.repetitions = static_cast<int>(*x.integer("repetitions", true, 1, 1000000));
      x.finish();
      p.measurements.push_back(pm);
    }
  }
  m.finish({"bandwidth", "measurements"});
  return p;
}

Profile load_profile(const std::string& path) {
  return parse_profile(read_text_file(path, "profile"), path);
}

std::shared_ptr<const Profile> load_profile_cached(const std::string& path) {
  struct Entry {
    std::uintmax_t size = 0;
    std::filesystem::file_time_type time;
    std::shared_ptr<const Profile> profile;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry> cache;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const auto time = ec ? std::filesystem::file_time_type{} : std::filesystem::last_write_time(path, ec);
  if (ec) return std::make_shared<const Profile>(load_profile(path));  // the loader names the problem
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(path);
  if (it != cache.end() && it->second.size == size && it->second.time == time) return it->second.profile;
  auto profile = std::make_shared<const Profile>(load_profile(path));
  if (cache.size() > 64) cache.clear();  // a bound: a long-lived process reading many files
  cache[path] = {size, time, profile};
  return profile;
}

std::string profile_to_yaml(const Profile& p) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "schema_version" << YAML::Value << 1;
  out << YAML::Key << "device" << YAML::Value << p.device_name;
  if (!p.catalog_id.empty()) out << YAML::Key << "catalog_id" << YAML::Value << p.catalog_id;
  out << YAML::Key << "backend" << YAML::Value << p.backend;
  out << YAML::Key << "host" << YAML::Value << p.host;
  out << YAML::Key << "date" << YAML::Value << p.date;
  if (p.kernel_launch_seconds > 0) out << YAML::Key << "kernel_launch_us" << YAML::Value << p.kernel_launch_seconds * 1e6;
  if (p.sync_latency_seconds > 0) out << YAML::Key << "sync_latency_us" << YAML::Value << p.sync_latency_seconds * 1e6;
  out << YAML::Key << "bandwidth" << YAML::Value << YAML::BeginSeq;
  for (const auto& c : p.bandwidth)
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "bytes" << YAML::Value << c.size << YAML::Key << "gb_per_s"
        << YAML::Value << c.achieved / 1e9 << YAML::EndMap;
  out << YAML::EndSeq;
  if (!p.host_detail.empty()) out << YAML::Key << "host_detail" << YAML::Value << p.host_detail;
  out << YAML::Key << "gemm" << YAML::Value << YAML::BeginMap;
  for (const auto& [prec, curve] : p.gemm) {
    out << YAML::Key << to_string(prec) << YAML::Value << YAML::BeginSeq;
    for (const auto& c : curve)
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "flops" << YAML::Value << c.size << YAML::Key << "tflops"
          << YAML::Value << c.achieved / 1e12 << YAML::EndMap;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  out << YAML::Key << "measurements" << YAML::Value << YAML::BeginSeq;
  for (const auto& x : p.measurements)
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "kernel" << YAML::Value << x.kernel << YAML::Key << "shape"
        << YAML::Value << x.shape << YAML::Key << "size" << YAML::Value << x.size << YAML::Key << "best" << YAML::Value
        << x.best << YAML::Key << "median" << YAML::Value << x.median << YAML::Key << "repetitions" << YAML::Value
        << x.repetitions << YAML::EndMap;
  out << YAML::EndSeq;
  out << YAML::EndMap;
  return "# hwplan calibration profile: measured on the machine named below. Rates: bandwidth gb_per_s (1e9 B/s),\n"
         "# gemm tflops (1e12 FLOP/s); measurements: best and median over the timed repetitions, per second.\n"
         "# The rates include each kernel's fixed cost; kernel_launch_us is that cost (a kernel in a stream of\n"
         "# kernels), which the estimators take out of a rate and add back per kernel; sync_latency_us is a launch\n"
         "# and the wait for it.\n" +
         std::string(out.c_str()) + "\n";
}

void save_profile(const Profile& profile, const std::string& path) { write_file_atomically(path, profile_to_yaml(profile)); }

}  // namespace hwplan::io
