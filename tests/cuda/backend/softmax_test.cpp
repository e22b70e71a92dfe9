// Tests for softmax / log_softmax on CUDA (cuda/kernels/softmax.cu): the online one-pass
// kernel and the three-pass kernel both against the CPU backend on the same inputs, which
// computes in float64 (the CPU's float log_softmax rounds x - logsumexp in float and loses
// bits when |x| is large; the CUDA kernel subtracts the max first) — rows
// of every length the block tree handles, inner > 1, -inf entries, all -inf rows (NaN, as
// on the CPU), values whose exp overflows without the max subtracted, and empty shapes.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include "cuda/backend/backend_test_util.h"
#include "cuda/kernels/kernels.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using glass::Tensor;

class CudaSoftmax : public ::testing::Test {
 protected:
  void SetUp() override { glass::cuda::testing::use_simulator_unless_gpu(); }
};

// Elementwise |a - b| <= atol + rtol |b|, with NaN only where the reference has NaN.
// cpu_result: the CPU backend's, computed in float64.
::testing::AssertionResult matches(const Tensor& cuda_result, const Tensor& cpu_result, double rtol,
                                   double atol = 1e-7) {
  Tensor a = cuda_result.cpu().to(glass::kDouble).contiguous();
  Tensor b = cpu_result.to(glass::kDouble).contiguous();
  EXPECT_EQ(cpu_result.dtype(), glass::kDouble);
  if (a.sizes() != b.sizes()) return ::testing::AssertionFailure() << "shapes differ";
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    const bool same_nan = std::isnan(pa[i]) && std::isnan(pb[i]);
    const bool same_inf = std::isinf(pb[i]) && pa[i] == pb[i];
    if (!same_nan && !same_inf && !(std::abs(pa[i] - pb[i]) <= atol + rtol * std::abs(pb[i])))
      return ::testing::AssertionFailure()
             << "element " << i << ": cuda " << pa[i] << ", cpu " << pb[i];
  }
  return ::testing::AssertionSuccess();
}

// Float results: a few float roundings of values of order 1.
double rtol_for(glass::ScalarType t) { return t == glass::kFloat ? 1e-5 : 1e-12; }
Tensor f64(const Tensor& x) { return x.to(glass::kDouble); }

TEST_F(CudaSoftmax, MatchesTheCpuOverEveryDimAndDtype) {
  glass::manual_seed(0);
  // Row lengths below a warp, between warps, above the block (several elements a thread).
  const std::vector<std::vector<int64_t>> shapes = {{7}, {3, 33}, {2, 300}, {4, 5, 6}, {2, 3, 1}};
  for (glass::ScalarType t : {glass::kFloat, glass::kDouble}) {
    for (const auto& shape : shapes) {
      Tensor x = (glass::randn(shape, glass::kDouble) * 4).to(t);
      Tensor xd = x.cuda();
      for (int64_t dim = 0; dim < x.dim(); ++dim) {
        EXPECT_TRUE(matches(glass::softmax(xd, dim), glass::softmax(f64(x), dim), rtol_for(t)))
            << glass::to_string(t) << " shape " << x.sizes() << " dim " << dim;
        EXPECT_TRUE(
            matches(glass::log_softmax(xd, dim), glass::log_softmax(f64(x), dim), rtol_for(t)))
            << glass::to_string(t) << " shape " << x.sizes() << " dim " << dim;
      }
    }
  }
}

TEST_F(CudaSoftmax, MinusInfinityLargeValuesAndAllMinusInfinityRows) {
  const double inf = std::numeric_limits<double>::infinity();
  // Row 0: some -inf (their probability is 0); row 1: exp(1e4) overflows unless the max
  // is subtracted; row 2: all -inf (NaN, as on the CPU and in PyTorch); row 3: -inf first,
  // so the running max starts at -inf.
  Tensor x = glass::tensor({-inf, 1.0, -inf, 2.0,     //
                            1e4, 1e4 - 1, -1e4, 1e4,  //
                            -inf, -inf, -inf, -inf,   //
                            -inf, 0.5, 0.25, -inf})
                 .view({4, 4});
  for (glass::ScalarType t : {glass::kFloat, glass::kDouble}) {
    Tensor xt = x.to(t), xd = xt.cuda();
    for (int64_t dim : {0, 1}) {
      EXPECT_TRUE(matches(glass::softmax(xd, dim), glass::softmax(f64(xt), dim), rtol_for(t)))
          << glass::to_string(t) << " dim " << dim;
      EXPECT_TRUE(
          matches(glass::log_softmax(xd, dim), glass::log_softmax(f64(xt), dim), rtol_for(t)))
          << glass::to_string(t) << " dim " << dim;
    }
    Tensor s = glass::softmax(xd, 1).cpu().to(glass::kDouble);
    EXPECT_TRUE(std::isnan(s.select(0, 2).select(0, 0).item<double>()));
    EXPECT_EQ(s.select(0, 0).select(0, 0).item<double>(), 0.0);
    EXPECT_FALSE(std::isnan(s.select(0, 1).sum().item<double>()));
  }
}

// A +inf or a NaN anywhere in a row makes the whole row NaN, on both devices and for
// every kernel (rows, columns, online, three-pass), as x - max does in PyTorch.
TEST_F(CudaSoftmax, PlusInfinityOrNanMakesTheRowNan) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = glass::tensor({inf, 1.0, 2.0, 3.0,  //
                            1.0, nan, 2.0, 3.0,  //
                            1.0, 2.0, 3.0, 4.0})
                 .view({3, 4});
  for (glass::ScalarType t : {glass::kFloat, glass::kDouble}) {
    Tensor xt = x.to(t);
    for (bool log : {false, true}) {
      Tensor cpu = log ? glass::log_softmax(xt, 1) : glass::softmax(xt, 1);
      Tensor rows = (log ? glass::log_softmax(xt.cuda(), 1) : glass::softmax(xt.cuda(), 1)).cpu();
      // dim 0 of the transpose: the columns kernel (inner > 1) on the same rows.
      Tensor xc = xt.t().contiguous().cuda();
      Tensor cols = (log ? glass::log_softmax(xc, 0) : glass::softmax(xc, 0)).t().cpu();
      auto nans = [](const Tensor& v) { return (v != v).sum().item<int64_t>(); };
      for (const Tensor& r : {cpu, rows, cols}) {
        EXPECT_EQ(nans(r.narrow(0, 0, 2)), 8) << r;  // rows 0 and 1: all NaN
        EXPECT_EQ(nans(r.select(0, 2)), 0) << r;
      }
      EXPECT_TRUE(glass::allclose(rows.select(0, 2), cpu.select(0, 2), 1e-5, 1e-6));
    }
  }
}

TEST_F(CudaSoftmax, EmptyShapes) {
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{3, 0}, {0, 4}, {2, 0, 3}}) {
    Tensor xd = glass::zeros(shape, glass::kCUDA);
    for (int64_t dim = 0; dim < xd.dim(); ++dim) {
      Tensor y = glass::softmax(xd, dim);
      EXPECT_TRUE(y.is_cuda());
      EXPECT_EQ(y.sizes(), xd.sizes());
    }
  }
}

TEST_F(CudaSoftmax, BadInputGetsClearErrors) {
  Tensor i = glass::arange(4).cuda();
  EXPECT_NE(glass::cuda::testing::error_of([&] { glass::softmax(i, 0); }).find("floating-point"),
            std::string::npos);
  EXPECT_NE(
      glass::cuda::testing::error_of([&] { glass::softmax(i.to(glass::kFloat), 3); }).find("dim"),
      std::string::npos);
}

// The textbook three-pass kernel (launched directly: no op uses it) agrees with the online
// one and with the CPU. It is the simulator's build; a GPU run skips it.
TEST_F(CudaSoftmax, ThreePassKernelAgreesWithTheOnlineOne) {
  if (!glass::cuda::is_simulated()) GTEST_SKIP() << "calls the simulator's build of the kernel";
  glass::manual_seed(1);
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{3, 70}, {2, 9, 5}}) {
    Tensor x = glass::randn(shape) * 3;
    Tensor xd = x.cuda();
    const int64_t n = shape[1];
    const int64_t inner = shape.size() == 3 ? shape[2] : 1;
    for (bool log : {false, true}) {
      Tensor out = glass::empty(x.sizes(), glass::kCUDA);
      glass::cuda::sim::launch_softmax_three_pass(xd, shape[0], n, inner, log, out);
      Tensor cpu = log ? glass::log_softmax(f64(x), 1) : glass::softmax(f64(x), 1);
      EXPECT_TRUE(matches(out, cpu, 1e-5)) << "log " << log << " shape " << x.sizes();
      Tensor online = log ? glass::log_softmax(xd, 1) : glass::softmax(xd, 1);
      EXPECT_TRUE(glass::allclose(out.cpu(), online.cpu(), 1e-5, 1e-7));
    }
  }
}

}  // namespace
