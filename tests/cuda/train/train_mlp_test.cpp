// tests/cuda/train/train_mlp_test.cpp — lesson 06's classifier trains on kCUDA as on the CPU.
//
// The reference is the same program on the CPU backend: the same seed makes the same
// initial weights (made on the CPU, then moved with Module::to), the same DataLoader seed
// the same batches, so the two runs differ only in float rounding (the device sums in
// other orders). After training, test accuracy must agree within 0.3 points and the
// parameters closely. The CUDA run uses the path a real program takes: batches pinned by
// the DataLoader and copied with non_blocking, the optimizer made after the move, and a
// checkpoint saved from and loaded back into CUDA tensors. Skips where Debian's
// dataset-fashion-mnist is not installed.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cuda/backend/backend_test_util.h"
#include "cuda/sim/sim_runtime.h"

namespace glass::nn {
namespace {

using data::FashionMNIST;

bool installed() { return std::filesystem::exists(FashionMNIST::kDefaultRoot); }

struct TrainedModel {
  Sequential model;
  double accuracy = 0;    // on the test images
  double first_loss = 0;  // mean training loss of the first and the last epoch
  double last_loss = 0;
};

class TrainOnCuda : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!installed()) return;
    FashionMNIST train, test(FashionMNIST::kDefaultRoot, FashionMNIST::Split::Test);
    // A budget that fits CI: 4000 training images, 2 epochs; 1000 test images.
    train_x_ = new Tensor(((train.images() - 0.2860) / 0.3530).narrow(0, 0, 4000));
    train_y_ = new Tensor(train.labels().narrow(0, 0, 4000));
    test_x_ = new Tensor(((test.images() - 0.2860) / 0.3530).narrow(0, 0, 1000));
    test_y_ = new Tensor(test.labels().narrow(0, 0, 1000));
  }
  static void TearDownTestSuite() {
    for (Tensor* t : {train_x_, train_y_, test_x_, test_y_}) delete t;
  }
  void SetUp() override {
    if (!installed())
      GTEST_SKIP() << FashionMNIST::kDefaultRoot
                   << " is absent (apt-get install dataset-fashion-mnist)";
    cuda::testing::use_simulator_unless_gpu();
  }

  // Lesson 06's MLP (784-64-10 here), trained with Adam on `device`.
  static TrainedModel train(Device device) {
    TrainedModel run;
    manual_seed(0);
    run.model->push_back(Linear(784, 64));
    run.model->push_back(ReLU());
    run.model->push_back(Linear(64, 10));
    run.model->to(device);  // before the optimizer, so its state is made on the device
    optim::Adam adam(run.model->parameters(), optim::AdamOptions(1e-3));
    const bool on_cuda = device.is_cuda();
    data::DataLoader loader(data::TensorDataset(*train_x_, *train_y_),
                            data::DataLoaderOptions(100).shuffle(true).seed(0).pin_memory(on_cuda));
    // On the simulator the timeline shows whether a step made the host wait for the
    // device: a device-to-host copy (item(), a hidden index check) would.
    const bool watch = on_cuda && cuda::is_simulated();
    for (int epoch = 0; epoch < 2; ++epoch) {
      if (watch) cuda::sim::simulator().clear_timeline();
      run.model->train();
      Tensor loss_sum = zeros({}, TensorOptions(kFloat).device(device));
      for (data::Example& batch : loader) {
        if (on_cuda) {
          EXPECT_TRUE(batch.data.is_pinned());
        }
        Tensor x = batch.data.to(device, /*non_blocking=*/true);
        Tensor y = batch.target.to(device, /*non_blocking=*/true);
        adam.zero_grad();
        Tensor loss = functional::cross_entropy(run.model(x), y);
        loss.backward();
        adam.step();
        loss_sum += loss.detach() * x.size(0);  // stays on the device: no sync per step
      }
      if (watch) {
        int64_t to_host = 0;
        for (const cuda::sim::TimelineRecord& r : cuda::sim::simulator().timeline())
          to_host +=
              r.kind == cuda::sim::OpKind::Copy && r.copy_kind == cuda::CopyKind::DeviceToHost;
        EXPECT_EQ(to_host, 0) << "a training step copied from the device to the host";
      }
      const double mean = loss_sum.item<double>() / static_cast<double>(train_x_->size(0));
      (epoch == 0 ? run.first_loss : run.last_loss) = mean;
    }
    run.accuracy = accuracy(run.model, device);
    return run;
  }

  static double accuracy(Sequential& model, Device device) {
    model->eval();
    NoGradGuard no_grad;
    Tensor logits = model(test_x_->to(device));
    Tensor correct = (logits.argmax(1) == test_y_->to(device)).sum();
    return static_cast<double>(correct.item<int64_t>()) / static_cast<double>(test_y_->size(0));
  }

  static Tensor *train_x_, *train_y_, *test_x_, *test_y_;
};
Tensor *TrainOnCuda::train_x_, *TrainOnCuda::train_y_, *TrainOnCuda::test_x_, *TrainOnCuda::test_y_;

TEST_F(TrainOnCuda, SameAccuracyAsTheCpuWithinAThirdOfAPoint) {
  TrainedModel cpu = train(Device(kCPU));
  TrainedModel gpu = train(Device(kCUDA, 0));
  EXPECT_GE(cpu.accuracy, 0.70);  // it learned something (chance is 10%)
  EXPECT_LT(cpu.last_loss, cpu.first_loss);
  EXPECT_NEAR(gpu.accuracy, cpu.accuracy, 0.003);
  EXPECT_NEAR(gpu.first_loss, cpu.first_loss, 1e-4);
  EXPECT_NEAR(gpu.last_loss, cpu.last_loss, 1e-4);

  std::vector<Tensor> pc = cpu.model->parameters(), pg = gpu.model->parameters();
  ASSERT_EQ(pc.size(), pg.size());
  for (size_t i = 0; i < pc.size(); ++i) {
    EXPECT_TRUE(pg[i].is_cuda()) << "parameter " << i << " left the device";
    EXPECT_TRUE(allclose(pg[i].detach().cpu(), pc[i].detach(), 1e-3, 1e-4)) << "parameter " << i;
  }
}

TEST_F(TrainOnCuda, CheckpointSavesFromAndLoadsIntoCudaTensors) {
  TrainedModel gpu = train(Device(kCUDA, 0));
  const std::string path =
      (std::filesystem::temp_directory_path() / "glass_train_on_cuda.safetensors").string();
  save(*gpu.model, path);

  manual_seed(1);  // other weights, on the device
  Sequential fresh;
  fresh->push_back(Linear(784, 64));
  fresh->push_back(ReLU());
  fresh->push_back(Linear(64, 10));
  fresh->to(Device(kCUDA, 0));
  load(*fresh, path);
  std::filesystem::remove(path);

  std::vector<Tensor> a = gpu.model->parameters(), b = fresh->parameters();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(b[i].is_cuda());
    EXPECT_TRUE(equal(a[i].detach().cpu(), b[i].detach().cpu())) << "parameter " << i;
  }
  EXPECT_DOUBLE_EQ(accuracy(fresh, Device(kCUDA, 0)), gpu.accuracy);
}

}  // namespace
}  // namespace glass::nn
