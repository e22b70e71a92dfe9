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

// drop_bytes gives the memory back while every tensor keeps the storage; restore_bytes takes
// it again. Identity, size and version stay; a tensor without bytes is a clear error.
TEST(Storage, DropAndRestoreBytesKeepTheStorageAndItsVersion) {
  Tensor t = arange(0, 1 << 16, 1, kFloat32);  // 256 KiB
  Tensor view = t.narrow(0, 8, 4);
  const Storage s = t.storage();
  const uint64_t id = s.id();
  const uint32_t version = t._version();
  const int64_t before = cpu_memory_stats().allocated_bytes;
  s.drop_bytes();
  EXPECT_FALSE(s.has_bytes());
  EXPECT_EQ(s.nbytes(), size_t{1} << 18);
  EXPECT_LE(cpu_memory_stats().allocated_bytes, before - (1 << 18));
  EXPECT_GLASS_ERROR(view.sum(), "a float32 tensor of shape [4] on cpu has no bytes",
                     "restore_bytes()");
  EXPECT_GLASS_ERROR(t.data_ptr(), "has no bytes");
  s.drop_bytes();  // twice is fine
  s.restore_bytes();
  EXPECT_TRUE(s.has_bytes());
  EXPECT_TRUE(view.storage() == s);
  EXPECT_EQ(s.id(), id);
  EXPECT_EQ(t._version(), version);  // refilling is the caller's business
  view.fill_(7);
  EXPECT_EQ(t.data_ptr<float>()[9], 7.0f);
  s.restore_bytes();  // bytes present: nothing happens
  EXPECT_EQ(t.data_ptr<float>()[9], 7.0f);
}

TEST(Storage, OnlyAllocatorMemoryCanDropItsBytes) {
  float data[4] = {1, 2, 3, 4};
  Tensor t = from_blob(data, {4});
  EXPECT_GLASS_ERROR(t.storage().drop_bytes(), "wraps memory lent by from_blob");
  EXPECT_EQ(t.sum().item<float>(), 10.0f);
}

TEST(Storage, IdsAreUniqueAndNeverReused) {
  uint64_t first = 0;
  {
    Tensor a = empty({4});
    first = a.storage().id();
    EXPECT_EQ(a.view({2, 2}).storage().id(), first);
    EXPECT_NE(a.clone().storage().id(), first);
  }
  Tensor b = empty({4});  // may reuse a's block, never its id
  EXPECT_GT(b.storage().id(), first);
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

TEST(Storage, RestoredBytesComeBackOnTheStoragesDevice) {
  FakeCuda cuda;
  Storage s = Storage::allocate(16, Device(kCUDA, 1));
  s.drop_bytes();
  s.restore_bytes();  // from device 0, the current one
  ASSERT_EQ(cuda.log().allocation_devices.size(), 2u);
  EXPECT_EQ(cuda.log().allocation_devices[1], 1);  // device 1 was current again
  EXPECT_EQ(resolve_device(Device(kCUDA)), Device(kCUDA, 0));
  EXPECT_TRUE(s.has_bytes());
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
