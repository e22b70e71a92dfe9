// tests/nn/device_test.cpp — nn on a device: every tensor nn makes from an input lands on
// the input's device (dropout masks, initialisers, losses, layer forwards), and a whole
// training step on the device matches the same step on the CPU.
//
// The device is the fake CUDA backend (tests/core/fake_cuda.h): host memory tagged cuda:N
// with the CPU kernels, so results can be compared exactly with a CPU run.
#include <gtest/gtest.h>

#include "core/fake_cuda.h"
#include "core/ops/random.h"
#include "core/test_util.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/embedding.h"
#include "nn/modules/layer_norm.h"
#include "nn/modules/linear.h"
#include "nn/optim/adam.h"
#include "nn/optim/sgd.h"

namespace glass::nn {
namespace {

namespace F = functional;
using testing::close;
using testing::FakeCuda;

const Device kCuda1(kCUDA, 1);

TEST(NnOnADevice, DropoutMasksAreMadeOnTheInputsDevice) {
  FakeCuda cuda;
  Tensor x = ones({4, 8}, kCuda1);
  manual_seed(3);
  Tensor y = F::dropout(x, 0.5, /*training=*/true);
  EXPECT_EQ(y.device(), kCuda1);
  manual_seed(3);
  Tensor reference = F::dropout(ones({4, 8}), 0.5, true);  // the same draws on the CPU
  EXPECT_TRUE(close(y.cpu(), reference, 0, 0));
  // Kept elements are scaled by 1 / (1 - p) = 2, dropped ones are 0.
  for (double v : testing::values(y.cpu())) EXPECT_TRUE(v == 0 || v == 2);
}

TEST(NnOnADevice, InitialisersFillDeviceTensorsInPlace) {
  FakeCuda cuda;
  Tensor w = empty({3, 4}, kCuda1);
  manual_seed(5);
  init::kaiming_uniform_(w, std::sqrt(5.0));
  EXPECT_EQ(w.device(), kCuda1);
  // bound = gain * sqrt(3 / fan_in), gain = sqrt(2 / (1 + 5)): sqrt(1/3) * sqrt(3/4) = 0.5
  EXPECT_LE(w.abs().max().item<float>(), 0.5f);
  init::ones_(w);
  EXPECT_TRUE(close(w.cpu(), std::vector<double>(12, 1.0)));
}

TEST(NnOnADevice, LossesComputeOnTheDevice) {
  FakeCuda cuda;
  Tensor logits = tensor({{2.0, 0.0}, {0.0, 2.0}}, kFloat64).to(kCuda1);
  Tensor target = tensor({0, 1}).to(kCuda1);
  Tensor ce = F::cross_entropy(logits, target);
  EXPECT_EQ(ce.device(), kCuda1);
  // -log(e^2 / (e^2 + 1)) = log(1 + e^-2) for both rows.
  EXPECT_NEAR(ce.item<double>(), std::log1p(std::exp(-2.0)), 1e-12);
  Tensor mse = F::mse_loss(logits, zeros({2, 2}, TensorOptions(kFloat64).device(kCuda1)));
  EXPECT_EQ(mse.device(), kCuda1);
  EXPECT_DOUBLE_EQ(mse.item<double>(), 2.0);  // (4 + 0 + 0 + 4) / 4
  Tensor bce = F::binary_cross_entropy_with_logits(logits, ones({2, 2}, kFloat64).to(kCuda1));
  EXPECT_EQ(bce.device(), kCuda1);
  // Mixing devices is the clear error, naming both.
  EXPECT_GLASS_ERROR(F::mse_loss(logits, zeros({2, 2}, kFloat64)), "cuda:1", "cpu");
}

TEST(NnOnADevice, LayersRunOnTheDevice) {
  FakeCuda cuda;
  manual_seed(1);
  Embedding emb(5, 3);
  LayerNorm norm(LayerNormOptions({3}));
  emb->to(kCuda1);
  norm->to(kCuda1);
  Tensor e = emb(tensor({4, 0, 4}).to(kCuda1));
  EXPECT_EQ(e.device(), kCuda1);
  Tensor n = norm(e);
  EXPECT_EQ(n.device(), kCuda1);
  EXPECT_TRUE(close(n.mean({1}).cpu(), {0, 0, 0}, 0, 1e-6));
}

// Two training steps of a small MLP, on the CPU and on the device, from the same start.
std::vector<Tensor> train(Device device, bool use_adam) {
  manual_seed(42);
  Sequential model(Linear(3, 4), ReLU(), Linear(4, 2));
  model->to(device);  // before the optimizer, so its state is made on the device
  std::vector<Tensor> params = model->parameters();
  std::unique_ptr<optim::Optimizer> opt;
  if (use_adam)
    opt = std::make_unique<optim::Adam>(params, optim::AdamOptions(0.1));
  else
    opt = std::make_unique<optim::SGD>(params, optim::SGDOptions(0.1).momentum(0.9));
  Tensor x = tensor({{1.0, -2.0, 0.5}, {0.0, 1.0, -1.0}}).to(device);
  Tensor y = tensor({1, 0}).to(device);
  for (int step = 0; step < 2; ++step) {
    opt->zero_grad();
    Tensor loss = F::cross_entropy(model->forward(x), y);
    EXPECT_EQ(loss.device(), device);
    loss.backward();
    opt->step();
  }
  for (const Tensor& p : params) EXPECT_EQ(p.device(), device);
  return params;
}

TEST(NnOnADevice, TrainingStepsMatchTheCpu) {
  FakeCuda cuda;
  for (bool adam : {false, true}) {
    SCOPED_TRACE(adam ? "Adam" : "SGD with momentum");
    std::vector<Tensor> cpu = train(Device(kCPU), adam);
    std::vector<Tensor> dev = train(kCuda1, adam);
    ASSERT_EQ(cpu.size(), dev.size());
    // The CPU run may take the fused update loop, the device run the tensor ops: equal up
    // to float32 rounding.
    for (size_t i = 0; i < cpu.size(); ++i)
      EXPECT_TRUE(close(dev[i].detach().cpu(), cpu[i].detach()));
  }
}

TEST(NnOnADevice, OptimizerStateLivesOnTheParametersDevice) {
  FakeCuda cuda;
  Tensor p = tensor({1.0, 2.0}, kFloat64).to(kCuda1).requires_grad_();
  optim::Adam adam({p}, optim::AdamOptions(0.1));
  p.mutable_grad() = tensor({0.5, -0.5}, kFloat64).to(kCuda1);
  adam.step();
  const auto& state =
      static_cast<const optim::AdamParamState&>(*adam.state().at(p.unsafeGetTensorImpl()));
  EXPECT_EQ(state.exp_avg().device(), kCuda1);
  EXPECT_EQ(state.exp_avg_sq().device(), kCuda1);
  // The first Adam step moves each element by lr against the gradient's sign.
  EXPECT_TRUE(close(p.detach().cpu(), {0.9, 2.1}, 0, 1e-7));
  p.mutable_grad() = tensor({0.5, -0.5}, kFloat64);  // on the CPU: refused, naming both
  EXPECT_GLASS_ERROR(adam.step(), "cuda:1", "cpu");
}

}  // namespace
}  // namespace glass::nn
