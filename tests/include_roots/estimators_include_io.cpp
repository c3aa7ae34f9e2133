// Compiled by the test include_roots_reject_a_wrong_way_include (CMakeLists.txt), never linked: the estimators'
// include root holds only their headers and core's, so this include of the io layer must not be found.
#include "estimators/params.hpp"
#include "io/registry.hpp"
