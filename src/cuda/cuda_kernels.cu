// GPU measurement kernels: STREAM on the device, memcpy over PCIe/NVLink-C2C, a bandwidth sweep, cuBLAS and
// cuBLASLt GEMM sweeps and the launch latency. Errors become a CudaFailure inside and an empty (or partial)
// result plus last_error() outside: no exception and no sticky error leaves this file.
#include "cuda/cuda_kernels.hpp"
#include "core/strings.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hwplan::cuda {
namespace {

thread_local std::string g_last_error;

// --- errors and owned resources -------------------------------------------------------------------------

struct CudaFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear it, where it is not sticky, so that later calls start clean
    throw CudaFailure(std::string(what) + ": " + cudaGetErrorString(e));
  }
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw CudaFailure(std::string(what) + ": " + cublasGetStatusString(s));
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) { check(cudaMalloc(&p_, bytes), "cudaMalloc"); }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) { check(cudaMallocHost(&p_, bytes), "cudaMallocHost"); }
  ~PinnedBuffer() {
    if (p_) cudaFreeHost(p_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

class Event {
 public:
  Event() { check(cudaEventCreate(&e_), "cudaEventCreate"); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class CublasHandle {
 public:
  CublasHandle() { check(cublasCreate(&h_), "cublasCreate"); }
  ~CublasHandle() {
    if (h_) cublasDestroy(h_);
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

// Selects the device and reads what the kernels need to size themselves.
struct DeviceContext {
  int device = 0;
  cudaDeviceProp prop{};
  double l2_bytes = 0;

  explicit DeviceContext(int d) : device(d) {
    int n = 0;
    check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    if (d < 0 || d >= n)
      throw CudaFailure("no CUDA device " + std::to_string(d) + " (" + std::to_string(n) + " visible)");
    check(cudaSetDevice(d), "cudaSetDevice");
    check(cudaGetDeviceProperties(&prop, d), "cudaGetDeviceProperties");
    l2_bytes = prop.l2CacheSize > 0 ? prop.l2CacheSize : 64.0 * 1024 * 1024;
  }
  std::size_t free_bytes() const {
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
  }
};

// --- device kernels -------------------------------------------------------------------------------------

__global__ void copy_kernel(double* __restrict__ a, const double* __restrict__ b, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    a[i] = b[i];
}
__global__ void scale_kernel(double* __restrict__ a, const double* __restrict__ b, double s, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    a[i] = s * b[i];
}
__global__ void add_kernel(double* __restrict__ a, const double* __restrict__ b, const double* __restrict__ c,
                           std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    a[i] = b[i] + c[i];
}
__global__ void triad_kernel(double* __restrict__ a, const double* __restrict__ b, const double* __restrict__ c,
                             double s, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    a[i] = b[i] + s * c[i];
}
__global__ void set_kernel(double* __restrict__ a, double value, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    a[i] = value;
}
// Writes every word of a buffer larger than L2, evicting whatever a previous GEMM left there.
__global__ void flush_kernel(unsigned* __restrict__ p, unsigned value, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = value;
}
__global__ void empty_kernel() {}

// Uniform in [-1, -0.1] u [0.1, 1] from a hash of (seed, i): non-zero, both signs, exactly representable
// enough in every format used here, and reproducible.
__device__ float random_nonzero(std::uint64_t seed, std::size_t i) {
  std::uint64_t z = seed + (static_cast<std::uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
  const float magnitude = 0.1f + 0.9f * u;
  return (z & 1) ? magnitude : -magnitude;
}

template <typename T>
__global__ void fill_random_kernel(T* __restrict__ p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = T(random_nonzero(seed, i));
}

constexpr int kBlock = 256;

// Enough blocks to fill every SM to its occupancy limit; grid-stride loops cover the rest.
template <typename Kernel>
int full_grid(const DeviceContext& ctx, Kernel kernel) {
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0), "cudaOccupancyMaxActiveBlocks");
  return std::max(1, per_sm) * std::max(1, ctx.prop.multiProcessorCount);
}

int grid_for(int full, std::size_t n) {
  return static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(full), (n + kBlock - 1) / kBlock));
}

template <typename T>
void fill_random(const DeviceContext& ctx, T* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
  fill_random_kernel<T><<<grid_for(full_grid(ctx, fill_random_kernel<T>), n), kBlock, 0, s>>>(p, n, seed);
  check(cudaGetLastError(), "fill_random_kernel");
}

// --- timing ---------------------------------------------------------------------------------------------

// Times `reps` runs of work() on stream s with events around the work alone; before() (an L2 flush, say)
// runs untimed ahead of each. Returns seconds per run.
std::vector<double> time_on_stream(cudaStream_t s, int reps, const std::function<void()>& work,
                                   const std::function<void()>& before = {}) {
  std::vector<Event> start(static_cast<std::size_t>(reps));
  std::vector<Event> stop(static_cast<std::size_t>(reps));
  for (int r = 0; r < reps; ++r) {
    if (before) before();
    check(cudaEventRecord(start[r].get(), s), "cudaEventRecord");
    work();
    check(cudaEventRecord(stop[r].get(), s), "cudaEventRecord");
  }
  check(cudaGetLastError(), "kernel launch");
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  std::vector<double> seconds;
  for (int r = 0; r < reps; ++r) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start[r].get(), stop[r].get()), "cudaEventElapsedTime");
    seconds.push_back(std::max(static_cast<double>(ms) * 1e-3, 1e-9));
  }
  return seconds;
}

GpuKernelResult make_result(std::string kernel, std::string shape, double size, std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  const double median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  GpuKernelResult r;
  r.kernel = std::move(kernel);
  r.shape = std::move(shape);
  r.size = size;
  r.best = size / seconds.front();
  r.median = size / median;
  r.repetitions = static_cast<int>(n);
  return r;
}

// --- bandwidth ------------------------------------------------------------------------------------------

struct StreamArrays {
  std::size_t n;
  DeviceBuffer a, b, c;
  StreamArrays(const DeviceContext& ctx, std::size_t elements, cudaStream_t s)
      : n(elements), a(n * sizeof(double)), b(n * sizeof(double)), c(n * sizeof(double)) {
    const int grid = grid_for(full_grid(ctx, set_kernel), n);
    set_kernel<<<grid, kBlock, 0, s>>>(a.as<double>(), 1.0, n);
    set_kernel<<<grid, kBlock, 0, s>>>(b.as<double>(), 2.0, n);
    set_kernel<<<grid, kBlock, 0, s>>>(c.as<double>(), 0.5, n);
    check(cudaGetLastError(), "set_kernel");
  }
};

}  // namespace

std::vector<GpuInfo> list_gpus() {
  g_last_error.clear();
  std::vector<GpuInfo> gpus;
  try {
    int n = 0;
    check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    for (int d = 0; d < n; ++d) {
      cudaDeviceProp p{};
      check(cudaGetDeviceProperties(&p, d), "cudaGetDeviceProperties");
      int clock_khz = 0, memory_clock_khz = 0;
      cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d);
      cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, d);
      cudaGetLastError();  // an attribute a driver lacks is not a failure of the listing
      GpuInfo g;
      g.name = p.name;
      g.sm_count = p.multiProcessorCount;
      g.clock_mhz = clock_khz / 1000.0;
      g.memory_bytes = static_cast<double>(p.totalGlobalMem);
      g.l2_bytes = p.l2CacheSize;
      g.memory_bandwidth_bytes_per_s = 2.0 * memory_clock_khz * 1e3 * p.memoryBusWidth / 8.0;  // double data rate
      g.driver_version = driver;
      g.runtime_version = runtime;
      g.cc_major = p.major;
      g.cc_minor = p.minor;
      gpus.push_back(g);
    }
  } catch (const std::exception& e) {
    g_last_error = e.what();
  }
  return gpus;
}

std::vector<GpuKernelResult> gpu_stream(int device, bool quick, const Progress& progress) {
  g_last_error.clear();
  std::vector<GpuKernelResult> results;
  const auto add = [&](GpuKernelResult r) {
    results.push_back(std::move(r));
    if (progress) progress(results.back());
  };
  try {
    DeviceContext ctx(device);
    Stream stream;
    const cudaStream_t s = stream.get();
    // STREAM's rule: each array at least 4x the last-level cache.
    double array_bytes = std::max(4.0 * ctx.l2_bytes, quick ? 256.0 * 1024 * 1024 : 1024.0 * 1024 * 1024);
    array_bytes = std::min(array_bytes, 0.25 * static_cast<double>(ctx.free_bytes()));
    const auto n = static_cast<std::size_t>(array_bytes / sizeof(double));
    StreamArrays x(ctx, n, s);
    double* a = x.a.as<double>();
    double* b = x.b.as<double>();
    double* c = x.c.as<double>();
    const double scalar = 3.0;
    const int warmups = 2;
    const int reps = quick ? 10 : 20;
    const std::string shape = "3 x " + binary_size(static_cast<double>(n) * sizeof(double));
    const int g_copy = grid_for(full_grid(ctx, copy_kernel), n);
    const int g_scale = grid_for(full_grid(ctx, scale_kernel), n);
    const int g_add = grid_for(full_grid(ctx, add_kernel), n);
    const int g_triad = grid_for(full_grid(ctx, triad_kernel), n);
    const struct {
      const char* name;
      double bytes_per_element;
      std::function<void()> launch;
    } kernels[] = {
        {"copy", 16, [&] { copy_kernel<<<g_copy, kBlock, 0, s>>>(c, a, n); }},
        {"scale", 16, [&] { scale_kernel<<<g_scale, kBlock, 0, s>>>(b, c, scalar, n); }},
        {"add", 24, [&] { add_kernel<<<g_add, kBlock, 0, s>>>(c, a, b, n); }},
        {"triad", 24, [&] { triad_kernel<<<g_triad, kBlock, 0, s>>>(a, b, c, scalar, n); }},
    };
    for (const auto& k : kernels) {
      time_on_stream(s, warmups, k.launch);
      add(make_result(k.name, shape, k.bytes_per_element * static_cast<double>(n), time_on_stream(s, reps, k.launch)));
    }
    const std::size_t bytes = n * sizeof(double);
    const auto d2d = [&] { check(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync"); };
    time_on_stream(s, warmups, d2d);
    add(make_result("memcpy_d2d", "1 x " + binary_size(static_cast<double>(bytes)), 2.0 * static_cast<double>(bytes),
                    time_on_stream(s, reps, d2d)));

    // Host <-> device from pinned memory: PCIe (or NVLink-C2C on Grace Hopper), one direction at a time.
    const std::size_t host_bytes = std::min<std::size_t>(bytes, quick ? 64u << 20 : 256u << 20);
    PinnedBuffer host(host_bytes);
    const auto h2d = [&] { check(cudaMemcpyAsync(a, host.get(), host_bytes, cudaMemcpyHostToDevice, s), "H2D"); };
    const auto d2h = [&] { check(cudaMemcpyAsync(host.get(), a, host_bytes, cudaMemcpyDeviceToHost, s), "D2H"); };
    const std::string host_shape = binary_size(static_cast<double>(host_bytes)) + " pinned";
    const int host_reps = quick ? 5 : 10;
    time_on_stream(s, 1, h2d);
    add(make_result("memcpy_h2d", host_shape, static_cast<double>(host_bytes), time_on_stream(s, host_reps, h2d)));
    time_on_stream(s, 1, d2h);
    add(make_result("memcpy_d2h", host_shape, static_cast<double>(host_bytes), time_on_stream(s, host_reps, d2h)));
  } catch (const std::exception& e) {
    g_last_error = e.what();
  }
  return results;
}

std::vector<GpuKernelResult> gpu_bandwidth_sweep(int device, bool quick, const Progress& progress) {
  g_last_error.clear();
  std::vector<GpuKernelResult> results;
  try {
    DeviceContext ctx(device);
    Stream stream;
    const cudaStream_t s = stream.get();
    const int full = full_grid(ctx, triad_kernel);
    double max_bytes = quick ? 1024.0 * 1024 * 1024 : 4096.0 * 1024 * 1024;
    max_bytes = std::min(max_bytes, 0.5 * static_cast<double>(ctx.free_bytes()));
    const int reps = quick ? 5 : 10;
    for (double ws = 64.0 * 1024; ws <= max_bytes; ws *= quick ? 4 : 2) {
      const auto n = static_cast<std::size_t>(ws / (3 * sizeof(double)));
      StreamArrays x(ctx, n, s);
      double* a = x.a.as<double>();
      double* b = x.b.as<double>();
      double* c = x.c.as<double>();
      const int grid = grid_for(full, n);
      int launches = 1;
      const auto batch = [&] {
        for (int i = 0; i < launches; ++i) triad_kernel<<<grid, kBlock, 0, s>>>(a, b, c, 3.0, n);
      };
      // Size the batch so that one timed repetition lasts about a millisecond.
      launches = 10;
      const std::vector<double> probe = time_on_stream(s, 2, batch);
      const double per_launch = *std::min_element(probe.begin(), probe.end()) / launches;
      launches = static_cast<int>(std::clamp(1e-3 / per_launch, 1.0, 2000.0));
      std::vector<double> seconds = time_on_stream(s, reps, batch);
      for (double& t : seconds) t /= launches;
      results.push_back(make_result("triad", "3 x " + binary_size(static_cast<double>(n) * sizeof(double)),
                                    24.0 * static_cast<double>(n), std::move(seconds)));
      if (progress) progress(results.back());
    }
  } catch (const std::exception& e) {
    g_last_error = e.what();
  }
  return results;
}

namespace {

struct GemmShape {
  long m, n, k;
};

std::vector<GemmShape> gemm_shapes(bool quick) {
  std::vector<GemmShape> shapes;
  for (long n = 256; n <= (quick ? 4096 : 16384); n *= quick ? 4 : 2) shapes.push_back({n, n, n});
  if (quick) {
    shapes.push_back({2048, 4096, 4096});
    shapes.push_back({16, 8192, 8192});
    return shapes;
  }
  // A Llama-3-8B-like layer at 4096 tokens: fused QKV (GQA), fused gate+up, down projection.
  shapes.push_back({4096, 6144, 4096});
  shapes.push_back({4096, 28672, 4096});
  shapes.push_back({4096, 4096, 14336});
  // Decoding against an 8192 x 8192 weight: GEMV-like, bound by reading the weight.
  for (long m : {1L, 16L, 128L}) shapes.push_back({m, 8192, 8192});
  return shapes;
}

std::string shape_name(const GemmShape& s) {
  return "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k);
}

double gemm_flops(const GemmShape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

struct GemmType {
  cudaDataType_t ab, c;
  cublasComputeType_t compute;
  std::size_t ab_bytes, c_bytes;
};

// Everything that every precision's sweep shares: shapes, memory check, fill, L2 flush, repetition policy.
class GemmBench {
 public:
  GemmBench(const DeviceContext& ctx, cudaStream_t s, bool quick)
      : ctx_(ctx), s_(s), quick_(quick),
        flush_(static_cast<std::size_t>(std::max(2.0 * ctx.l2_bytes, 64.0 * 1024 * 1024))) {}

  bool fits(std::size_t bytes) const {
    return static_cast<double>(bytes) < 0.85 * static_cast<double>(ctx_.free_bytes());
  }

  template <typename T>
  void fill(void* p, std::size_t count) {
    fill_random<T>(ctx_, static_cast<T*>(p), count, ++seed_, s_);
  }

  // Two warm-ups (the first loads kernels and runs cuBLAS's heuristics), the second timed to pick how many
  // repetitions fit the budget; an L2 flush before each timed one.
  std::vector<double> time(const std::function<void()>& gemm) {
    const auto flush = [this] {
      const std::size_t words = flush_.bytes() / sizeof(unsigned);
      flush_kernel<<<grid_for(full_grid(ctx_, flush_kernel), words), kBlock, 0, s_>>>(flush_.as<unsigned>(),
                                                                                      ++flush_value_, words);
    };
    time_on_stream(s_, 1, gemm, flush);
    const double t = time_on_stream(s_, 1, gemm, flush).front();
    const int reps = std::clamp(static_cast<int>((quick_ ? 0.1 : 0.5) / t), quick_ ? 3 : 5, quick_ ? 10 : 30);
    return time_on_stream(s_, reps, gemm, flush);
  }

 private:
  const DeviceContext& ctx_;
  cudaStream_t s_;
  bool quick_;
  DeviceBuffer flush_;
  unsigned flush_value_ = 0;
  std::uint64_t seed_ = 0x5eed;
};

void gemm_cublas(const DeviceContext& ctx, cudaStream_t s, const std::string& precision, bool quick,
                 std::vector<GpuKernelResult>& results, const Progress& progress) {
  GemmType t{};
  if (precision == "fp64") t = {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8, 8};
  else if (precision == "fp32") t = {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4};
  else if (precision == "tf32") t = {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4};
  else if (precision == "fp16") t = {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2};
  else if (precision == "bf16") t = {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2};
  else throw CudaFailure("unknown GEMM precision '" + precision + "' (fp64, fp32, tf32, fp16, bf16, fp8)");

  CublasHandle handle;
  check(cublasSetStream(handle.get(), s), "cublasSetStream");
  // fp32 means fp32: no TF32 down-conversion (CUBLAS_COMPUTE_32F already forbids it; the math mode makes the
  // handle agree), so the curve is the CUDA-core rate.
  check(cublasSetMathMode(handle.get(), CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  GemmBench bench(ctx, s, quick);
  const double alpha64 = 1.0, beta64 = 0.0;
  const float alpha32 = 1.0f, beta32 = 0.0f;
  const bool fp64 = t.compute == CUBLAS_COMPUTE_64F;
  const void* alpha = fp64 ? static_cast<const void*>(&alpha64) : static_cast<const void*>(&alpha32);
  const void* beta = fp64 ? static_cast<const void*>(&beta64) : static_cast<const void*>(&beta32);

  for (const GemmShape& shape : gemm_shapes(quick)) {
    const auto mk = static_cast<std::size_t>(shape.m * shape.k), kn = static_cast<std::size_t>(shape.k * shape.n),
               mn = static_cast<std::size_t>(shape.m * shape.n);
    if (!bench.fits((mk + kn) * t.ab_bytes + mn * t.c_bytes)) continue;  // a smaller GPU skips the largest
    DeviceBuffer a(mk * t.ab_bytes), b(kn * t.ab_bytes), c(mn * t.c_bytes);
    const auto fill = [&](void* p, std::size_t count, cudaDataType_t type) {
      switch (type) {
        case CUDA_R_64F: bench.fill<double>(p, count); break;
        case CUDA_R_32F: bench.fill<float>(p, count); break;
        case CUDA_R_16F: bench.fill<__half>(p, count); break;
        default: bench.fill<__nv_bfloat16>(p, count); break;
      }
    };
    fill(a.as<void>(), mk, t.ab);
    fill(b.as<void>(), kn, t.ab);
    const auto gemm = [&] {
      // Column-major C (m x n) = A (m x k) * B (k x n).
      check(cublasGemmEx(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(shape.m),
                         static_cast<int>(shape.n), static_cast<int>(shape.k), alpha, a.as<void>(), t.ab,
                         static_cast<int>(shape.m), b.as<void>(), t.ab, static_cast<int>(shape.k), beta,
                         c.as<void>(), t.c, static_cast<int>(shape.m), t.compute, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
    };
    results.push_back(make_result("gemm_" + precision, shape_name(shape), gemm_flops(shape), bench.time(gemm)));
    if (progress) progress(results.back());
  }
}

class LtHandle {
 public:
  LtHandle() { check(cublasLtCreate(&h_), "cublasLtCreate"); }
  ~LtHandle() {
    if (h_) cublasLtDestroy(h_);
  }
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  cublasLtHandle_t get() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

// Owns the descriptors of one cuBLASLt matmul.
struct LtMatmul {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  LtMatmul() = default;
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  ~LtMatmul() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// FP8 (e4m3 x e4m3, FP32 accumulate, bf16 out). cuBLASLt's FP8 kernels want A transposed ("TN") and every
// dimension a multiple of 16, so decode shapes run at M = 16.
void gemm_fp8(const DeviceContext& ctx, cudaStream_t s, bool quick, std::vector<GpuKernelResult>& results,
              const Progress& progress) {
  if (ctx.prop.major * 10 + ctx.prop.minor < 89) return;  // no FP8 tensor cores before Ada / Hopper
  LtHandle lt;
  GemmBench bench(ctx, s, quick);
  const std::size_t workspace_bytes = 64u << 20;
  DeviceBuffer workspace(workspace_bytes);
  const float alpha = 1.0f, beta = 0.0f;

  std::vector<GemmShape> shapes;
  for (GemmShape shape : gemm_shapes(quick)) {
    shape.m = std::max(16L, shape.m);
    if (shape.m % 16 || shape.n % 16 || shape.k % 16) continue;
    if (std::none_of(shapes.begin(), shapes.end(), [&](const GemmShape& x) {
          return x.m == shape.m && x.n == shape.n && x.k == shape.k;
        }))
      shapes.push_back(shape);
  }
  for (const GemmShape& shape : shapes) {
    const auto mk = static_cast<std::size_t>(shape.m * shape.k), kn = static_cast<std::size_t>(shape.k * shape.n),
               mn = static_cast<std::size_t>(shape.m * shape.n);
    if (!bench.fits(mk + kn + mn * 2 + workspace_bytes)) continue;
    DeviceBuffer a(mk), b(kn), c(mn * 2);
    bench.fill<__nv_fp8_e4m3>(a.as<void>(), mk);
    bench.fill<__nv_fp8_e4m3>(b.as<void>(), kn);

    LtMatmul mm;
    check(cublasLtMatmulDescCreate(&mm.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa), "TRANSA");
    check(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb), "TRANSB");
    // A is stored k x m (column-major) and used transposed; B is k x n; C and D are m x n.
    check(cublasLtMatrixLayoutCreate(&mm.a, CUDA_R_8F_E4M3, shape.k, shape.m, shape.k), "layout A");
    check(cublasLtMatrixLayoutCreate(&mm.b, CUDA_R_8F_E4M3, shape.k, shape.n, shape.k), "layout B");
    check(cublasLtMatrixLayoutCreate(&mm.c, CUDA_R_16BF, shape.m, shape.n, shape.m), "layout C");
    check(cublasLtMatmulPreferenceCreate(&mm.pref), "cublasLtMatmulPreferenceCreate");
    check(cublasLtMatmulPreferenceSetAttribute(mm.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                               sizeof workspace_bytes),
          "MAX_WORKSPACE_BYTES");
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    check(cublasLtMatmulAlgoGetHeuristic(lt.get(), mm.op, mm.a, mm.b, mm.c, mm.c, mm.pref, 1, &heuristic, &found),
          "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0) throw CudaFailure("cuBLASLt has no FP8 kernel for " + shape_name(shape));
    const auto gemm = [&] {
      check(cublasLtMatmul(lt.get(), mm.op, &alpha, a.as<void>(), mm.a, b.as<void>(), mm.b, &beta, c.as<void>(),
                           mm.c, c.as<void>(), mm.c, &heuristic.algo, workspace.as<void>(), workspace_bytes, s),
            "cublasLtMatmul");
    };
    results.push_back(make_result("gemm_fp8", shape_name(shape), gemm_flops(shape), bench.time(gemm)));
    if (progress) progress(results.back());
  }
}

}  // namespace

std::vector<GpuKernelResult> gpu_gemm(int device, const std::string& precision, bool quick,
                                      const Progress& progress) {
  g_last_error.clear();
  std::vector<GpuKernelResult> results;
  try {
    DeviceContext ctx(device);
    Stream stream;
    if (precision == "fp8") gemm_fp8(ctx, stream.get(), quick, results, progress);
    else gemm_cublas(ctx, stream.get(), precision, quick, results, progress);
    check(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize");
  } catch (const std::exception& e) {
    g_last_error = e.what();
  }
  return results;
}

double gpu_launch_latency_seconds(int device) {
  g_last_error.clear();
  try {
    DeviceContext ctx(device);
    Stream stream;
    const cudaStream_t s = stream.get();
    const auto launch_and_wait = [&] {
      empty_kernel<<<1, 1, 0, s>>>();
      check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    };
    for (int i = 0; i < 50; ++i) launch_and_wait();
    check(cudaGetLastError(), "empty_kernel");
    std::vector<double> seconds(1001);
    for (double& t : seconds) {
      const auto t0 = std::chrono::steady_clock::now();
      launch_and_wait();
      t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    std::nth_element(seconds.begin(), seconds.begin() + 500, seconds.end());
    return seconds[500];
  } catch (const std::exception& e) {
    g_last_error = e.what();
    return 0;
  }
}

double gpu_launch_overhead_seconds(int device) {
  g_last_error.clear();
  try {
    DeviceContext ctx(device);
    Stream stream;
    const cudaStream_t s = stream.get();
    constexpr int kLaunches = 2000;
    const auto burst = [&] {
      for (int i = 0; i < kLaunches; ++i) empty_kernel<<<1, 1, 0, s>>>();
    };
    time_on_stream(s, 1, burst);  // loads the kernel, warms the launch path
    std::vector<double> seconds = time_on_stream(s, 7, burst);
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2] / kLaunches;
  } catch (const std::exception& e) {
    g_last_error = e.what();
    return 0;
  }
}

std::string last_error() { return g_last_error; }

}  // namespace hwplan::cuda
