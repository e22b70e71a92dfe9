// cuda/kernels/offset_calculator.cuh — TensorIterator's metadata, by value, for a kernel.
//
// A kernel thread knows only its linear index i in the iteration space. To find the
// bytes of operand k it needs the address formula of seed §II over the iterator's
// (already broadcast, reordered and coalesced) shape: split i into one index per dim,
// innermost dim first, and sum index * stride. TensorIterator has done the hard part —
// broadcast dims have stride 0, contiguous dims are merged — so most calls see one or
// two dims. The struct is passed to the kernel by value (it lands in the kernel's
// parameter space on a GPU, as PyTorch's OffsetCalculator does).
//
// Invariant: for every i in [0, numel), get(i) returns exactly the byte offsets the CPU
// loop (TensorIterator::for_each) visits for element i.
#pragma once

#include <cstdint>

#include "core/error.h"
#include "core/tensor_iterator.h"
#include "cuda/kernel.h"

namespace glass::cuda {

inline constexpr int kMaxKernelDims = 16;

template <int N>
struct OffsetCalculator {
  int ndim = 0;
  int64_t sizes[kMaxKernelDims] = {};
  int64_t strides[kMaxKernelDims][N] = {};  // bytes; dim 0 is the innermost

  __host__ __device__ void get(int64_t linear, int64_t (&offsets)[N]) const {
    for (int k = 0; k < N; ++k) offsets[k] = 0;
    for (int d = 0; d < ndim; ++d) {
      const int64_t index = linear % sizes[d];
      linear /= sizes[d];
      for (int k = 0; k < N; ++k) offsets[k] += index * strides[d][k];
    }
  }
};

// Operands [first, first + N) of iter.
template <int N>
OffsetCalculator<N> make_offset_calculator(const TensorIterator& iter, int first = 0) {
  GLASS_CHECK(iter.ndim() <= kMaxKernelDims, iter.op_name(), ": CUDA kernels handle at most ",
              kMaxKernelDims, " dims after merging; this iteration has ", iter.ndim());
  OffsetCalculator<N> calc;
  calc.ndim = iter.ndim();
  for (int d = 0; d < iter.ndim(); ++d) {
    calc.sizes[d] = iter.shape()[d];
    for (int k = 0; k < N; ++k) calc.strides[d][k] = iter.strides(first + k)[d];
  }
  return calc;
}

}  // namespace glass::cuda
