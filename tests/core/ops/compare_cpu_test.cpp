// tests/core/ops/compare_cpu_test.cpp — the comparisons' device checks on the fake CUDA
// backend (fake_cuda.h): CPU binaries only. The values tests, run on every device, are in
// compare_test.cpp.
#include "core/ops/compare.h"

#include "../fake_cuda.h"
#include "../test_util.h"

namespace glass {
namespace {

TEST(Equal, RunsOnADeviceAndRefusesMixedDevices) {
  testing::FakeCuda cuda;
  Tensor a = tensor({1.0, 2.0}, kFloat64).to(kCUDA);
  EXPECT_TRUE(a.equal(a.clone()));
  EXPECT_TRUE(a.allclose(a + 1e-9));
  EXPECT_TRUE(a.isclose(a).is_cuda());
  EXPECT_GLASS_ERROR(equal(a, a.cpu()), "equal()", "cuda:0 and cpu");
  EXPECT_GLASS_ERROR(allclose(a, a.cpu()), "cuda:0 and cpu");
}

}  // namespace
}  // namespace glass
