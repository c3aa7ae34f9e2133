// A calibration profile: what the local device measurably achieves, as curves the estimators interpolate.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/precision.hpp"

namespace hwplan {

struct CurvePoint {
  double size = 0;      // GEMM: FLOPs of the operation; bandwidth: bytes moved
  double achieved = 0;  // GEMM: FLOP/s; bandwidth: bytes/s
};

// One microbenchmark as run: what, how big, and the statistics over the timed repetitions.
struct ProfileMeasurement {
  std::string kernel;  // triad, sgemm, gemm_bf16, memcpy_d2d, ...
  std::string shape;
  double size = 0;     // bytes or FLOPs per run
  double best = 0;     // bytes/s or FLOP/s
  double median = 0;
  int repetitions = 0;
};

struct Profile {
  std::string device_name;   // as the driver / OS reports it
  std::string catalog_id;    // matched catalog device, empty when unknown
  std::string backend;       // cpu or cuda
  std::string host;
  std::string date;
  std::map<Precision, std::vector<CurvePoint>> gemm;  // sorted by size
  std::vector<CurvePoint> bandwidth;                  // sorted by size
  // What one kernel costs in a stream of kernels (CUDA: empty kernels back to back; CPU: a parallel region's
  // fork and join): the floor the estimators add per kernel. The curves above include it at each size (they are
  // what a kernel of that size achieved); the estimators take it out of them before adding it back per kernel.
  double kernel_launch_seconds = 0;
  // CUDA: launching one kernel and waiting for it (host clock): what a loop that synchronises every step pays.
  double sync_latency_seconds = 0;
  std::vector<ProfileMeasurement> measurements;  // every kernel run, for the record
  std::string host_detail;                       // CPU model, cores, caches, memory; driver / runtime versions
  std::string origin;
};

}  // namespace hwplan
