// tests/core/storage_test.cpp — Storage ownership, identity and the shared version counter.
#include "core/storage.h"

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
