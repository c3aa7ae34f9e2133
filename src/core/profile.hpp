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

struct Profile {
  std::string device_name;   // as the driver / OS reports it
  std::string catalog_id;    // matched catalog device, empty when unknown
  std::string backend;       // cpu or cuda
  std::string host;
  std::string date;
  std::map<Precision, std::vector<CurvePoint>> gemm;  // sorted by size
  std::vector<CurvePoint> bandwidth;                  // sorted by size
  double kernel_launch_seconds = 0;
  std::string origin;
};

}  // namespace hwplan
