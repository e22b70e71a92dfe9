// bench/bench_cuda_reference_kernels.h — the plain kernels bench_cuda_kernels measures
// glasstorch's against, in both builds.
//
// bench_cuda_reference_kernels.cu is compiled as cuda/kernels/ are: by the host compiler
// for the simulated GPU (namespace sim, always) and by nvcc for a GPU (namespace gpu, where
// cuda/ built its GPU kernels: GLASS_BENCH_GPU_KERNELS). Pointers are device memory (a
// CUDA tensor's data); every call queues its work on the current stream and returns.
//
// Invariant: the references do only what their name says — no dispatch, no iterator —
// so they measure the floor glasstorch's general kernels are held to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#define GLASS_DECLARE_BENCH_REFERENCE_KERNELS                                                \
  /* out[i] = in[i] for i < n: one grid-stride loop, one float per access. */                \
  void copy_floats(const float* in, float* out, int64_t n);                                  \
  /* Bytes of temporary storage cub_sum needs for n floats (0 where there is no CUB). */     \
  size_t cub_sum_scratch_bytes(int64_t n);                                                   \
  /* *out = in[0] + ... + in[n-1] by CUB's DeviceReduce::Sum; "" or why it could not run. */ \
  std::string cub_sum(const float* in, float* out, int64_t n, void* scratch, size_t scratch_bytes);

namespace glass_bench::sim {
GLASS_DECLARE_BENCH_REFERENCE_KERNELS
}  // namespace glass_bench::sim

namespace glass_bench::gpu {
GLASS_DECLARE_BENCH_REFERENCE_KERNELS
}  // namespace glass_bench::gpu

#undef GLASS_DECLARE_BENCH_REFERENCE_KERNELS
