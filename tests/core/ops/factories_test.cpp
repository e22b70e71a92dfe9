// tests/core/ops/factories_test.cpp — factories against PyTorch's results.
#include "core/ops/factories.h"

#include "../device_test.h"
#include "../test_util.h"

namespace glass {
namespace {

using testing::close;

class Factories : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(Factories);

TEST_P(Factories, FilledTensors) {
  EXPECT_TRUE(close(zeros({2, 2}, opts()), {0, 0, 0, 0}));
  EXPECT_TRUE(close(ones({3}, opts(kInt64)), {1, 1, 1}));
  EXPECT_EQ(full({2}, 7, opts()).dtype(), kInt64);      // torch.full((2,), 7) is Long
  EXPECT_EQ(full({2}, 7.5, opts()).dtype(), kFloat32);  // and with 7.5, Float
  EXPECT_EQ(full({2}, true, opts()).dtype(), kBool);
  EXPECT_TRUE(close(full({2}, 7.5, opts()), {7.5, 7.5}));
  Tensor x = ones({2, 3}, opts(kFloat64));
  EXPECT_EQ(zeros_like(x).dtype(), kFloat64);
  EXPECT_EQ(ones_like(x).sizes(), (Shape{2, 3}));
  EXPECT_EQ(empty_like(x).sizes(), (Shape{2, 3}));
  EXPECT_EQ(full_like(x, 2).sum().item<double>(), 12.0);
}

TEST_P(Factories, RangesInferTheirDtype) {
  EXPECT_EQ(arange(5, opts()).dtype(), kInt64);
  EXPECT_TRUE(close(arange(5, opts()), {0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(0, 1, 0.25, opts()).dtype(), kFloat32);
  EXPECT_TRUE(close(arange(0, 1, 0.25, opts()), {0, 0.25, 0.5, 0.75}));
  EXPECT_TRUE(close(arange(5, 0, -2, opts()), {5, 3, 1}));
  EXPECT_TRUE(close(linspace(0, 1, 5, opts()), {0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(linspace(0, 1, 5, opts()).dtype(), kFloat32);  // the default dtype, as PyTorch
  EXPECT_EQ(linspace(-1, 1, 7, opts()).select(0, -1).item<float>(), 1.0f);  // end is exact
  EXPECT_TRUE(close(eye(2, 3, opts()), {1, 0, 0, 0, 1, 0}));
  EXPECT_GLASS_ERROR(arange(0, 5, -1, opts()), "arange()");
  EXPECT_GLASS_ERROR(arange(0, 5, 0, opts()), "step must be nonzero");
}

TEST_P(Factories, NestedInitializerLists) {
  // opts() names only the device: the dtype is still inferred from the literals.
  Tensor t = tensor({{1., 2.}, {3., 4.}}, opts());
  EXPECT_EQ(t.sizes(), (Shape{2, 2}));
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(t.device(), device());
  EXPECT_EQ(tensor({{1, 2}, {3, 4}}, opts()).dtype(), kInt64);
  EXPECT_EQ(tensor({1, 2}, opts(kFloat64)).dtype(), kFloat64);
  EXPECT_EQ(tensor({1, 2.5}, opts()).dtype(), kFloat32);  // mixed promotes
  EXPECT_EQ(tensor(3, opts()).dim(), 0);
  EXPECT_GLASS_ERROR(tensor({{1, 2}, {3}}, opts()), "ragged", "data[1]", "expected a list of 2");
  EXPECT_GLASS_ERROR(tensor({{1, 2}, 3}, opts()), "ragged", "data[1]");
  EXPECT_TRUE(close(tensor(std::vector<double>{1.5, 2.5}, opts()), {1.5, 2.5}));
}

TEST_P(Factories, BadSizes) {
  EXPECT_GLASS_ERROR(zeros({2, -3}, opts()), "negative size -3", "dim 1");
  EXPECT_GLASS_ERROR(empty({1LL << 62, 8}, opts()), "overflow");
  EXPECT_GLASS_ERROR(eye(-1, opts()), "non-negative");
}

}  // namespace
}  // namespace glass
