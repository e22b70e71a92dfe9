// cuda/gpu/gpu_runtime_none.cpp — the GPU runtime of a build without the CUDA toolkit.
//
// Compiled instead of gpu_runtime.cpp when CMake finds no cudart: there is never a GPU
// runtime, and the reason says how to get one.
#include "cuda/gpu/gpu_runtime.h"

namespace glass::cuda::gpu {

Runtime* gpu_runtime(std::string* why_not) {
  if (why_not) {
    *why_not =
        "glasstorch was built without the CUDA toolkit (no cudart was found), so it cannot use a "
        "GPU";
  }
  return nullptr;
}

}  // namespace glass::cuda::gpu
