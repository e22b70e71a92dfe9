// tests/cuda/suites/test_devices_cuda.cpp — cuda_suites_tests' devices for the
// parameterised core and autograd suites (tests/core/device_test.h): cuda:0, served by the
// simulated GPU unless GLASS_CUDA=gpu asks for a real one (scripts/gpu_check.sh).
//
// The runtime is chosen before the first test touches a device: a gtest Environment set
// up at static initialisation, which gtest_main runs before any test.
#include "core/device_test.h"
#include "cuda/backend/backend_test_util.h"

namespace glass::testing {

std::vector<Device> test_devices() { return {Device(kCUDA, 0)}; }

namespace {

class ChooseCudaRuntime : public ::testing::Environment {
 public:
  void SetUp() override { glass::cuda::testing::use_simulator_unless_gpu(); }
};

// AddGlobalTestEnvironment takes ownership.
[[maybe_unused]] ::testing::Environment* const kChooseCudaRuntime =
    ::testing::AddGlobalTestEnvironment(new ChooseCudaRuntime);

}  // namespace
}  // namespace glass::testing
