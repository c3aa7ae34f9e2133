// CUDA backend: device discovery (and, with the calibration issue, the bandwidth and GEMM kernels).
#include <cuda_runtime.h>

#include "cuda/cuda_backend.hpp"

namespace hwplan::cuda {

bool compiled_in() { return true; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error: no driver or no GPU is a normal answer
    return 0;
  }
  return n;
}

}  // namespace hwplan::cuda
