// How far an estimate typically is from a measurement: the 80th percentile of |predicted / measured - 1| over
// the recorded measurement sets (data/measurements), per regime. A test recomputes them from the sets
// (tests/validation_test.cpp) so these figures stay the ones the current estimators produce.
#pragma once

#include <string>

namespace hwplan {

enum class Regime { kStep, kThroughput, kDecode, kMemory, kImage };

struct Band {
  Regime regime;
  const char* name;            // step | throughput | decode | memory | image
  double p80_relative_error;   // 0.13 = "typically within +/-13%"
  int rows;                    // comparisons it was computed from
};

const Band& band(Regime r);
const char* to_string(Regime r);

}  // namespace hwplan
