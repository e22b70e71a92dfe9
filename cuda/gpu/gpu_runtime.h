// cuda/gpu/gpu_runtime.h — the real CUDA runtime (cudart) behind cuda/runtime.h.
//
// Built when the CUDA toolkit's runtime library is found; otherwise the same function
// says why there is no GPU runtime. cudart is linked statically (it loads the driver,
// libcuda, with dlopen), so every binary starts on a machine without a driver.
#pragma once

#include <string>

#include "cuda/runtime.h"

namespace glass::cuda::gpu {

// The process's cudart-backed runtime, or null with *why_not saying why (built without
// the CUDA toolkit; no driver; no device).
Runtime* gpu_runtime(std::string* why_not);

}  // namespace glass::cuda::gpu
