// tests/cuda/exec/launch_kernels.cu — kernels for the end-to-end launch tests.
#include "exec_kernels.h"

namespace exec_test {

#ifndef __CUDACC__
void append_accesses(const AxpyArgs& args, std::vector<glass::cuda::sim::Access>& out) {
  out.push_back({args.x.get(), false});
  out.push_back({args.y.get(), true});
}
#endif

__global__ void axpy_packed(AxpyArgs args) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < args.n) args.y[i] += args.a * args.x[i];
}

}  // namespace exec_test
