// Fuzzes the safetensors header reader (the input is the whole file: length, JSON header, data).
#include "fuzz_common.hpp"
#include "io/safetensors_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwplan;
  try {
    io::SafetensorsInfo info;
    io::parse_safetensors_header(fuzz::text_of(data, size), size, "fuzz.safetensors", info);
    fuzz::require_finite(info.total_bytes);
  } catch (const InputError&) {
  }
  return 0;
}
