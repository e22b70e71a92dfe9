// tests/core/storage_test.cpp — Storage ownership, identity and the shared version counter.
#include "core/storage.h"

#include "fake_cuda.h"
#include "test_util.h"

namespace glass {
namespace {

TEST(Storage, AllocatesOnTheCpuAndKnowsItsSize) {
  Storage s = Storage::allocate(100, Device(kCPU));
  EXPECT_TRUE(s.defined());
  EXPECT_EQ(s.nbytes(), 100u);
  EXPECT_EQ(s.device(), Device(kCPU));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s.data()) % 64, 0u);  // 64-byte aligned
}

TEST(Storage, ViewsShareOneStorageAndOneVersionCounter) {
  Tensor x = zeros({2, 3});
  Tensor v = x.t();
  EXPECT_TRUE(v.is_alias_of(x));
  EXPECT_TRUE(x.storage() == v.storage());
  uint32_t before = v._version();
  x.add_(1);  // write through one view ...
  EXPECT_EQ(v._version(),
            before + 1);  // ... every view sees the bump (Note [Version Counter Sharing])
  EXPECT_FALSE(x.clone().is_alias_of(x));
}

TEST(Storage, FromBlobDeleterRunsWhenTheLastViewDies) {
  static int freed = 0;
  float* data = new float[4]{1, 2, 3, 4};
  {
    Tensor t = from_blob(data, {4}, [](void* p) {
      delete[] static_cast<float*>(p);
      ++freed;
    });
    Tensor v = t.narrow(0, 1, 2);
    t = Tensor();
    EXPECT_EQ(freed, 0);  // v still views the memory
    EXPECT_EQ(v.sum().item<float>(), 5.0f);
  }
  EXPECT_EQ(freed, 1);
}

}  // namespace
}  // namespace glass

namespace glass {
namespace {

// PyTorch: a freshly made tensor is at version 0; each in-place write adds one.
TEST(Storage, FreshTensorsStartAtVersionZero) {
  EXPECT_EQ(zeros({3})._version(), 0u);
  EXPECT_EQ(ones({3})._version(), 0u);
  EXPECT_EQ(arange(3).clone()._version(), 0u);
  EXPECT_EQ(arange(6).view({2, 3}).t().contiguous()._version(), 0u);
  EXPECT_EQ(arange(3).to(kFloat)._version(), 0u);
  EXPECT_EQ(cat({ones({2}), ones({2})})._version(), 0u);
  Tensor i = tensor({1, 2}, kInt32);
  i.add_(tensor({1, 1}));  // computed in Long and cast back: still one write
  EXPECT_EQ(i._version(), 1u);
}

}  // namespace
}  // namespace glass

namespace glass {
namespace {

using testing::FakeCuda;
using testing::WithoutCuda;

TEST(Storage, WithoutACudaRuntimeCudaAllocationIsTheClearError) {
  WithoutCuda none;
  EXPECT_GLASS_ERROR(Storage::allocate(16, Device(kCUDA, 0)), "no allocator registered",
                     "device type cuda", "no GPU is available");
  EXPECT_GLASS_ERROR(Storage::allocate(16, Device(kCUDA)), "no allocator registered");
}

TEST(Storage, CudaWithoutAnIndexIsTheCurrentDevice) {
  FakeCuda cuda;
  EXPECT_EQ(Storage::allocate(16, Device(kCUDA)).device(), Device(kCUDA, 0));
  DeviceGuard g(Device(kCUDA, 1));
  Storage s = Storage::allocate(16, Device(kCUDA));
  EXPECT_EQ(s.device(), Device(kCUDA, 1));  // stored resolved: never an ambiguous "cuda"
  EXPECT_EQ(zeros({2}, kCUDA).device(), Device(kCUDA, 1));
}

TEST(Storage, AllocatesWithItsDeviceCurrentAndRestoresTheCallers) {
  FakeCuda cuda;
  Storage s = Storage::allocate(16, Device(kCUDA, 1));
  EXPECT_EQ(s.device(), Device(kCUDA, 1));
  ASSERT_EQ(cuda.log().allocation_devices.size(), 1u);
  EXPECT_EQ(cuda.log().allocation_devices[0], 1);  // device 1 was current while allocating
  EXPECT_EQ(resolve_device(Device(kCUDA)), Device(kCUDA, 0));  // the caller's is back
  EXPECT_EQ(s.allocator(), get_allocator(kCUDA));
}

TEST(Storage, AnIndexPastTheDeviceCountIsAnError) {
  FakeCuda cuda;  // two devices
  EXPECT_GLASS_ERROR(Storage::allocate(16, Device(kCUDA, 3)),
                     "cuda:3 does not exist; this machine has 2 CUDA devices", "cuda:0 to cuda:1");
  EXPECT_GLASS_ERROR(zeros({2}, Device(kCUDA, 2)), "cuda:2 does not exist");
  EXPECT_TRUE(cuda.log().allocation_devices.empty());  // nothing was allocated
  FakeCuda one(1);
  EXPECT_GLASS_ERROR(Storage::allocate(16, Device(kCUDA, 1)), "this machine has 1 CUDA device ");
}

}  // namespace
}  // namespace glass
