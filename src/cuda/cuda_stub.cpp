// Built when no CUDA compiler is available: the CUDA backend reports that it is absent.
#include "cuda/cuda_backend.hpp"

namespace hwplan::cuda {
bool compiled_in() { return false; }
int device_count() { return 0; }
}  // namespace hwplan::cuda
