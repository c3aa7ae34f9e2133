// The CUDA calibration backend (compiled with nvcc when HWPLAN_CUDA is ON).
#pragma once

namespace hwplan::cuda {

bool compiled_in();
// GPUs visible to the CUDA runtime (0 when the driver is missing or no GPU is present).
int device_count();

}  // namespace hwplan::cuda
