// tests/core/ops/linalg_test.cpp — matmul shapes and values against a naive triple loop.
#include "core/ops/linalg.h"

#include "../device_test.h"
#include "../test_util.h"

namespace glass {
namespace {

using testing::close;
using testing::random_tensor;
using testing::values;

// The oracle: C[i][j] = sum_k A[i][k] B[k][j] in double, read through the address formula
// (from host copies of device operands, taken once).
std::vector<double> naive_mm(const Tensor& a_any, const Tensor& b_any) {
  Tensor a = testing::host(a_any), b = testing::host(b_any);
  std::vector<double> out;
  for (int64_t i = 0; i < a.size(0); ++i)
    for (int64_t j = 0; j < b.size(1); ++j) {
      double s = 0;
      for (int64_t k = 0; k < a.size(1); ++k)
        s += testing::ref_at(a, {i, k}) * testing::ref_at(b, {k, j});
      out.push_back(s);
    }
  return out;
}

class Linalg : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(Linalg);

TEST_P(Linalg, MmHandWorked) {
  Tensor a = on(tensor({{1., 2.}, {3., 4.}})), b = on(tensor({{5., 6.}, {7., 8.}}));
  EXPECT_TRUE(close(a.mm(b), {19, 22, 43, 50}));
  EXPECT_TRUE(close(a.t().mm(b), {26, 30, 38, 44}));
  EXPECT_TRUE(close(addmm(on(tensor({1., 1.})), a, b, 2, 1), {21, 24, 45, 52}));  // 2*1 + ab
  EXPECT_TRUE(
      close(on(tensor({1, 2})).view({1, 2}).mm(on(tensor({3, 4})).view({2, 1})), {11}));  // Long
}

TEST_P(Linalg, MatmulFollowsNumPyShapes) {
  EXPECT_EQ(matmul(ones({3}, opts()), ones({3}, opts())).dim(), 0);
  EXPECT_EQ(matmul(ones({3}, opts()), ones({3}, opts())).item<float>(), 3.0f);
  EXPECT_EQ(matmul(ones({2, 3}, opts()), ones({3}, opts())).sizes(), (Shape{2}));
  EXPECT_EQ(matmul(ones({3}, opts()), ones({3, 4}, opts())).sizes(), (Shape{4}));
  EXPECT_EQ(matmul(ones({5, 2, 3}, opts()), ones({3, 4}, opts())).sizes(), (Shape{5, 2, 4}));
  EXPECT_EQ(matmul(ones({2, 1, 2, 3}, opts()), ones({5, 3, 4}, opts())).sizes(),
            (Shape{2, 5, 2, 4}));
  EXPECT_EQ(matmul(ones({3}, opts()), ones({5, 3, 4}, opts())).sizes(), (Shape{5, 4}));
  EXPECT_EQ(matmul(ones({5, 2, 3}, opts()), ones({3}, opts())).sizes(), (Shape{5, 2}));
  EXPECT_EQ(bmm(ones({4, 2, 3}, opts()), ones({4, 3, 5}, opts())).sizes(), (Shape{4, 2, 5}));
}

TEST_P(Linalg, NonContiguousOperandsMatchTheOracle) {
  for (ScalarType dt : {kFloat32, kFloat64}) {
    Tensor a = on(random_tensor({37, 29}, dt, 1)), b = on(random_tensor({29, 45}, dt, 2));
    double tol = dt == kFloat32 ? 1e-4 : 1e-10;
    EXPECT_TRUE(close(a.mm(b), naive_mm(a, b), tol, tol));
    Tensor at = a.t().contiguous().t(),
           bs = on(random_tensor({29, 90}, dt, 3)).slice(1, 0, std::nullopt, 2);
    EXPECT_TRUE(close(at.mm(bs), naive_mm(at, bs), tol, tol));
    Tensor batch = on(random_tensor({3, 5, 4}, dt, 4)), rhs = on(random_tensor({3, 4, 6}, dt, 5));
    Tensor out = matmul(batch, rhs);
    for (int64_t i = 0; i < 3; ++i)
      EXPECT_TRUE(
          close(out.select(0, i), naive_mm(batch.select(0, i), rhs.select(0, i)), tol, tol));
  }
}

TEST_P(Linalg, Errors) {
  EXPECT_GLASS_ERROR(matmul(ones({2, 3}, opts()), ones({4, 5}, opts())), "matmul()", "2x3 and 4x5");
  EXPECT_GLASS_ERROR(matmul(scalar_tensor(1.0, opts()), ones({2}, opts())), "at least 1D",
                     "0D and 1D");
  EXPECT_GLASS_ERROR(mm(ones({2, 3}, opts()), ones({3}, opts())), "2-D");
  EXPECT_GLASS_ERROR(mm(ones({2, 3}, opts()), ones({3, 2}, opts(kFloat64))), "same dtype", "Float",
                     "Double");
  EXPECT_GLASS_ERROR(bmm(ones({2, 2, 3}, opts()), ones({3, 3, 2}, opts())), "batch sizes differ");
}

}  // namespace
}  // namespace glass
