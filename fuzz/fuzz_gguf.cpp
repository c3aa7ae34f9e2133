// Fuzzes the GGUF header reader: any byte string either loads (finite counts and bytes) or is an InputError.
#include "estimators/params.hpp"
#include "fuzz_common.hpp"
#include "io/gguf_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwplan;
  try {
    io::GgufInfo info;
    Model m = io::parse_gguf(fuzz::text_of(data, size), "fuzz.gguf", &info);
    fuzz::require_finite(info.total_bytes);
    fuzz::require_finite(count_parameters(m).total);
  } catch (const InputError&) {
  }
  return 0;
}
