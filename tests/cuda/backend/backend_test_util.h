// tests/cuda/backend/backend_test_util.h — helpers the CUDA backend's tests share.
#pragma once

#include <cstdlib>
#include <functional>
#include <string>

#include <glass/glass.h>

namespace glass::cuda::testing {

// The message of the glass::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const glass::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The simulated GPU, unless GLASS_CUDA=gpu asks for a real one (scripts/gpu_check.sh):
// tests that hold no simulator hooks run on both.
inline void use_simulator_unless_gpu() {
  const char* want = std::getenv("GLASS_CUDA");
  if (want == nullptr || std::string(want) != "gpu") use_simulator();
}

}  // namespace glass::cuda::testing
