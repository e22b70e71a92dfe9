// cuda/sim/device.h — the simulated GPU's device-side vocabulary.
//
// A .cu file is compiled twice: by nvcc for a GPU, and by the host compiler for the
// simulator, where cuda/kernel.h includes this header instead of <cuda_runtime.h>. It
// gives kernel code what CUDA gives it — the qualifiers, dim3, threadIdx / blockIdx /
// blockDim / gridDim, warpSize, __syncthreads(), the warp collectives, atomics
// (device_atomics.h) and the math intrinsics <cmath> lacks (device_math.h) — plus the
// project's two conventions: global-memory pointers are gptr<T> (gptr.h) and shared
// arrays are declared with GLASS_SHARED / GLASS_DYNAMIC_SHARED. `__shared__` itself is
// deliberately not defined, so a kernel that bypasses the convention fails to compile
// in the simulator instead of silently sharing one array between all blocks.
//
// How the threads run (cuda/sim/block_runner.h): all threads of a block run on one OS
// thread, one at a time, switching only inside __syncthreads() and the warp
// collectives. Invariant: while a simulated thread runs, the thread_local built-ins
// below describe it; the block runner rewrites threadIdx on every switch.
//
// Barriers and collectives are identified by their call site (the std::source_location
// default argument), so the simulator can name both sites when threads diverge.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <source_location>
#include <type_traits>

#include "cuda/runtime.h"
#include "cuda/sim/gptr.h"
#include "cuda/sim/kernel_watch.h"
#include "cuda/sim/shared_array.h"
#include "cuda/sim/tls.h"

// [SECTION] qualifiers: every function is an ordinary host function in the simulator.
// __forceinline__ keeps `inline`, as CUDA's host-side definition does, so that device
// functions defined in a header shared by several .cu files do not collide.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

// [SECTION] built-ins, in the global namespace as CUDA's are.
using dim3 = glass::cuda::Dim3;
// Set by the block runner (defined in block_runner.cpp). constinit: no TLS wrapper call;
// GLASS_SIM_TLS: read with one instruction (cuda/sim/tls.h).
extern thread_local constinit GLASS_SIM_TLS dim3 threadIdx;
extern thread_local constinit GLASS_SIM_TLS dim3 blockIdx;
extern thread_local constinit GLASS_SIM_TLS dim3 blockDim;
extern thread_local constinit GLASS_SIM_TLS dim3 gridDim;
inline constexpr int warpSize = 32;

// [SECTION] shared memory.
// Per-block storage. All threads of a block run on one OS thread, and an OS thread runs
// one block at a time, so a thread_local array is exactly one block's shared memory.
// T may be an array type: GLASS_SHARED(float[33], tile, 32) declares float tile[32][33].
// `name` itself is a view over the storage (shared_array.h) that lets the race detector
// and the counters see each element access; declare it inside the kernel body.
#define GLASS_SHARED(T, name, N)                                                              \
  static thread_local GLASS_SIM_TLS ::std::type_identity_t<T> glass_shared_storage_##name[N]; \
  const ::glass::cuda::sim::SharedView<::std::type_identity_t<T>, N> name(                    \
      glass_shared_storage_##name, #name)
// The launch's dynamic shared memory (its size is the launch's dynamic_shared_bytes),
// as a view that converts to T*; declare it inside the kernel body. Aligned to 16 bytes.
#define GLASS_DYNAMIC_SHARED(T, name)                      \
  const ::glass::cuda::sim::SharedView<T, 0> name(         \
      ::glass::cuda::sim::detail::dynamic_shared_memory(), \
      ::glass::cuda::sim::detail::dynamic_shared_bytes(), #name)

// [SECTION] arithmetic intensity: GLASS_FLOPS(n) counts n floating-point operations of
// the calling thread (kernel_stats.h); under nvcc it is nothing at all.
#define GLASS_FLOPS(n) ::glass::cuda::sim::detail::add_flops(n)

namespace glass::cuda::sim::detail {

struct BarrierResult {
  int true_count = 0;  // threads whose predicate was non-zero
  int arrived = 0;     // threads that took part (the block's non-exited threads)
};
// Blocks the calling simulated thread until every non-exited thread of its block waits
// at the same call site. Throws glass::Error if threads wait at two different barriers.
BarrierResult sync_threads(const char* op, int predicate, std::source_location site);

// Where a lane's result comes from (CUDA's four shuffles; None: no value is exchanged).
enum class LaneSource : uint8_t { None, Index, Up, Down, Xor };
struct WarpResult {
  uint64_t value = 0;         // the source lane's value (the caller's own if none)
  uint32_t ballot = 0;        // lanes of the collective whose value was non-zero
  uint32_t participants = 0;  // lanes that took part (the non-exited lanes of the mask)
};
// Blocks until every non-exited lane named in `mask` is at this call site, then gives
// each lane its result. `arg` is the shuffle's srcLane, delta or laneMask.
WarpResult warp_collective(const char* op, uint32_t mask, uint64_t value, LaneSource source,
                           long long arg, int width, std::source_location site);

void* dynamic_shared_memory();
size_t dynamic_shared_bytes();  // the launch's dynamic_shared_bytes

template <class T>
T shuffle(const char* op, unsigned mask, T var, LaneSource source, long long arg, int width,
          std::source_location site) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                "warp shuffles move values of at most 8 bytes (int, float, double, long long...)");
  uint64_t bits = 0;
  std::memcpy(&bits, &var, sizeof(T));
  bits = warp_collective(op, mask, bits, source, arg, width, site).value;
  std::memcpy(&var, &bits, sizeof(T));
  return var;
}

}  // namespace glass::cuda::sim::detail

// [SECTION] block barrier.
inline void __syncthreads(std::source_location site = std::source_location::current()) {
  glass::cuda::sim::detail::sync_threads("__syncthreads", 0, site);
}
inline int __syncthreads_count(int predicate,
                               std::source_location site = std::source_location::current()) {
  return glass::cuda::sim::detail::sync_threads("__syncthreads_count", predicate, site).true_count;
}
inline int __syncthreads_and(int predicate,
                             std::source_location site = std::source_location::current()) {
  auto r = glass::cuda::sim::detail::sync_threads("__syncthreads_and", predicate, site);
  return r.true_count == r.arrived;
}
inline int __syncthreads_or(int predicate,
                            std::source_location site = std::source_location::current()) {
  return glass::cuda::sim::detail::sync_threads("__syncthreads_or", predicate, site).true_count !=
         0;
}

// Memory fences. A block's threads share one OS thread, so a block-level fence only has
// to stop the compiler; blocks run on different OS threads, so a device fence is real.
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// [SECTION] warp collectives (a warp is 32 consecutive threads in x-major order).
inline void __syncwarp(unsigned mask = 0xffffffffu,
                       std::source_location site = std::source_location::current()) {
  using glass::cuda::sim::detail::LaneSource;
  glass::cuda::sim::detail::warp_collective("__syncwarp", mask, 0, LaneSource::None, 0, warpSize,
                                            site);
}

template <class T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize,
              std::source_location site = std::source_location::current()) {
  using glass::cuda::sim::detail::LaneSource;
  return glass::cuda::sim::detail::shuffle("__shfl_sync", mask, var, LaneSource::Index, src_lane,
                                           width, site);
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                 std::source_location site = std::source_location::current()) {
  using glass::cuda::sim::detail::LaneSource;
  return glass::cuda::sim::detail::shuffle("__shfl_up_sync", mask, var, LaneSource::Up, delta,
                                           width, site);
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                   std::source_location site = std::source_location::current()) {
  using glass::cuda::sim::detail::LaneSource;
  return glass::cuda::sim::detail::shuffle("__shfl_down_sync", mask, var, LaneSource::Down, delta,
                                           width, site);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize,
                  std::source_location site = std::source_location::current()) {
  using glass::cuda::sim::detail::LaneSource;
  return glass::cuda::sim::detail::shuffle("__shfl_xor_sync", mask, var, LaneSource::Xor, lane_mask,
                                           width, site);
}

inline unsigned __ballot_sync(unsigned mask, int predicate,
                              std::source_location site = std::source_location::current()) {
  using glass::cuda::sim::detail::LaneSource;
  return glass::cuda::sim::detail::warp_collective("__ballot_sync", mask, predicate != 0,
                                                   LaneSource::None, 0, warpSize, site)
      .ballot;
}
inline int __any_sync(unsigned mask, int predicate,
                      std::source_location site = std::source_location::current()) {
  using glass::cuda::sim::detail::LaneSource;
  return glass::cuda::sim::detail::warp_collective("__any_sync", mask, predicate != 0,
                                                   LaneSource::None, 0, warpSize, site)
             .ballot != 0;
}
inline int __all_sync(unsigned mask, int predicate,
                      std::source_location site = std::source_location::current()) {
  using glass::cuda::sim::detail::LaneSource;
  auto r = glass::cuda::sim::detail::warp_collective("__all_sync", mask, predicate != 0,
                                                     LaneSource::None, 0, warpSize, site);
  return r.ballot == r.participants;
}

// [SECTION] read-only loads (__ldg): a plain load in the simulator.
template <class T>
T __ldg(const T* p) {
  return *p;
}
template <class T>
std::remove_const_t<T> __ldg(glass::cuda::gptr<T> p) {
  return *p;
}

#include "cuda/sim/device_atomics.h"
#include "cuda/sim/device_math.h"
