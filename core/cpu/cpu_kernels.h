// core/cpu/cpu_kernels.h — the CPU backend's half of the kernel contract.
//
// cpu_kernels() returns the filled-in DeviceKernels table (device_kernels.h); the
// functions below are its entries, one file per family. All of them run on the
// calling thread plus the intra-op pool (parallel.h).
#pragma once

#include "core/device_kernels.h"

namespace glass::cpu {

const DeviceKernels* cpu_kernels();

// cpu_pointwise.cpp
void copy_kernel(TensorIterator& iter);
void fill_kernel(TensorIterator& iter, const Scalar& value);
void unary_kernel(TensorIterator& iter, UnaryOp op);
void binary_kernel(TensorIterator& iter, BinaryOp op);
void clamp_kernel(TensorIterator& iter, std::optional<Scalar> lo, std::optional<Scalar> hi);
void where_kernel(TensorIterator& iter);
void masked_fill_kernel(TensorIterator& iter, const Scalar& value);
// cpu_reduce.cpp
void reduce_kernel(TensorIterator& iter, ReduceOp op);
void arg_reduce_kernel(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool is_max,
                       const Tensor& values, const Tensor& indices);
void softmax_kernel(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool log,
                    const Tensor& out);
// cpu_linalg.cpp
void bmm_kernel(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& beta,
                const Scalar& alpha);
// cpu_index.cpp
void index_kernel(TensorIterator& iter, const IndexArgs& args);
void index_put_kernel(TensorIterator& iter, const IndexArgs& args, bool accumulate);
Tensor nonzero_kernel(const Tensor& self);
// cpu_random.cpp
void uniform_kernel(const Tensor& self, double from, double to, GeneratorImpl& gen);
void normal_kernel(const Tensor& self, double mean, double std, GeneratorImpl& gen);
void random_int_kernel(const Tensor& self, int64_t low, int64_t high, GeneratorImpl& gen);

}  // namespace glass::cpu
