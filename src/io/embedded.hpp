// The catalog and model zoo compiled into the binary (generated at build time from catalog/ and models/).
#pragma once

#include <cstddef>

namespace hwplan::io {

struct EmbeddedFile {
  const char* path;  // relative to the source tree, e.g. "catalog/h100-sxm.yaml"
  const char* text;
};

extern const EmbeddedFile kEmbeddedCatalog[];
extern const std::size_t kEmbeddedCatalogCount;
extern const EmbeddedFile kEmbeddedModels[];
extern const std::size_t kEmbeddedModelsCount;

}  // namespace hwplan::io
