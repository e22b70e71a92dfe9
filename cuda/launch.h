// cuda/launch.h — the one way to launch a kernel: launch_kernel() and GLASS_LAUNCH.
//
// The host compiler cannot parse kernel<<<grid, block, shmem, stream>>>(args), so every
// launch, in both builds of a .cu file, is written
//
//   GLASS_LAUNCH(add_kernel, grid, block, 0, stream, n, gptr<const float>(a), ...);
//
// which is launch_kernel("add_kernel", add_kernel, grid, block, 0, stream, n, ...).
// The launch is validated on the calling thread before anything is queued (check_launch:
// no zero dimension, no more threads or shared memory than the device allows), then:
//   * under nvcc: kernel<<<...>>> on the stream, and cudaGetLastError() as a glass::Error;
//   * in the simulator: the arguments are converted to the kernel's parameter types and
//     copied into the launch (as CUDA copies them to the device), and a sim::KernelLaunch
//     is queued on the stream; its run_block runs each block with the block runner.
// Either way the call returns once the kernel is queued, before it runs.
//
// Invariant: a launch that fails validation throws and queues nothing; a launch that
// passes copies its arguments, so the caller's values may change as soon as it returns.
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/tensor_accessor.h"
#include "cuda/runtime.h"

#ifdef __CUDACC__
#include <cuda_runtime.h>
#else
#include "cuda/sim/block_runner.h"
#include "cuda/sim/gptr.h"
#include "cuda/sim/kernel_launch.h"
#endif

namespace glass::cuda {

// check_launch (runtime.h) validates every launch before anything is queued.

#ifdef __CUDACC__

template <class... P, class... A>
void launch_kernel(const char* name, void (*kernel)(P...), Dim3 grid, Dim3 block,
                   size_t dynamic_shared_bytes, StreamHandle stream, A&&... args) {
  Runtime& rt = runtime();
  GLASS_CHECK(!rt.is_simulated(), "kernel '", name,
              "' was compiled by nvcc for a GPU, but kCUDA is served by the simulated GPU; "
              "launch the simulator's build of it (namespace glass::cuda::sim)");
  const int device = rt.stream_device(stream);
  check_launch(rt.properties(device), name, grid, block, dynamic_shared_bytes);
  // A launch goes to cudart's current device; make it the stream's (multi-GPU machines).
  int previous = device;
  cudaGetDevice(&previous);
  if (previous != device) cudaSetDevice(device);
  kernel<<<dim3(grid.x, grid.y, grid.z), dim3(block.x, block.y, block.z), dynamic_shared_bytes,
           static_cast<cudaStream_t>(stream)>>>(std::forward<A>(args)...);
  const cudaError_t err = cudaGetLastError();
  if (previous != device) cudaSetDevice(previous);
  GLASS_CHECK(err == cudaSuccess, "launch of kernel '", name, "' (grid (", grid.x, ", ", grid.y,
              ", ", grid.z, "), block (", block.x, ", ", block.y, ", ", block.z, "), ",
              dynamic_shared_bytes,
              " bytes of dynamic shared memory) failed: ", cudaGetErrorName(err), ": ",
              cudaGetErrorString(err));
}

#else  // the simulator

namespace sim::detail {

template <class T>
struct is_gptr : std::false_type {};
template <class T>
struct is_gptr<gptr<T>> : std::true_type {};

template <class T>
struct is_packed_accessor : std::false_type {};
template <class T, size_t N, template <class> class PtrTraits>
struct is_packed_accessor<PackedTensorAccessor32<T, N, PtrTraits>> : std::true_type {};

// A launch argument becomes the kernel's parameter as in a <<< >>> call (implicit
// conversion), except that a device T* may initialize a gptr<T> parameter (under nvcc
// that parameter is a T*).
template <class P, class A>
P to_parameter(A&& arg) {
  if constexpr (is_gptr<P>::value) {
    if constexpr (std::is_convertible_v<A, typename P::element_type*>) {
      return P(static_cast<typename P::element_type*>(arg));
    } else {
      static_assert(std::is_convertible_v<A, P>,
                    "launch_kernel: a pointer argument does not convert to the kernel's gptr "
                    "parameter (a const pointer cannot be passed where the kernel writes)");
      return std::forward<A>(arg);  // a gptr already
    }
  } else {
    static_assert(std::is_convertible_v<A, P>,
                  "launch_kernel: an argument does not convert to the kernel's parameter type");
    return std::forward<A>(arg);
  }
}

// The memory a kernel argument names, for the stream-race checker, the bounds check and
// the timeline: a gptr<const T> is read, a gptr<T> written, and a packed accessor
// (DeviceAccessor<T, N>) names its data as the gptr it holds does. A struct carrying
// pointers (an argument pack of a generic kernel) reports its own by a function found by
// argument-dependent lookup,
//   void append_accesses(const MyArgs&, std::vector<glass::cuda::sim::Access>&);
// declared next to it in the simulator's build.
template <class P>
void add_accesses(const char* kernel, size_t index, const P& param, std::vector<Access>& out) {
  if constexpr (is_gptr<P>::value) {
    if (!param) return;
    GLASS_CHECK(is_device_address(param.get()), "kernel '", kernel, "': argument ", index, " (",
                static_cast<const void*>(param.get()),
                ") is not an address in the simulated GPU's memory; pass device memory (a CUDA "
                "tensor's data), not a host pointer");
    out.push_back({param.get(), !std::is_const_v<typename P::element_type>});
  } else if constexpr (is_packed_accessor<P>::value) {
    static_assert(is_gptr<typename P::PtrType>::value,
                  "launch_kernel: a kernel reads a tensor through DeviceAccessor<T, N> "
                  "(PackedTensorAccessor32<T, N, DevicePtrTraits>); other PtrTraits hold a raw "
                  "pointer, which the simulator can neither read nor check");
    add_accesses(kernel, index, param.data(), out);
  } else if constexpr (requires { append_accesses(param, out); }) {
    append_accesses(param, out);
  }
}

template <class Tuple, size_t... I>
std::vector<Access> kernel_accesses(const char* kernel, const Tuple& params,
                                    std::index_sequence<I...>) {
  std::vector<Access> out;
  (add_accesses(kernel, I, std::get<I>(params), out), ...);
  return out;
}

}  // namespace sim::detail

template <class... P, class... A>
void launch_kernel(const char* name, void (*kernel)(P...), Dim3 grid, Dim3 block,
                   size_t dynamic_shared_bytes, StreamHandle stream, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A),
                "launch_kernel: pass exactly one argument per kernel parameter");
  static_assert((!std::is_reference_v<P> && ...),
                "kernel parameters are passed by value (CUDA copies them to the device)");
  Runtime& rt = runtime();
  GLASS_CHECK(rt.is_simulated(), "kernel '", name,
              "' was compiled by the host compiler for the simulated GPU, but kCUDA is served "
              "by a GPU; launch its nvcc build (namespace glass::cuda::gpu)");
  check_launch(rt.properties(rt.stream_device(stream)), name, grid, block, dynamic_shared_bytes);

  std::tuple<P...> params(sim::detail::to_parameter<P>(std::forward<A>(args))...);
  sim::KernelLaunch launch;
  launch.name = name;
  launch.grid = grid;
  launch.block = block;
  launch.dynamic_shared_bytes = dynamic_shared_bytes;
  launch.accesses = sim::detail::kernel_accesses(name, params, std::index_sequence_for<P...>{});
  // Each simulated thread gets its own copy of the parameters, as each GPU thread reads
  // them from constant memory and may then change its copy.
  launch.run_block = [kernel, params = std::move(params), name = launch.name, grid, block,
                      dynamic_shared_bytes](Dim3 block_idx) {
    const sim::BlockSpec spec{name.c_str(), grid, block, block_idx, dynamic_shared_bytes};
    sim::run_block(spec, [&] { std::apply(kernel, params); });
  };
  sim::enqueue_kernel(stream, std::move(launch));
}

#endif

}  // namespace glass::cuda

// GLASS_LAUNCH(kernel, grid, block, shmem, stream, args...): launch_kernel with the
// kernel's name taken from its spelling. A template kernel with commas in its argument
// list goes in parentheses: GLASS_LAUNCH((k<float, 4>), ...).
#define GLASS_LAUNCH(kernel, grid, block, shmem, stream, ...)       \
  ::glass::cuda::launch_kernel(#kernel, kernel, grid, block, shmem, \
                               stream __VA_OPT__(, ) __VA_ARGS__)
