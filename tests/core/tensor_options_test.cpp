// tests/core/tensor_options_test.cpp — options convert implicitly and leave unset fields
// unset, as in libtorch.
#include "core/tensor_options.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(TensorOptions, DefaultsAndBuilders) {
  TensorOptions o;
  EXPECT_EQ(o.dtype(), kFloat32);
  EXPECT_FALSE(o.has_dtype());
  EXPECT_EQ(o.device(), Device(kCPU));
  TensorOptions d = TensorOptions().dtype(kFloat64).requires_grad(true);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_TRUE(d.requires_grad());
  EXPECT_EQ(zeros({2}, kInt32).dtype(), kInt32);  // from a ScalarType
  EXPECT_EQ(zeros({2}, Device(kCPU)).device(), Device(kCPU));
  EXPECT_EQ(glass::dtype(kInt64).dtype(), kInt64);
  EXPECT_TRUE(glass::requires_grad().requires_grad());
}

TEST(TensorOptions, DeviceIsOptionalAsInLibtorch) {
  TensorOptions o;
  EXPECT_FALSE(o.has_device());
  EXPECT_FALSE(o.device_opt().has_value());
  EXPECT_EQ(o.device(), Device(kCPU));     // value_or(kCPU)
  TensorOptions c = TensorOptions(kCUDA);  // from a DeviceType
  EXPECT_TRUE(c.has_device());
  EXPECT_EQ(c.device(), Device(kCUDA));
  EXPECT_EQ(c.device().index(), -1);  // "the current CUDA device", resolved at allocation
  EXPECT_EQ(TensorOptions(Device(kCUDA, 1)).device_opt(), Device(kCUDA, 1));
  EXPECT_FALSE(c.device(std::nullopt).has_device());
  EXPECT_EQ(TensorOptions(kFloat64).dtype_opt(), kFloat64);
}

TEST(TensorOptions, PinnedMemoryFlag) {
  EXPECT_FALSE(TensorOptions().pinned_memory());
  TensorOptions p = TensorOptions(kInt64).pinned_memory(true);
  EXPECT_TRUE(p.pinned_memory());
  EXPECT_EQ(p.dtype(), kInt64);  // the other fields are kept
  EXPECT_FALSE(p.pinned_memory(false).pinned_memory());
}

TEST(TensorOptions, MergeInTakesOnlyWhatTheOtherSets) {
  TensorOptions base = TensorOptions(kFloat64).device(Device(kCUDA, 1));
  TensorOptions bools = base.merge_in(kBool);
  EXPECT_EQ(bools.dtype(), kBool);
  EXPECT_EQ(bools.device(), Device(kCUDA, 1));  // unset in kBool: kept
  TensorOptions moved = base.merge_in(Device(kCPU));
  EXPECT_EQ(moved.dtype(), kFloat64);
  EXPECT_EQ(moved.device(), Device(kCPU));
  EXPECT_TRUE(base.merge_in(TensorOptions().requires_grad(true)).requires_grad());
  EXPECT_EQ(base.merge_in({}).device(), Device(kCUDA, 1));
}

}  // namespace
}  // namespace glass
