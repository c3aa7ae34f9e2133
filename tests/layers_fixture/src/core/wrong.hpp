// A wrong-way include for the layering check's own test (never compiled).
#include "io/registry.hpp"
