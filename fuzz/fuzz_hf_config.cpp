// Fuzzes the Hugging Face config.json reader; a config that loads is counted (the count must be finite).
#include "estimators/params.hpp"
#include "fuzz_common.hpp"
#include "io/hf_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwplan;
  try {
    Model m = io::parse_hf_config(fuzz::text_of(data, size), "config.json", "fuzz/model");
    fuzz::require_finite(count_parameters(m).total);
    fuzz::require_finite(kv_cache_elements(m, 4096));
  } catch (const InputError&) {
  }
  return 0;
}
