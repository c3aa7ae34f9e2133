// Fuzz target: request traces (CSV, JSON Lines, vLLM result JSON). Any input must end in rows or an InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "io/trace_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto rows = hwplan::io::parse_trace(text, "fuzz.csv");
    for (const auto& r : rows)
      if (r.prompt_tokens < 1 || r.output_tokens < 1) __builtin_trap();
  } catch (const hwplan::InputError&) {
  }
  return 0;
}
