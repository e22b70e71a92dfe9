// Tests for clamp, where and masked_fill_ on the CUDA backend (cuda/kernels/
// pointwise_select.cu): every result is compared with the CPU backend on the same inputs,
// exactly (these ops copy or compare values, they do no arithmetic).
#include <gtest/gtest.h>

#include <glass/glass.h>

#include "cuda/backend/backend_test_util.h"

#include <cmath>
#include <limits>

namespace {

using glass::Tensor;

class CudaSelect : public ::testing::Test {
 protected:
  void SetUp() override { glass::cuda::testing::use_simulator_unless_gpu(); }
};

const double kNan = std::numeric_limits<double>::quiet_NaN();

// Exact equality, NaN equal to NaN, same dtype and shape: the device result is the CPU's.
::testing::AssertionResult same(const Tensor& device, const Tensor& cpu) {
  Tensor d = device.cpu();
  if (d.dtype() != cpu.dtype())
    return ::testing::AssertionFailure()
           << "dtype " << glass::to_string(d.dtype()) << " vs " << glass::to_string(cpu.dtype());
  if (d.sizes() != cpu.sizes()) return ::testing::AssertionFailure() << "shapes differ";
  if (glass::allclose(d, cpu, 0, 0, /*equal_nan=*/true)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "device\n" << d << "\ncpu\n" << cpu;
}

// [-3.5, -1, ..., NaN, ...] as a 3x4 matrix of the given dtype (NaN only for floats).
Tensor values34(glass::ScalarType t) {
  Tensor x = glass::tensor({-3.5, -1.0, 0.0, 0.5, 2.0, 7.25, -0.25, 1.0, 3.0, -2.0, 4.5, 6.0})
                 .view({3, 4});
  if (glass::is_floating_type(t)) x.select(0, 1).select(0, 2).fill_(kNan);
  return x.to(t);
}

TEST_F(CudaSelect, ClampMatchesTheCpuForEveryNumericDtypeAndKeepsNan) {
  for (glass::ScalarType t : {glass::kInt, glass::kLong, glass::kFloat, glass::kDouble}) {
    Tensor x = values34(t);
    Tensor xd = x.cuda();
    EXPECT_TRUE(same(xd.clamp(-1, 3), x.clamp(-1, 3))) << glass::to_string(t);
    EXPECT_TRUE(same(xd.clamp(0, std::nullopt), x.clamp(0, std::nullopt)));
    EXPECT_TRUE(same(xd.clamp(std::nullopt, 2), x.clamp(std::nullopt, 2)));
    EXPECT_TRUE(same(xd.clamp(3, -1), x.clamp(3, -1)));  // lo > hi: every element is hi
  }
  Tensor x = values34(glass::kFloat);
  EXPECT_TRUE(std::isnan(x.cuda().clamp(-1, 1).cpu().select(0, 1).select(0, 2).item<float>()));
  // Bounds that promote: clamp(int, 0.5) computes in Float, as on the CPU.
  Tensor i = values34(glass::kLong);
  EXPECT_TRUE(same(i.cuda().clamp(0.5, 2.5), i.clamp(0.5, 2.5)));
}

TEST_F(CudaSelect, ClampOfStridedViewsAndInPlace) {
  Tensor x = glass::arange(48).to(glass::kFloat).view({6, 8}) - 20;
  Tensor xd = x.cuda();
  EXPECT_TRUE(same(xd.t().clamp(-5, 5), x.t().clamp(-5, 5)));
  EXPECT_TRUE(same(xd.slice(1, 1, 8, 3).clamp(-5, 5), x.slice(1, 1, 8, 3).clamp(-5, 5)));
  Tensor y = x.clone(), yd = xd.clone();
  y.t().clamp_(-3, 10);
  yd.t().clamp_(-3, 10);
  EXPECT_TRUE(same(yd, y));
  Tensor flat = glass::arange(5000).to(glass::kDouble) - 2500;  // several blocks, a tail
  EXPECT_TRUE(same(flat.cuda().clamp(-100, 100), flat.clamp(-100, 100)));
}

TEST_F(CudaSelect, WhereBroadcastsEveryOperandForEveryDtype) {
  Tensor cond = glass::tensor({true, false, true, false}).view({1, 4});
  for (glass::ScalarType t :
       {glass::kBool, glass::kInt, glass::kLong, glass::kFloat, glass::kDouble}) {
    Tensor a = values34(t);                                           // (3, 4)
    Tensor b = glass::tensor({10.0, 20.0, 30.0}).view({3, 1}).to(t);  // (3, 1)
    Tensor got = glass::where(cond.cuda(), a.cuda(), b.cuda());
    EXPECT_TRUE(same(got, glass::where(cond, a, b))) << glass::to_string(t);
  }
  // Promotion between a and b: Long and Double give Double.
  Tensor a = values34(glass::kLong), b = values34(glass::kDouble);
  Tensor c = a > 0;
  EXPECT_TRUE(same(glass::where(c.cuda(), a.cuda(), b.cuda()), glass::where(c, a, b)));
}

TEST_F(CudaSelect, WhereOfNonContiguousOperandsAndCpuScalars) {
  Tensor a = glass::arange(24).to(glass::kFloat).view({4, 6});
  Tensor b = -glass::arange(24).to(glass::kFloat).view({6, 4});
  Tensor cond = glass::arange(24).to(glass::kFloat).sin().view({4, 6}) > 0;
  Tensor ad = a.cuda(), bd = b.cuda(), cd = cond.cuda();
  // A transposed operand, a sliced condition with a step.
  EXPECT_TRUE(same(glass::where(cd, ad, bd.t()), glass::where(cond, a, b.t())));
  EXPECT_TRUE(
      same(glass::where(cd.slice(1, 0, 6, 2), ad.slice(1, 1, 6, 2), bd.t().slice(1, 0, 6, 2)),
           glass::where(cond.slice(1, 0, 6, 2), a.slice(1, 1, 6, 2), b.t().slice(1, 0, 6, 2))));
  // 0-dim CPU tensors as a and b: kernel arguments, never copied to the device.
  Tensor zero = glass::tensor(0.0f), seven = glass::tensor(7.0f);
  EXPECT_TRUE(same(glass::where(cd, ad, zero), glass::where(cond, a, zero)));
  EXPECT_TRUE(same(glass::where(cd, seven, bd.t()), glass::where(cond, seven, b.t())));
  EXPECT_TRUE(same(glass::where(cd, 2.5, bd.t()), glass::where(cond, 2.5, b.t())));  // Scalars
  EXPECT_TRUE(same(glass::where(cd, ad, -1), glass::where(cond, a, -1)));
  // A 0-dim CPU condition.
  Tensor yes = glass::tensor(true);
  EXPECT_TRUE(same(glass::where(yes, ad, bd.t()), glass::where(yes, a, b.t())));
}

TEST_F(CudaSelect, MaskedFillBroadcastsTheMaskForEveryDtype) {
  Tensor mask = glass::tensor({false, true, true, false}).view({1, 4});
  for (glass::ScalarType t :
       {glass::kBool, glass::kInt, glass::kLong, glass::kFloat, glass::kDouble}) {
    Tensor x = values34(t);
    Tensor xd = x.cuda();
    EXPECT_TRUE(same(xd.masked_fill(mask.cuda(), 1), x.masked_fill(mask, 1)))
        << glass::to_string(t);
  }
  Tensor x = values34(glass::kFloat);
  EXPECT_TRUE(same(x.cuda().masked_fill(mask.cuda(), kNan), x.masked_fill(mask, kNan)));
}

TEST_F(CudaSelect, MaskedFillInPlaceThroughStridedViews) {
  Tensor x = glass::arange(40).to(glass::kDouble).view({5, 8});
  Tensor mask = glass::arange(40).to(glass::kFloat).cos().view({8, 5}) > 0;
  Tensor xd = x.cuda(), md = mask.cuda();
  // self transposed, mask contiguous: the in-place write goes through the view.
  x.t().masked_fill_(mask, -1);
  xd.t().masked_fill_(md, -1);
  EXPECT_TRUE(same(xd, x));
  // A stepped slice of self and of the mask.
  x.slice(1, 0, 8, 3).masked_fill_(mask.t().slice(1, 1, 8, 3), 100);
  xd.slice(1, 0, 8, 3).masked_fill_(md.t().slice(1, 1, 8, 3), 100);
  EXPECT_TRUE(same(xd, x));
}

TEST_F(CudaSelect, BadInputGetsTheCpusErrors) {
  using glass::cuda::testing::error_of;
  Tensor xd = values34(glass::kFloat).cuda();
  std::string msg = error_of([&] { (void)xd.masked_fill(xd, 0); });  // a Float mask
  EXPECT_NE(msg.find("Bool"), std::string::npos) << msg;
  msg = error_of([&] { (void)glass::where(xd, xd, xd); });
  EXPECT_NE(msg.find("boolean"), std::string::npos) << msg;
  msg = error_of([&] { (void)(xd > 0).clamp(0, 1); });
  EXPECT_NE(msg.find("Bool"), std::string::npos) << msg;
}

}  // namespace
