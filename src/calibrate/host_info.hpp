// What the local machine is: CPU model, cores, caches, memory, OS. Read from Linux's /proc and /sys; on other
// systems (or where a file is missing) the fields fall back to what the C++ runtime can tell.
#pragma once

#include <string>
#include <string_view>

namespace hwplan::calibrate {

struct HostInfo {
  std::string cpu_model;       // "AMD EPYC 9654 96-Core Processor"; "unknown" when the OS does not say
  int cores = 0;               // physical cores (distinct physical id / core id pairs)
  int threads = 0;             // logical CPUs this process may run on (its affinity mask)
  double l1_bytes = 0;         // L1 data cache of one core
  double l2_bytes = 0;         // L2 cache of one instance (usually one core)
  double l3_bytes = 0;         // last-level cache of one instance (one CCX / socket); 0 when there is none
  double llc_total_bytes = 0;  // last-level cache summed over all its instances: what a STREAM array must dwarf
  double memory_bytes = 0;     // MemTotal
  std::string os;              // "Linux 6.1.0-18-amd64 (Debian GNU/Linux 12 (bookworm))"
  std::string hostname;
  double load_average_1min = 0;  // runnable threads, averaged over a minute: above ~0.5 x threads, others are
                                 // competing for the cores and the calibration will read low
};

HostInfo detect_host();

// The parsers behind detect_host, exposed so that tests can feed them captured files.
// "32K", "1024K", "32M", "1G" (sysfs cache sizes) -> bytes; 0 when unparsable.
double parse_cache_size_bytes(std::string_view text);
// /proc/meminfo -> MemTotal in bytes; 0 when absent.
double parse_meminfo_total_bytes(std::string_view text);
struct CpuinfoSummary {
  std::string model;        // first "model name" (x86) or "Model"/"Hardware"/"cpu" line, trimmed
  int logical_cpus = 0;     // "processor" entries
  int physical_cores = 0;   // distinct (physical id, core id); equals logical_cpus when those keys are absent
};
CpuinfoSummary parse_cpuinfo(std::string_view text);

}  // namespace hwplan::calibrate
