// Host detection from /proc/cpuinfo, /proc/meminfo, /sys/devices/system/cpu/*/cache, sysconf and uname.
#include "calibrate/host_info.hpp"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace hwplan::calibrate {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Calls f(key, value) for each "key : value" line.
template <typename F>
void for_each_key_value(std::string_view text, F&& f) {
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    f(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
}

struct CacheLevel {
  int level = 0;
  std::string type;  // Data, Instruction, Unified
  double size_bytes = 0;
  std::string shared_cpu_list;
};

std::vector<CacheLevel> read_caches(const std::filesystem::path& cpu_dir) {
  std::vector<CacheLevel> caches;
  std::error_code ec;
  const auto cache_dir = cpu_dir / "cache";
  if (!std::filesystem::is_directory(cache_dir, ec)) return caches;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("index", 0) != 0) continue;
    CacheLevel c;
    const std::string level = std::string(trim(read_text(entry.path() / "level")));
    std::from_chars(level.data(), level.data() + level.size(), c.level);
    c.type = std::string(trim(read_text(entry.path() / "type")));
    c.size_bytes = parse_cache_size_bytes(trim(read_text(entry.path() / "size")));
    c.shared_cpu_list = std::string(trim(read_text(entry.path() / "shared_cpu_list")));
    if (c.level > 0 && c.size_bytes > 0) caches.push_back(std::move(c));
  }
  return caches;
}

int affinity_cpu_count() {
#ifdef CPU_COUNT
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
#endif
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string os_pretty_name() {
  std::string pretty;
  const std::string text = read_text("/etc/os-release");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    pretty = line.substr(12);
    if (pretty.size() >= 2 && (pretty.front() == '"' || pretty.front() == '\'')) pretty = pretty.substr(1, pretty.size() - 2);
  }
  return pretty;
}

}  // namespace

double parse_cache_size_bytes(std::string_view text) {
  text = trim(text);
  double value = 0;
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    value = value * 10 + (text[i] - '0');
    ++i;
  }
  if (i == 0) return 0;
  const std::string_view suffix = trim(text.substr(i));
  if (suffix.empty() || suffix == "B") return value;
  switch (std::toupper(static_cast<unsigned char>(suffix.front()))) {
    case 'K': return value * 1024.0;
    case 'M': return value * 1024.0 * 1024.0;
    case 'G': return value * 1024.0 * 1024.0 * 1024.0;
    default: return 0;
  }
}

double parse_meminfo_total_bytes(std::string_view text) {
  double bytes = 0;
  for_each_key_value(text, [&](std::string_view key, std::string_view value) {
    if (key == "MemTotal") bytes = parse_cache_size_bytes(value.substr(0, value.find(' '))) * 1024.0;  // in kB
  });
  return bytes;
}

CpuinfoSummary parse_cpuinfo(std::string_view text) {
  CpuinfoSummary s;
  std::string fallback_model;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id = "0";
  for_each_key_value(text, [&](std::string_view key, std::string_view value) {
    if (key == "processor") {
      ++s.logical_cpus;
      physical_id = "0";
    } else if (key == "model name" && s.model.empty()) {
      s.model = std::string(value);
    } else if ((key == "Model" || key == "Hardware" || key == "cpu") && fallback_model.empty()) {
      fallback_model = std::string(value);  // Arm boards, POWER
    } else if (key == "physical id") {
      physical_id = std::string(value);
    } else if (key == "core id") {
      cores.emplace(physical_id, std::string(value));
    }
  });
  if (s.model.empty()) s.model = fallback_model;
  s.physical_cores = cores.empty() ? s.logical_cpus : static_cast<int>(cores.size());
  return s;
}

HostInfo detect_host() {
  HostInfo h;
  const CpuinfoSummary cpu = parse_cpuinfo(read_text("/proc/cpuinfo"));
  h.cpu_model = cpu.model.empty() ? "unknown" : cpu.model;
  h.threads = affinity_cpu_count();
  h.cores = cpu.physical_cores > 0 ? std::min(cpu.physical_cores, h.threads) : h.threads;
  // cpu_model lists every core of the machine; a container or taskset may give us fewer.
  if (cpu.logical_cpus > 0 && cpu.physical_cores > 0 && h.threads < cpu.logical_cpus) {
    const int threads_per_core = std::max(1, cpu.logical_cpus / cpu.physical_cores);
    h.cores = std::max(1, h.threads / threads_per_core);
  }

  const std::filesystem::path cpu_root = "/sys/devices/system/cpu";
  int llc_level = 0;
  for (const CacheLevel& c : read_caches(cpu_root / "cpu0")) {
    if (c.type == "Instruction") continue;
    if (c.level == 1) h.l1_bytes = c.size_bytes;
    if (c.level == 2) h.l2_bytes = c.size_bytes;
    if (c.level == 3) h.l3_bytes = c.size_bytes;
    llc_level = std::max(llc_level, c.level);
  }
  // Sum the last level over its distinct instances (one per CCX on AMD, one per socket on most Intel parts).
  if (llc_level > 0) {
    std::map<std::string, double> instances;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(cpu_root, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.size() < 4 || name.rfind("cpu", 0) != 0 || !std::isdigit(static_cast<unsigned char>(name[3]))) continue;
      for (const CacheLevel& c : read_caches(entry.path()))
        if (c.level == llc_level && c.type != "Instruction") instances[c.shared_cpu_list] = c.size_bytes;
    }
    for (const auto& [cpus, bytes] : instances) h.llc_total_bytes += bytes;
  }
#ifdef _SC_LEVEL1_DCACHE_SIZE
  // glibc's own answer (from CPUID) where sysfs has none, as in some containers.
  auto sysconf_bytes = [](int name) { const long v = sysconf(name); return v > 0 ? static_cast<double>(v) : 0.0; };
  if (h.l1_bytes == 0) h.l1_bytes = sysconf_bytes(_SC_LEVEL1_DCACHE_SIZE);
  if (h.l2_bytes == 0) h.l2_bytes = sysconf_bytes(_SC_LEVEL2_CACHE_SIZE);
  if (h.l3_bytes == 0) h.l3_bytes = sysconf_bytes(_SC_LEVEL3_CACHE_SIZE);
#endif
  if (h.llc_total_bytes == 0) h.llc_total_bytes = h.l3_bytes > 0 ? h.l3_bytes : h.l2_bytes;

  h.memory_bytes = parse_meminfo_total_bytes(read_text("/proc/meminfo"));
  if (h.memory_bytes == 0) {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page_size > 0) h.memory_bytes = static_cast<double>(pages) * static_cast<double>(page_size);
  }

  struct utsname u {};
  if (uname(&u) == 0) {
    h.os = std::string(u.sysname) + " " + u.release;
    h.hostname = u.nodename;
  }
  if (const std::string pretty = os_pretty_name(); !pretty.empty()) h.os += (h.os.empty() ? "" : " ") + ("(" + pretty + ")");
  if (h.os.empty()) h.os = "unknown";
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) h.load_average_1min = load[0];
  return h;
}

}  // namespace hwplan::calibrate
