// Tests for nonzero on CUDA (cuda/kernels/nonzero.cu: count, scan, write) against the
// CPU backend on the same inputs: every dtype, several tiles (so the scan carries across
// blocks), 0-dim and empty tensors, and a masked selection built on it.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include "cuda/backend/backend_test_util.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using glass::Tensor;

class CudaNonzero : public ::testing::Test {
 protected:
  void SetUp() override { glass::cuda::testing::use_simulator_unless_gpu(); }
};

::testing::AssertionResult same_as_cpu(const Tensor& x) {
  Tensor want = glass::nonzero(x);
  Tensor got = glass::nonzero(x.cuda());
  if (!got.is_cuda()) return ::testing::AssertionFailure() << "the result is not on CUDA";
  if (got.dtype() != glass::kLong) return ::testing::AssertionFailure() << "not Long";
  if (got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << "sizes " << got.sizes() << ", cpu " << want.sizes();
  if (!glass::equal(got.cpu(), want)) return ::testing::AssertionFailure() << "values differ";
  return ::testing::AssertionSuccess();
}

TEST_F(CudaNonzero, MatchesTheCpuForEveryDtype) {
  Tensor x =
      glass::tensor({0.0, 1.5, 0.0, -2.0, 0.0, 0.0, 3.0, 0.25, 0.0, 0.0, 0.0, 7.0}).view({3, 4});
  for (glass::ScalarType t :
       {glass::kBool, glass::kInt, glass::kLong, glass::kFloat, glass::kDouble}) {
    EXPECT_TRUE(same_as_cpu(x.to(t))) << glass::to_string(t);
    EXPECT_TRUE(same_as_cpu(x.to(t).view({2, 3, 2}))) << glass::to_string(t);
    EXPECT_TRUE(same_as_cpu(x.to(t).view({12}))) << glass::to_string(t);
  }
  // NaN is nonzero; -0.0 is zero.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(same_as_cpu(glass::tensor({nan, -0.0, 1.0, 0.0})));
  // A non-contiguous input (core makes it contiguous first).
  EXPECT_TRUE(same_as_cpu(x.t()));
}

// 3000 elements are three tiles of 1024: rows must continue across blocks in order.
TEST_F(CudaNonzero, RowsStayInOrderAcrossBlocks) {
  Tensor x = glass::zeros({3000}, glass::kBool);
  for (int64_t i = 0; i < 3000; ++i) x.data_ptr<bool>()[i] = i % 7 == 0 || i % 11 == 3;
  EXPECT_TRUE(same_as_cpu(x));
  EXPECT_TRUE(same_as_cpu(x.view({30, 100})));
  EXPECT_TRUE(same_as_cpu(x.view({5, 6, 4, 25})));
  EXPECT_TRUE(same_as_cpu(glass::ones({2500}, glass::kInt)));   // everything
  EXPECT_TRUE(same_as_cpu(glass::zeros({2500}, glass::kInt)));  // nothing: (0, 1)
}

TEST_F(CudaNonzero, ZeroDimAndEmptyTensors) {
  EXPECT_TRUE(same_as_cpu(glass::scalar_tensor(3.0)));  // (1, 0)
  EXPECT_TRUE(same_as_cpu(glass::scalar_tensor(0.0)));  // (0, 0)
  EXPECT_TRUE(same_as_cpu(glass::zeros({0, 3})));       // (0, 2)
  EXPECT_EQ(glass::nonzero(glass::zeros({0, 3}, glass::kCUDA)).sizes(),
            (std::vector<int64_t>{0, 2}));
}

TEST_F(CudaNonzero, MoreDimsThanTheKernelHandlesIsAClearError) {
  std::vector<int64_t> shape(17, 1);
  Tensor x = glass::ones(shape, glass::kCUDA);
  EXPECT_NE(glass::cuda::testing::error_of([&] { glass::nonzero(x); }).find("at most 16 dims"),
            std::string::npos);
}

}  // namespace
