// cuda/kernels/elementwise.cuh — the elementwise kernels every pointwise op runs through.
//
// PyTorch's scheme, in miniature: a block of 128 threads covers 1024 consecutive
// elements, 8 per thread. When every operand is one flat run, a thread takes its elements
// in groups of 4 neighbours (one 16-byte load of floats on a GPU, PyTorch's vectorized
// path), the groups of a warp's 32 threads side by side: one coalesced 512-byte access.
// Otherwise a thread's elements are 128 apart, so a warp still touches 32 neighbours at
// once, and the OffsetCalculator finds each element's bytes. The math of the op is a
// small functor (F) applied per element.
//
// Why 8 per thread and not 4: the simulator pays to start each simulated thread (a GPU
// does not), and with 4 that start-up was most of c = a + b's time (bench_cuda, 16M
// floats: 57 ms with 4, 23 ms with 8, 22 ms with 16). A GPU is memory-bound here either
// way, with 16K blocks for 16M elements.
//
// An input may be a value instead of memory: a CPU scalar (x * 2) is passed as a kernel
// argument, never copied to the device (the *_is_value flags).
//
// Invariant: each element of the output is written exactly once, by one thread.
#pragma once

#include <cstdint>
#include <string>

#include "core/scalar_type.h"
#include "core/tensor_iterator.h"
#include "cuda/kernel.h"
#include "cuda/kernels/offset_calculator.cuh"
#include "cuda/stream.h"

namespace glass::cuda::GLASS_KERNEL_NS {

inline constexpr int kElementwiseThreads = 128;
inline constexpr int kElementsPerThread = 8;
inline constexpr int kVec = 4;  // neighbours per group in the flat kernels

template <class T>
__device__ __forceinline__ T load(gptr<const char> base, int64_t offset) {
  return *reinterpret_cast<const T*>(&base[offset]);
}

template <class T>
__device__ __forceinline__ void store(gptr<char> base, int64_t offset, T value) {
  *reinterpret_cast<T*>(&base[offset]) = value;
}

// Calls f(i) for each of this thread's elements of a flat run of n: groups of kVec
// neighbours, kElementwiseThreads groups apart.
template <class F>
__device__ __forceinline__ void for_each_flat_element(int64_t n, F&& f) {
  const int64_t block_start = int64_t(blockIdx.x) * kElementwiseThreads * kElementsPerThread;
  for (int k = 0; k < kElementsPerThread / kVec; ++k) {
    const int64_t first = block_start + (int64_t(k) * kElementwiseThreads + threadIdx.x) * kVec;
    if (first + kVec <= n) {
      for (int v = 0; v < kVec; ++v) f(first + v);
    } else {  // the tail of the run; later groups lie beyond it
      for (int64_t i = first; i < n; ++i) f(i);
      return;
    }
  }
}

// The first element of this thread; the others follow kElementwiseThreads apart.
__device__ __forceinline__ int64_t first_element() {
  return int64_t(blockIdx.x) * kElementwiseThreads * kElementsPerThread + threadIdx.x;
}

// Two versions of each kernel: one for operands that are all one flat run (element i
// is at byte i * sizeof(T)), and one that asks the OffsetCalculator. The flat one does
// not even take the calculator: a kernel's arguments are copied for every launch on a
// GPU and, in the simulator, for every thread — 512 bytes of strides per thread would
// cost more than the addition itself.
template <class T>
__global__ void fill_flat_kernel(int64_t n, gptr<char> out, T value) {
  for_each_flat_element(n, [&](int64_t i) { store<T>(out, i * int64_t(sizeof(T)), value); });
}

template <class T>
__global__ void fill_kernel(int64_t n, OffsetCalculator<1> calc, gptr<char> out, T value) {
  int64_t i = first_element();
  for (int k = 0; k < kElementsPerThread && i < n; ++k, i += kElementwiseThreads) {
    int64_t off[1];
    calc.get(i, off);
    store<T>(out, off[0], value);
  }
}

template <class Out, class In, class F>
__global__ void unary_flat_kernel(int64_t n, gptr<char> out, gptr<const char> in, F f) {
  for_each_flat_element(n, [&](int64_t i) {
    store<Out>(out, i * int64_t(sizeof(Out)), f(load<In>(in, i * int64_t(sizeof(In)))));
  });
}

template <class Out, class In, class F>
__global__ void unary_kernel(int64_t n, OffsetCalculator<2> calc, gptr<char> out,
                             gptr<const char> in, F f) {
  int64_t i = first_element();
  for (int k = 0; k < kElementsPerThread && i < n; ++k, i += kElementwiseThreads) {
    int64_t off[2];
    calc.get(i, off);
    store<Out>(out, off[0], f(load<In>(in, off[1])));
  }
}

template <class Out, class T, class F>
__global__ void binary_flat_kernel(int64_t n, gptr<char> out, gptr<const char> a, bool a_is_value,
                                   T a_value, gptr<const char> b, bool b_is_value, T b_value, F f) {
  for_each_flat_element(n, [&](int64_t i) {
    const int64_t off = i * int64_t(sizeof(T));
    const T x = a_is_value ? a_value : load<T>(a, off);
    const T y = b_is_value ? b_value : load<T>(b, off);
    store<Out>(out, i * int64_t(sizeof(Out)), f(x, y));
  });
}

template <class Out, class T, class F>
__global__ void binary_kernel(int64_t n, OffsetCalculator<3> calc, gptr<char> out,
                              gptr<const char> a, bool a_is_value, T a_value, gptr<const char> b,
                              bool b_is_value, T b_value, F f) {
  int64_t i = first_element();
  for (int k = 0; k < kElementsPerThread && i < n; ++k, i += kElementwiseThreads) {
    int64_t off[3];
    calc.get(i, off);
    const T x = a_is_value ? a_value : load<T>(a, off[1]);
    const T y = b_is_value ? b_value : load<T>(b, off[2]);
    store<Out>(out, off[0], f(x, y));
  }
}

// ---- host side ---------------------------------------------------------------------------

inline Dim3 elementwise_grid(int64_t n) {
  const int64_t per_block = int64_t(kElementwiseThreads) * kElementsPerThread;
  return Dim3(static_cast<unsigned>((n + per_block - 1) / per_block));
}

// True when operand k is one run of consecutive elements of `elem_size` bytes (or a
// value), so the kernel can skip the offset arithmetic.
inline bool operand_is_flat(const TensorIterator& iter, int k, int64_t elem_size) {
  return iter.ndim() == 0 || (iter.ndim() == 1 && iter.strides(k)[0] == elem_size);
}

// "add<float32>": what the timeline and error messages call a launch.
inline std::string kernel_name(const char* op, ScalarType t) {
  return std::string(op) + "<" + to_string(t) + ">";
}

inline CUDAStream stream_for(const TensorIterator& iter) {
  return getCurrentCUDAStream(static_cast<DeviceIndex>(iter.device().index()));
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
