// tests/core/tensor_impl_test.cpp — metadata invariants of TensorImpl.
#include "core/tensor_impl.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(TensorImpl, MetadataOfAFreshTensor) {
  Tensor t = empty({2, 3, 4}, kFloat64);
  EXPECT_EQ(t.sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.dtype(), kFloat64);
  EXPECT_EQ(t.scalar_type(), kDouble);
  EXPECT_EQ(t.element_size(), 8);
  EXPECT_EQ(t.nbytes(), 192);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.stride(-3), 12);
  EXPECT_EQ(t.device(), Device(kCPU));
}

TEST(TensorImpl, DataPtrAddsTheOffsetInBytes) {
  Tensor t = arange(10, kInt64);
  Tensor v = t.narrow(0, 3, 4);
  EXPECT_EQ(v.storage_offset(), 3);
  EXPECT_EQ(static_cast<char*>(v.data_ptr()) - static_cast<char*>(t.data_ptr()), 24);
  EXPECT_EQ(*v.data_ptr<int64_t>(), 3);
  EXPECT_GLASS_ERROR(v.data_ptr<float>(), "expected scalar type Float but found Long");
}

TEST(TensorImpl, ContiguityIsRecomputedForViews) {
  Tensor t = zeros({3, 4});
  EXPECT_FALSE(t.t().is_contiguous());
  EXPECT_TRUE(t.t().t().is_contiguous());
  EXPECT_TRUE(t.narrow(0, 1, 2).is_contiguous());
  EXPECT_FALSE(t.narrow(1, 1, 2).is_contiguous());
  EXPECT_GLASS_ERROR(scalar_tensor(1.0).size(0), "no dimensions");
}

}  // namespace
}  // namespace glass
