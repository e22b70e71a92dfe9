// cuda/kernels/elementwise.cuh — the elementwise kernels every pointwise op runs through.
//
// PyTorch's scheme, in miniature: a block of 128 threads covers 2048 consecutive
// elements, 16 per thread. When every operand is one flat run, a thread takes its
// elements in groups of 4 neighbours (one aligned 16-byte load of floats on a GPU,
// PyTorch's vectorized path), the groups of a warp's 32 threads side by side: one
// coalesced 512-byte access. Otherwise a thread's elements are 128 apart, so a warp still
// touches 32 neighbours at once, and the OffsetCalculator finds each element's bytes. The
// math of the op is a small functor (F) applied per element.
//
// Why 16 per thread: a GPU is memory-bound here whatever the number (16M elements still
// make 8K blocks), but the simulator pays to start each simulated thread, and on it the
// number decides the speed. c = a + b on 16M floats, simulated on 2 cores (bench_cuda;
// the CPU backend takes 4.3 ms):
//   4 per thread, one element at a time ..........  57 ms
//   8 per thread ..................................  23 ms
//   8 per thread, 4-element Vec loads .............  17.6 ms
//   16 per thread, 4-element Vec loads ............  12.6 ms  (0.34x the CPU backend)
//
// An input may be a value instead of memory: a CPU scalar (x * 2) is passed as a kernel
// argument, never copied to the device (the *_is_value flags).
//
// Invariant: each element of the output is written exactly once, by one thread.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/scalar_type.h"
#include "core/tensor_iterator.h"
#include "cuda/kernel.h"
#include "cuda/kernels/offset_calculator.cuh"
#include "cuda/stream.h"

namespace glass::cuda::GLASS_KERNEL_NS {

inline constexpr int kElementwiseThreads = 128;
inline constexpr int kElementsPerThread = 16;
inline constexpr int kVec = 4;  // neighbours per group in the flat kernels

template <class T>
__device__ __forceinline__ T load(gptr<const char> base, int64_t offset) {
  return gptr_cast<const T>(base + offset)[0];
}

template <class T>
__device__ __forceinline__ void store(gptr<char> base, int64_t offset, T value) {
  gptr_cast<T>(base + offset)[0] = value;
}

// kVec neighbouring elements, aligned so that a GPU moves them in one load or store (16
// bytes of floats: PyTorch's aligned_vector). In the simulator it is one translated
// access instead of four, and the op over its lanes is a loop the compiler vectorizes.
template <class T>
struct alignas(sizeof(T) * kVec) Vec {
  T lane[kVec];
};

template <class T>
__device__ __forceinline__ Vec<T> load_vec(gptr<const char> base, int64_t first) {
  return gptr_cast<const Vec<T>>(base + first * int64_t(sizeof(T)))[0];
}

template <class T>
__device__ __forceinline__ void store_vec(gptr<char> base, int64_t first, const Vec<T>& x) {
  gptr_cast<Vec<T>>(base + first * int64_t(sizeof(T)))[0] = x;
}

template <class T>
__device__ __forceinline__ Vec<T> splat(T value) {
  Vec<T> x;
  for (int v = 0; v < kVec; ++v) x.lane[v] = value;
  return x;
}

// This thread's part of a flat run of n elements: groups of kVec neighbours, one group
// per thread side by side, kElementwiseThreads groups apart. group(first) handles a whole
// group; one(i) the elements of the run's last, partial group.
template <class Group, class One>
__device__ __forceinline__ void for_each_flat_group(int64_t n, Group&& group, One&& one) {
  const int64_t block_start = int64_t(blockIdx.x) * kElementwiseThreads * kElementsPerThread;
  for (int k = 0; k < kElementsPerThread / kVec; ++k) {
    const int64_t first = block_start + (int64_t(k) * kElementwiseThreads + threadIdx.x) * kVec;
    if (first + kVec <= n) {
      group(first);
    } else {  // the tail of the run; later groups lie beyond it
      for (int64_t i = first; i < n; ++i) one(i);
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
  const Vec<T> values = splat(value);
  for_each_flat_group(
      n, [&](int64_t first) { store_vec<T>(out, first, values); },
      [&](int64_t i) { store<T>(out, i * int64_t(sizeof(T)), value); });
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
  for_each_flat_group(
      n,
      [&](int64_t first) {
        const Vec<In> x = load_vec<In>(in, first);
        Vec<Out> r;
        for (int v = 0; v < kVec; ++v) r.lane[v] = f(x.lane[v]);
        store_vec<Out>(out, first, r);
      },
      [&](int64_t i) {
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
  for_each_flat_group(
      n,
      [&](int64_t first) {
        const Vec<T> x = a_is_value ? splat(a_value) : load_vec<T>(a, first);
        const Vec<T> y = b_is_value ? splat(b_value) : load_vec<T>(b, first);
        Vec<Out> r;
        for (int v = 0; v < kVec; ++v) r.lane[v] = f(x.lane[v], y.lane[v]);
        store_vec<Out>(out, first, r);
      },
      [&](int64_t i) {
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

// True when operand k is one run of consecutive elements of `elem_size` bytes whose
// first element is aligned for a Vec (so the flat kernels may move kVec at a time); a
// view that starts mid-vector takes the general kernel.
inline bool operand_is_flat(const TensorIterator& iter, int k, int64_t elem_size) {
  const bool one_run = iter.ndim() == 0 || (iter.ndim() == 1 && iter.strides(k)[0] == elem_size);
  const auto address = reinterpret_cast<uintptr_t>(iter.data_ptr(k));
  return one_run && address % static_cast<uintptr_t>(elem_size * kVec) == 0;
}

// "add<float32>": what the timeline and error messages call a launch.
inline std::string kernel_name(const char* op, ScalarType t) {
  return std::string(op) + "<" + to_string(t) + ">";
}

inline CUDAStream stream_for(const TensorIterator& iter) {
  return getCurrentCUDAStream(static_cast<DeviceIndex>(iter.device().index()));
}

// Launches out = f(in) over iter (out, in): the flat kernel when both operands are one
// aligned run, the strided one otherwise. Queues and returns.
template <class Out, class In, class F>
void run_unary(TensorIterator& iter, const char* op, F f) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  // core passes CPU scalars only to ops with two inputs (x * 2); a host address must
  // never reach a kernel.
  GLASS_INTERNAL_ASSERT(!iter.is_cpu_scalar(1), op, ": a CPU scalar input reached a unary kernel");
  const std::string name = kernel_name(op, scalar_type_of<In>);
  const gptr<char> out(iter.data_ptr(0));
  const gptr<const char> in(iter.data_ptr(1));
  if (operand_is_flat(iter, 0, sizeof(Out)) && operand_is_flat(iter, 1, sizeof(In))) {
    launch_kernel(name.c_str(), unary_flat_kernel<Out, In, F>, elementwise_grid(n),
                  Dim3(kElementwiseThreads), 0, stream_for(iter), n, out, in, f);
  } else {
    launch_kernel(name.c_str(), unary_kernel<Out, In, F>, elementwise_grid(n),
                  Dim3(kElementwiseThreads), 0, stream_for(iter), n,
                  make_offset_calculator<2>(iter), out, in, f);
  }
}

// Input k of an iterator as a kernel takes it: device memory, or — for a CPU scalar (the 2
// in x * 2) — its value, passed by value, since its pointer is host memory and must never
// reach a kernel.
template <class T>
struct KernelInput {
  gptr<const char> data;
  bool is_value = false;
  T value{};
};

template <class T>
KernelInput<T> kernel_input(const TensorIterator& iter, int k) {
  KernelInput<T> in;
  if (iter.is_cpu_scalar(k)) {
    in.is_value = true;
    in.value = iter.scalar_value(k).template to<T>();
  } else {
    in.data = gptr<const char>(iter.data_ptr(k));
  }
  return in;
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
