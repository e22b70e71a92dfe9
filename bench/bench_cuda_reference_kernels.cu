// bench/bench_cuda_reference_kernels.cu — the references of bench_cuda_kernels: a plain
// grid-stride copy kernel, and CUB's DeviceReduce::Sum on a GPU.
//
// Compiled twice, like cuda/kernels/*.cu (bench/CMakeLists.txt): as C++ for the simulated
// GPU and by nvcc for a GPU. CUB is header-only CUDA code, so only the nvcc build has it;
// the simulator's cub_sum says so instead of running.
//
// Invariant: each entry queues its work on the current stream and returns; nothing here
// allocates or waits.
#include "bench/bench_cuda_reference_kernels.h"

#include <algorithm>

#include "cuda/kernel.h"
#include "cuda/stream.h"

#ifdef __CUDACC__
#include <cub/device/device_reduce.cuh>
#endif

namespace glass_bench::GLASS_KERNEL_NS {
namespace {

inline constexpr int kCopyThreads = 256;
// An sm_90 SM holds 2048 resident threads: 8 blocks of 256 fill it. One such wave of
// blocks, each thread striding over the rest, is the textbook copy that reaches HBM's
// bandwidth without any tuning.
inline constexpr int kCopyBlocksPerSM = 2048 / kCopyThreads;

__global__ void copy_grid_stride_kernel(int64_t n, gptr<const float> in, gptr<float> out) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = in[i];
}

glass::cuda::StreamHandle current_stream() { return glass::cuda::getCurrentCUDAStream(); }

}  // namespace

void copy_floats(const float* in, float* out, int64_t n) {
  if (n == 0) return;
  glass::cuda::Runtime& rt = glass::cuda::runtime();
  const glass::cuda::StreamHandle stream = current_stream();
  const int64_t wave =
      int64_t(rt.properties(rt.stream_device(stream)).multi_processor_count) * kCopyBlocksPerSM;
  const int64_t blocks =
      std::max<int64_t>(1, std::min<int64_t>(wave, (n + kCopyThreads - 1) / kCopyThreads));
  GLASS_LAUNCH(copy_grid_stride_kernel, glass::cuda::Dim3(static_cast<unsigned>(blocks)),
               glass::cuda::Dim3(kCopyThreads), 0, stream, n, in, out);
}

#ifdef __CUDACC__

size_t cub_sum_scratch_bytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr),
                         static_cast<float*>(nullptr), n,
                         static_cast<cudaStream_t>(current_stream()));
  return bytes;
}

std::string cub_sum(const float* in, float* out, int64_t n, void* scratch, size_t scratch_bytes) {
  const cudaError_t err = cub::DeviceReduce::Sum(scratch, scratch_bytes, in, out, n,
                                                 static_cast<cudaStream_t>(current_stream()));
  if (err == cudaSuccess) return "";
  return std::string("cub::DeviceReduce::Sum failed: ") + cudaGetErrorName(err) + ": " +
         cudaGetErrorString(err);
}

#else

size_t cub_sum_scratch_bytes(int64_t) { return 0; }

std::string cub_sum(const float*, float*, int64_t, void*, size_t) {
  return "CUB's DeviceReduce::Sum needs a GPU: CUB is CUDA device code that only nvcc "
         "compiles, and the simulated GPU runs the host compiler's build";
}

#endif

}  // namespace glass_bench::GLASS_KERNEL_NS
