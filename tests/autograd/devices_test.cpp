// tests/autograd/devices_test.cpp — gradients land on their inputs' devices.
//
// FormulaNode moves each gradient to its input's device (formula.h), backward formulas
// make their helper tensors (masks, index tensors, zeros) on the gradient's device, and
// the engine and custom functions refuse gradients on the wrong device. The device is
// the fake CUDA backend (tests/core/fake_cuda.h): host memory tagged cuda:N, so every
// value below is checked by hand on the CPU.
#include <gtest/gtest.h>

#include <type_traits>

#include "autograd/custom_function.h"
#include "autograd/gradcheck.h"
#include "autograd/node.h"
#include "core/fake_cuda.h"
#include "core/test_util.h"

namespace glass {
namespace {

using testing::close;
using testing::FakeCuda;

static_assert(std::is_same_v<autograd::variable_list, autograd::tensor_list>);

const Device kCuda0(kCUDA, 0);

// A float64 leaf on cuda:0 that requires grad.
Tensor cuda_leaf(const NestedList& values) {
  return tensor(values, TensorOptions(kFloat64).device(kCuda0)).requires_grad_();
}

TEST(AutogradDevices, ACpuScalarInputGetsItsGradientOnTheCpu) {
  FakeCuda cuda;
  Tensor x = cuda_leaf({1.0, 2.0});
  Tensor s = tensor(3.0, kFloat64).requires_grad_();  // a 0-dim CPU tensor joins the op
  Tensor y = (x * s).sum();
  EXPECT_EQ(y.device(), kCuda0);
  y.backward();
  EXPECT_EQ(x.grad().device(), kCuda0);
  EXPECT_TRUE(close(x.grad().cpu(), {3, 3}));
  EXPECT_EQ(s.grad().device(), Device(kCPU));  // d/ds = sum(x) = 3, back on the CPU
  EXPECT_TRUE(close(s.grad(), {3}));
}

TEST(AutogradDevices, MovingBetweenDevicesIsDifferentiable) {
  FakeCuda cuda;
  Tensor x = tensor({1.0, -1.0}, kFloat64).requires_grad_();
  Tensor y = x.to(kCUDA) * 2;
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  y.sum().backward();
  EXPECT_EQ(x.grad().device(), Device(kCPU));  // ToCopyBackward0 brought it back
  EXPECT_TRUE(close(x.grad(), {2, 2}));
  // And the other way, with a cast on top.
  Tensor c = cuda_leaf({1.0, 2.0});
  (c.to(kCPU, kFloat32) * c.to(kCPU, kFloat32)).sum().backward();
  EXPECT_EQ(c.grad().device(), kCuda0);
  EXPECT_EQ(c.grad().dtype(), kFloat64);
  EXPECT_TRUE(close(c.grad().cpu(), {2, 4}));
}

TEST(AutogradDevices, CopyIntoADeviceTensorSendsTheGradientBack) {
  FakeCuda cuda;
  Tensor src = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor dst = zeros({2}, TensorOptions(kFloat64).device(kCuda0));
  dst.copy_(src, /*non_blocking=*/true);
  (dst * dst).sum().backward();
  EXPECT_EQ(src.grad().device(), Device(kCPU));
  EXPECT_TRUE(close(src.grad(), {2, 4}));
}

TEST(AutogradDevices, ClampBackwardBuildsItsMaskOnTheDevice) {
  FakeCuda cuda;
  Tensor x = cuda_leaf({-1.0, 0.5, 2.0});
  x.clamp(0, 1).sum().backward();
  EXPECT_EQ(x.grad().device(), kCuda0);
  EXPECT_TRUE(close(x.grad().cpu(), {0, 1, 0}));
  Tensor y = cuda_leaf({-1.0, 0.5, 2.0});
  y.clamp_min(0).sum().backward();
  EXPECT_TRUE(close(y.grad().cpu(), {0, 1, 1}));
}

TEST(AutogradDevices, ViewsThroughPositionsBackwardOnTheDevice) {
  FakeCuda cuda;
  // diagonal of [[0,1],[2,3]] -> [0, 3]; the gradient of sum(diag * [1, 2]) is [[1,0],[0,2]].
  Tensor x = cuda_leaf({{0.0, 1.0}, {2.0, 3.0}});
  (x.diagonal() * tensor({1.0, 2.0}, kFloat64).to(kCUDA)).sum().backward();
  EXPECT_EQ(x.grad().device(), kCuda0);
  EXPECT_TRUE(close(x.grad().cpu(), {1, 0, 0, 2}));
  // unfold(0, 2, 1) of [a, b, c] -> [[a, b], [b, c]]: b is read twice.
  Tensor u = cuda_leaf({1.0, 2.0, 3.0});
  u.unfold(0, 2, 1).sum().backward();
  EXPECT_TRUE(close(u.grad().cpu(), {1, 2, 1}));
  // as_strided reading slots [0, 1, 1, 2] of a 3-element storage.
  Tensor a = cuda_leaf({1.0, 2.0, 3.0});
  a.as_strided({2, 2}, {1, 1}).sum().backward();
  EXPECT_EQ(a.grad().device(), kCuda0);
  EXPECT_TRUE(close(a.grad().cpu(), {1, 2, 1}));
}

TEST(AutogradDevices, IndexingAndReductionsBackwardOnTheDevice) {
  FakeCuda cuda;
  Tensor x = cuda_leaf({{1.0, 5.0}, {7.0, 3.0}});
  std::get<0>(x.max(1)).sum().backward();  // picks 5 and 7
  EXPECT_EQ(x.grad().device(), kCuda0);
  EXPECT_TRUE(close(x.grad().cpu(), {0, 1, 1, 0}));
  Tensor y = cuda_leaf({1.0, 2.0, 3.0});
  y.index({tensor({2, 2, 0})}).sum().backward();  // CPU indices, copied to the device
  EXPECT_TRUE(close(y.grad().cpu(), {1, 0, 2}));
  Tensor z = cuda_leaf({1.0, 2.0, 3.0});
  z.slice(0, 0, 3, 2).sum().backward();  // zeros padded in by cat, on the device
  EXPECT_TRUE(close(z.grad().cpu(), {1, 0, 1}));
}

TEST(AutogradDevices, TheRootGradientMustBeOnTheOutputsDevice) {
  FakeCuda cuda;
  Tensor x = cuda_leaf({1.0, 2.0});
  Tensor y = x * 2;
  EXPECT_GLASS_ERROR(y.backward(ones({2}, kFloat64)), "backward()", "the gradient is on cpu",
                     "output is on cuda:0");
  y.backward(ones({2}, TensorOptions(kFloat64).device(kCuda0)));
  EXPECT_TRUE(close(x.grad().cpu(), {2, 2}));
}

// A custom function whose backward ignores its second output's (undefined) gradient and
// reports the device it was handed.
struct TwoOutputs : autograd::Function<TwoOutputs> {
  static inline Device seen = Device(kCPU);
  static autograd::variable_list forward(autograd::AutogradContext*, Tensor x) {
    return {x * 2, x * 3};
  }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) {
    seen = g[1].device();  // undefined upstream: zeros, made on the output's device
    return {g[0] * 2 + g[1] * 3};
  }
};

struct WrongDevice : autograd::Function<WrongDevice> {
  static Tensor forward(autograd::AutogradContext*, Tensor x) { return x * 1; }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) {
    return {g[0].cpu()};
  }
};

TEST(AutogradDevices, CustomFunctionsGetAndMustReturnGradientsOnTheirDevices) {
  FakeCuda cuda;
  Tensor x = cuda_leaf({1.0, 2.0});
  auto outs = TwoOutputs::apply(x);
  outs[0].sum().backward();
  EXPECT_EQ(TwoOutputs::seen, kCuda0);
  EXPECT_TRUE(close(x.grad().cpu(), {2, 2}));
  Tensor w = cuda_leaf({1.0});
  EXPECT_GLASS_ERROR(WrongDevice::apply(w).sum().backward(), "WrongDeviceBackward",
                     "a gradient on cpu for input 0, which is on cuda:0");
}

TEST(AutogradDevices, GradcheckRunsOnADevice) {
  FakeCuda cuda;
  Tensor x = testing::random_tensor({3}, kFloat64, 7).to(kCUDA);
  auto f = [](const autograd::tensor_list& in) -> autograd::tensor_list {
    return {(in[0] * in[0] + in[0].exp()) * 3};
  };
  EXPECT_TRUE(autograd::gradcheck(f, {x}).ok);
  EXPECT_TRUE(autograd::gradgradcheck(f, {x}).ok);
}

}  // namespace
}  // namespace glass
