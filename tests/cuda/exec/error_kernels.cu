// tests/cuda/exec/error_kernels.cu — kernels that break the rules of barriers and warps.
//
// The tests check that the error names these call sites, so each k...Line constant is
// defined a fixed number of lines above the call it names; keep them in step.
#include "exec_kernels.h"

namespace exec_test {

std::atomic<int> g_trackers_destroyed{0};

const int kDivergentLine = __LINE__ + 4;
__global__ void divergent_barriers(gptr<int> out) {
  out[threadIdx.x] = 1;
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    __syncthreads();
  }
}

const int kDivergentAfterLine = __LINE__ + 5;
__global__ void divergent_after_barrier(gptr<int> out) {
  out[threadIdx.x] = 1;
  __syncthreads();
  if (threadIdx.x + 1 == blockDim.x) {
    __syncthreads();
  } else {
    __syncthreads();
  }
}

const int kWarpDeadlockLine = __LINE__ + 5;
__global__ void warp_vs_barrier(gptr<int> out) {
  int v = threadIdx.x;
  const int lane = threadIdx.x % 32;
  if (lane < 16) {
    v = __shfl_xor_sync(0xffffffffu, v, 1);
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = v;
}

const int kExitDeadlockLine = __LINE__ + 6;
__global__ void warp_deadlock_at_exit(gptr<int> out) {
  int v = threadIdx.x;
  const int lane = threadIdx.x % 32;
  if (lane == 31) return;
  if (lane < 16) {
    v = __shfl_xor_sync(0xffffffffu, v, 1);
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = v;
}

__global__ void shuffle_without_own_lane(gptr<int> out) {
  out[threadIdx.x] = __shfl_sync(1u << 5, int(threadIdx.x), 5);
}

__global__ void null_read_after_barrier(gptr<int> out, int who) {
  out[threadIdx.x] = 1;
  __syncthreads();
  gptr<int> null;
  if (int(threadIdx.x) == who) out[threadIdx.x] = *null;
}

namespace {
struct Tracker {
  ~Tracker() { g_trackers_destroyed.fetch_add(1); }
};
}  // namespace

__global__ void divergent_with_locals(gptr<int> out) {
  Tracker tracker;
  out[threadIdx.x] = 1;
  if (threadIdx.x + 1 < blockDim.x) {
    __syncthreads();
  } else {
    __syncthreads();
  }
}

}  // namespace exec_test
