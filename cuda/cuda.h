// cuda/cuda.h — the CUDA layer's public API in one include (glass/glass.h includes it).
//
// glass::cuda:: mirrors torch::cuda::, c10::cuda:: and at::cuda:: — is_available(),
// device_count(), synchronize(), CUDAStream, CUDAEvent, the memory statistics — plus
// is_simulated() and use_simulator() for the simulated GPU (cuda/runtime.h).
#pragma once

#include "cuda/backend.h"
#include "cuda/caching_allocator.h"
#include "cuda/runtime.h"
#include "cuda/stream.h"

namespace glass::cuda::detail {
// Registers kCUDA with core in every program that includes this header (backend.h).
inline const bool backend_registered = register_backend();
}  // namespace glass::cuda::detail
