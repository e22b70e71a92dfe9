// cuda/kernel.h — what every .cu file includes: CUDA, or the simulated GPU's version of it.
//
// A .cu file is compiled twice: by nvcc for a GPU (__CUDACC__ defined: <cuda_runtime.h>),
// and by the host compiler for the simulator (cuda/sim/device.h). Kernels are ordinary
// CUDA C++ except for one convention, which is what lets the simulator observe memory:
//
//   __global__ void scale(int n, float s, gptr<const float> x, gptr<float> y) {
//     GLASS_SHARED(float, tile, 128);           // __shared__ float tile[128];
//     GLASS_DYNAMIC_SHARED(float, extra);       // extern __shared__ float extra[];
//     int i = blockIdx.x * blockDim.x + threadIdx.x;
//     if (i < n) y[i] = s * x[i];
//   }
//   GLASS_LAUNCH(scale, Dim3(blocks), Dim3(128), 0, stream, n, 2.0f, x, y);  // launch.h
//
//   gptr<T>                          global memory: T* under nvcc, an instrumented pointer
//                                    in the simulator (cuda/sim/gptr.h)
//   gptr_cast<U>(p)                  p as a gptr<U>: a multi-element (vector) access that the
//                                    simulator counts and bounds-checks whole
//   GLASS_SHARED(T, name, N)         a shared array (T may itself be an array: float[33])
//   GLASS_DYNAMIC_SHARED(T, name)    the launch's dynamic shared memory, as a T*
//   GLASS_FLOPS(n)                   n floating-point operations of this thread, for the
//                                    simulator's counters (cuda/sim/kernel_stats.h); a
//                                    no-op under nvcc
//   DeviceAccessor<T, N>             a tensor's sizes, strides and data for a kernel,
//                                    acc[i][j]: t.packed_accessor32<T, N, DevicePtrTraits>()
//   GLASS_KERNEL_NS                  gpu under nvcc, sim otherwise: the namespace (inside
//                                    glass::cuda) that holds a .cu file's kernels and host
//                                    launchers, so both builds link into one library
//
// A third compiler reads it too: NVRTC (__CUDACC_RTC__), for the kernels glass::compile
// generates (compiler/cuda_pointwise.h). NVRTC compiles device code only, so there this
// header gives the kernel vocabulary alone: no host launch helper, no tensor accessors.
//
// Invariant: code written to this convention means the same in all three builds.
#pragma once

#include <cstddef>
#include <type_traits>

#ifndef __CUDACC_RTC__
#include "core/tensor_accessor.h"
#endif

#ifdef __CUDACC__

#ifndef __CUDACC_RTC__
#include <cuda_runtime.h>
#endif

namespace glass::cuda {
template <class T>
using gptr = T*;
// gptr_cast<U>(p): p as a U* (cuda/sim/gptr.h says why kernels use it).
template <class U, class T>
__host__ __device__ __forceinline__ U* gptr_cast(T* p) {
  return reinterpret_cast<U*>(p);
}
}  // namespace glass::cuda

#define GLASS_SHARED(T, name, N) __shared__ ::std::type_identity_t<T> name[N]
// Declared as bytes, not as T[]: extern __shared__ arrays of different types in one
// translation unit (two instantiations of a template kernel) would conflict.
#define GLASS_DYNAMIC_SHARED(T, name)                                          \
  extern __shared__ __align__(16) unsigned char glass_dynamic_shared_##name[]; \
  T* const name = reinterpret_cast<T*>(glass_dynamic_shared_##name)
#define GLASS_KERNEL_NS gpu
// Counts flops for the simulator's arithmetic intensity; n is not evaluated on a GPU.
#define GLASS_FLOPS(n) ((void)sizeof(n))

#else

#include "cuda/sim/device.h"
#define GLASS_KERNEL_NS sim

#endif

#ifndef __CUDACC_RTC__
namespace glass::cuda {
// The PtrTraits of a tensor read in a kernel (core/tensor_accessor.h): host code writes
// x.packed_accessor32<float, 2, DevicePtrTraits>() and the kernel takes the result as a
// DeviceAccessor<float, 2> parameter and indexes it, acc[i][j]. Its pointer is a gptr in
// the simulator, so every access is counted and checked, and a restrict pointer under nvcc.
// The two builds' traits differ, so each lives in an inline namespace of its build: both
// are spelled glass::cuda::DevicePtrTraits, but the linker never takes one for the other.
#ifdef __CUDACC__
inline namespace gpu_build {
#else
inline namespace sim_build {
#endif
template <class T>
struct DevicePtrTraits {
#ifdef __CUDACC__
  using PtrType = T* __restrict__;
#else
  using PtrType = gptr<T>;
#endif
  static constexpr bool reads_device_memory = true;
};
}  // namespace gpu_build / sim_build
template <class T, size_t N>
using DeviceAccessor = ::glass::PackedTensorAccessor32<T, N, DevicePtrTraits>;
}  // namespace glass::cuda

using glass::cuda::DeviceAccessor;
using glass::cuda::DevicePtrTraits;
#endif  // !__CUDACC_RTC__

// Unqualified, as dim3 is.
using glass::cuda::gptr;
using glass::cuda::gptr_cast;

#ifndef __CUDACC_RTC__
#include "cuda/launch.h"
#endif
