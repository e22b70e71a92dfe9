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
//   GLASS_KERNEL_NS                  gpu under nvcc, sim otherwise: the namespace (inside
//                                    glass::cuda) that holds a .cu file's kernels and host
//                                    launchers, so both builds link into one library
//
// Invariant: code written to this convention means the same in both builds.
#pragma once

#include <type_traits>

#ifdef __CUDACC__

#include <cuda_runtime.h>

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

// Unqualified, as dim3 is.
using glass::cuda::gptr;
using glass::cuda::gptr_cast;

#include "cuda/launch.h"
