// Whether the CUDA backend (the libhwplan_cuda.so plugin) is available, and how many GPUs it sees.
#pragma once

namespace hwplan::cuda {

// The plugin was found and loaded (it sits beside the hwplan binary, or on the library path).
bool compiled_in();
// GPUs visible to the CUDA runtime (0 when the plugin, the driver or a GPU is missing).
int device_count();

}  // namespace hwplan::cuda
