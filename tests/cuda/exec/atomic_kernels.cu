// tests/cuda/exec/atomic_kernels.cu — kernels whose threads meet only through atomics.
#include "exec_kernels.h"

namespace exec_test {

__global__ void histogram(gptr<const int> in, int n, gptr<unsigned> bins, int nbins) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[in[i] % nbins], 1u);
}

__global__ void atomic_mix(gptr<const int> in, int n, gptr<float> fsum, gptr<double> dsum,
                           gptr<unsigned long long> usum, gptr<int> isub, gptr<int> maxv,
                           gptr<int> minv, gptr<unsigned long long> cas_sum) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int v = in[i];
  atomicAdd(fsum, float(v));  // a gptr, as p + 0 is under nvcc a plain pointer
  atomicAdd(&dsum[0], double(v));
  atomicAdd(usum, static_cast<unsigned long long>(v));
  atomicSub(isub, v);
  atomicMax(maxv, v);
  atomicMin(&minv[0], v);
  unsigned long long old = *cas_sum;
  unsigned long long assumed;
  do {
    assumed = old;
    old = atomicCAS(cas_sum, assumed, assumed + v);
  } while (old != assumed);
}

__global__ void count_threads_in_shared(gptr<int> out) {
  GLASS_SHARED(int, count, 1);
  if (threadIdx.x == 0) count[0] = 0;
  __syncthreads();
  atomicAdd(&count[0], 1);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = count[0];
}

__global__ void tickets(gptr<unsigned> counter, unsigned wrap, gptr<unsigned> seen) {
  const unsigned t = atomicInc(counter, wrap);
  atomicAdd(seen + t, 1u);
}

}  // namespace exec_test
