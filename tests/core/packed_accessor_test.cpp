// tests/core/packed_accessor_test.cpp — PackedTensorAccessor32 on the host (CPU tensors):
// a[i][j] follows the strides of any view, sizes and strides are copies (the accessor
// outlives a change of the tensor's metadata), and packed_accessor32() refuses a wrong
// dtype, dim, device traits, a size or stride that does not fit in int32, or an element
// farther than int32 can index, saying which. A zero-size dim reaches nothing.
// Kernels reading through it on the simulated GPU: tests/cuda/exec/packed_accessor_test.cpp.
#include <cstdint>
#include <optional>
#include <type_traits>

#include "core/tensor.h"
#include "test_util.h"

namespace glass {
namespace {

// Traits that claim device memory, to see the check without a device.
template <class T>
struct FakeDeviceTraits {
  using PtrType = T*;
  static constexpr bool reads_device_memory = true;
};

TEST(PackedAccessor, ReadsThroughTheStridesOfAView) {
  const Tensor base = arange(12).to(kFloat).reshape({3, 4});
  const Tensor t = base.t();  // 4 x 3, strides (1, 4)
  const auto a = t.packed_accessor32<float, 2>();
  static_assert(std::is_same_v<decltype(a.size(0)), int32_t>);
  EXPECT_EQ(a.size(0), 4);
  EXPECT_EQ(a.size(1), 3);
  EXPECT_EQ(a.stride(0), 1);
  EXPECT_EQ(a.stride(1), 4);
  for (int32_t i = 0; i < 4; ++i)
    for (int32_t j = 0; j < 3; ++j)
      EXPECT_EQ(a[i][j], static_cast<float>(j * 4 + i)) << "element " << i << ", " << j;
}

TEST(PackedAccessor, WritesGoToTheTensor) {
  Tensor t = zeros({2, 3, 2});
  const auto a = t.packed_accessor32<float, 3, RestrictPtrTraits>();
  a[1][2][0] = 5.0f;
  a[0][0][1] += 2.0f;
  EXPECT_EQ(t.select(0, 1).select(0, 2).select(0, 0).item<float>(), 5.0f);
  EXPECT_EQ(t.select(0, 0).select(0, 0).select(0, 1).item<float>(), 2.0f);
  EXPECT_EQ(t.sum().item<float>(), 7.0f);
}

TEST(PackedAccessor, HoldsItsOwnSizesAndStrides) {
  const Tensor base = arange(6).to(kFloat);
  std::optional<PackedTensorAccessor32<float, 2>> a;
  {
    const Tensor view = base.view({3, 2});
    a = view.packed_accessor32<float, 2>();
  }  // the view and its sizes and strides are gone; the accessor's copies are not
  EXPECT_EQ(a->size(0), 3);
  EXPECT_EQ(a->stride(0), 2);
  EXPECT_EQ((*a)[2][1], 5.0f);
  EXPECT_EQ((*a)[1].size(0), 2);  // a TensorAccessor<float, 1, ..., int32_t> into *a
}

TEST(PackedAccessor, ConstElementsAndOtherDtypes) {
  const Tensor t = tensor({int64_t{3}, int64_t{-1}, int64_t{4}});
  const auto a = t.packed_accessor32<const int64_t, 1>();
  static_assert(std::is_same_v<decltype(a[0]), const int64_t&>);
  EXPECT_EQ(a[0] + a[1] + a[2], 6);
}

TEST(PackedAccessor, ErrorsNameWhatWasWrong) {
  const Tensor t = zeros({2, 3});
  const auto as_double = [&] { (void)t.packed_accessor32<double, 2>(); };
  const auto three_dims = [&] { (void)t.packed_accessor32<float, 3>(); };
  const auto device_traits = [&] { (void)t.packed_accessor32<float, 2, FakeDeviceTraits>(); };
  EXPECT_GLASS_ERROR(as_double(), "data_ptr<Double>", "Float");
  EXPECT_GLASS_ERROR(three_dims(), "packed_accessor32<Float, 3>", "3 dims, got 2", "[2, 3]");
  EXPECT_GLASS_ERROR(device_traits(), "packed_accessor32<Float, 2>",
                     "DevicePtrTraits reads device memory", "cpu");
  // A 2^32-element view of one element: no memory, but its size needs 64 bits.
  const Tensor huge = zeros({1}).expand({int64_t{1} << 32});
  const auto too_big = [&] { (void)huge.packed_accessor32<float, 1>(); };
  EXPECT_GLASS_ERROR(too_big(), "size 4294967296", "does not fit in int32");
}

// A tensor with this geometry over one float's storage. packed_accessor32 reads only the
// metadata, so it can describe elements far beyond what was allocated.
Tensor with_geometry(IntArrayRef sizes, IntArrayRef strides) {
  Tensor t = zeros({1});
  t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides, 0);
  return t;
}

TEST(PackedAccessor, TheFarthestElementMustFitInInt32) {
  constexpr int64_t kMax = INT32_MAX, kHalf = int64_t{1} << 30;
  // 1 * 2^30 + 1 * (2^30 - 1) = 2^31 - 1: the farthest element is exactly INT32_MAX away.
  const Tensor at_the_limit = with_geometry({2, 2}, {kHalf, kHalf - 1});
  const auto fits = at_the_limit.packed_accessor32<float, 2>();
  EXPECT_EQ(fits.stride(0), kHalf);
  EXPECT_EQ(fits.stride(1), kHalf - 1);
  // One more and it is 2^31: each stride fits, their sum does not.
  const Tensor too_far = with_geometry({2, 2}, {kHalf, kHalf});
  const auto too_far_2d = [&] { (void)too_far.packed_accessor32<float, 2>(); };
  EXPECT_GLASS_ERROR(too_far_2d(), "an element lies 2147483648", "beyond int32 indexing", "[2, 2]");
  // Every stride at the limit: each (size - 1) * |stride| term is checked as it comes, so
  // the sum never grows past what int64 holds. (The sizes stay small: core's own numel
  // must fit in int64 too.)
  const Tensor many = with_geometry({3, 3, 3, 3}, {kMax, kMax, kMax, kMax});
  const auto many_4d = [&] { (void)many.packed_accessor32<float, 4>(); };
  EXPECT_GLASS_ERROR(many_4d(), "beyond int32 indexing");
}

TEST(PackedAccessor, AStrideThatDoesNotFitIsRefused) {
  // A dim of size 1 may have any stride; int32 still cannot hold this one.
  const Tensor t = with_geometry({1}, {int64_t{1} << 31});
  const auto one_d = [&] { (void)t.packed_accessor32<float, 1>(); };
  EXPECT_GLASS_ERROR(one_d(), "stride 2147483648", "of dim 0", "does not fit in int32");
  const Tensor negative = with_geometry({1}, {-(int64_t{1} << 31) - 1});
  const auto negative_1d = [&] { (void)negative.packed_accessor32<float, 1>(); };
  EXPECT_GLASS_ERROR(negative_1d(), "does not fit in int32");
}

TEST(PackedAccessor, AZeroSizeDimReachesNothing) {
  const Tensor no_rows = zeros({0, 3});
  const auto empty_rows = no_rows.packed_accessor32<float, 2>();
  EXPECT_EQ(empty_rows.size(0), 0);
  EXPECT_EQ(empty_rows.size(1), 3);
  // With no element along dim 0, its stride moves to nothing: no int32 reach to check.
  const Tensor t = with_geometry({0, 2}, {int64_t{1} << 30, int64_t{1} << 30});
  const auto a = t.packed_accessor32<float, 2>();
  EXPECT_EQ(a.size(0), 0);
  EXPECT_EQ(a.stride(1), int64_t{1} << 30);
}

}  // namespace
}  // namespace glass
