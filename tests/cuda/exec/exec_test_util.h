// tests/cuda/exec/exec_test_util.h — running kernels through the block runner directly.
//
// These tests exercise kernel execution on its own, with no simulated device behind it:
// data lives in host vectors, and a kernel receives the device address whose host view
// is that vector (as_device), so its gptr accesses land in the vector. run_grid() runs
// a grid's blocks in order on the calling thread, as one SM worker would.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "cuda/runtime.h"
#include "cuda/sim/address_space.h"
#include "cuda/sim/block_runner.h"
#include "cuda/sim/gptr.h"

namespace exec_test {

using glass::cuda::Dim3;
using glass::cuda::gptr;

// The device address whose host view is `host` (host_view(as_device(p)) == p).
template <class T>
T* as_device(T* host) {
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(host) - glass::cuda::sim::g_host_offset);
}
template <class T>
gptr<T> dev(std::vector<T>& v) {
  return gptr<T>(as_device(v.data()));
}
template <class T>
gptr<const T> cdev(const std::vector<T>& v) {
  return gptr<const T>(as_device(v.data()));
}

inline void run_grid(const char* kernel, Dim3 grid, Dim3 block, size_t dynamic_shared_bytes,
                     const std::function<void()>& body) {
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x)
        glass::cuda::sim::run_block({kernel, grid, block, Dim3(x, y, z), dynamic_shared_bytes},
                                    body);
}

// The same with the blocks spread over `workers` OS threads running at once (block b on
// worker b % workers), as the simulator's SM workers do; rethrows a worker's exception.
inline void run_grid_concurrently(const char* kernel, Dim3 grid, Dim3 block,
                                  size_t dynamic_shared_bytes, const std::function<void()>& body,
                                  int workers) {
  std::vector<std::exception_ptr> errors(workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      try {
        for (unsigned b = w; b < grid.count(); b += workers) {
          const Dim3 idx(b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y));
          glass::cuda::sim::run_block({kernel, grid, block, idx, dynamic_shared_bytes}, body);
        }
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace exec_test
