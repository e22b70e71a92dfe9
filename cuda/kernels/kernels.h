// cuda/kernels/kernels.h — the host entry points of the CUDA kernels, in both builds.
//
// Every .cu file in cuda/kernels/ is compiled by the host compiler against the
// simulator's header (namespace glass::cuda::sim) and, where nvcc exists, by nvcc for a
// GPU (namespace glass::cuda::gpu). The backend (cuda/backend.cpp) calls the set that
// matches the runtime serving kCUDA. Each entry queues its work on the current stream
// of the iterator's device and returns at once.
#pragma once

#include "core/device_kernels.h"
#include "core/scalar.h"
#include "core/tensor_iterator.h"

#define GLASS_DECLARE_CUDA_KERNELS                             \
  void launch_fill(TensorIterator& iter, const Scalar& value); \
  void launch_copy(TensorIterator& iter);                      \
  void launch_unary(TensorIterator& iter, UnaryOp op);         \
  void launch_binary(TensorIterator& iter, BinaryOp op);

namespace glass::cuda::sim {
GLASS_DECLARE_CUDA_KERNELS
}  // namespace glass::cuda::sim

namespace glass::cuda::gpu {
GLASS_DECLARE_CUDA_KERNELS
}  // namespace glass::cuda::gpu

#undef GLASS_DECLARE_CUDA_KERNELS
