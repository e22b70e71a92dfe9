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

#define GLASS_DECLARE_CUDA_KERNELS                                                               \
  void launch_fill(TensorIterator& iter, const Scalar& value);                                   \
  void launch_copy(TensorIterator& iter);                                                        \
  void launch_unary(TensorIterator& iter, UnaryOp op);                                           \
  /* bmm.cu (the gemm ladder: gemm.h) */                                                         \
  void launch_bmm(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& beta,       \
                  const Scalar& alpha);                                                          \
  /* pointwise_select.cu */                                                                      \
  void launch_clamp(TensorIterator& iter, std::optional<Scalar> lo, std::optional<Scalar> hi);   \
  void launch_where(TensorIterator& iter);                                                       \
  void launch_masked_fill(TensorIterator& iter, const Scalar& value);                            \
  /* reduce.cu, arg_reduce.cu */                                                                 \
  void launch_reduce(TensorIterator& iter, ReduceOp op);                                         \
  void launch_arg_reduce(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool is_max, \
                         const Tensor& values, const Tensor& indices);                           \
  /* softmax.cu, nonzero.cu, random.cu */                                                        \
  void launch_softmax(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool log,       \
                      const Tensor& out);                                                        \
  void launch_softmax_three_pass(const Tensor& in, int64_t outer, int64_t n, int64_t inner,      \
                                 bool log, const Tensor& out);                                   \
  Tensor launch_nonzero(const Tensor& self);                                                     \
  void launch_random_int(const Tensor& self, int64_t low, int64_t high, GeneratorImpl& gen);     \
  void launch_uniform(const Tensor& self, double from, double to, GeneratorImpl& gen);           \
  void launch_normal(const Tensor& self, double mean, double std, GeneratorImpl& gen);           \
  void launch_binary(TensorIterator& iter, BinaryOp op);                                         \
  /* index.cu */                                                                                 \
  void launch_index(TensorIterator& iter, const IndexArgs& args);                                \
  void launch_index_put(TensorIterator& iter, const IndexArgs& args, bool accumulate);

namespace glass::cuda::sim {
GLASS_DECLARE_CUDA_KERNELS
}  // namespace glass::cuda::sim

namespace glass::cuda::gpu {
GLASS_DECLARE_CUDA_KERNELS
}  // namespace glass::cuda::gpu

#undef GLASS_DECLARE_CUDA_KERNELS
