// bench/training_step.h — the MLP training step the training benchmarks time, in glass.
//
// One step = zero_grad, forward, cross-entropy loss, backward, optimizer step: the loop body
// of every training script. The model is an MLP (Linear-ReLU-...-Linear) on fixed random
// inputs and labels; its sizes are the benchmark's arguments. bench_training.cpp times it
// alone; libtorch_training.cpp times it beside the same step written against libtorch.
#pragma once

#include <glass/glass.h>

#include <memory>
#include <vector>

#include "nn/functional.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/linear.h"
#include "nn/optim/adam.h"
#include "nn/optim/sgd.h"

namespace bench {

// The benchmarks' model argument: 0 = MLP 64-128-10, 1 = the Fashion-MNIST MLP 784-512-512-10.
inline std::vector<int64_t> mlp_sizes(int64_t model) {
  return model == 0 ? std::vector<int64_t>{64, 128, 10} : std::vector<int64_t>{784, 512, 512, 10};
}

// The cases as {batch, threads, model}: 64-128-10 at batch 64 and 256, the
// Fashion-MNIST MLP at batch 128, each at 1 and 2 threads.
template <class Benchmark>
void mlp_step_args(Benchmark* b) {
  b->ArgNames({"batch", "threads", "model"});
  for (int threads : {1, 2}) {
    b->Args({64, threads, 0});
    b->Args({256, threads, 0});
    b->Args({128, threads, 1});
  }
}

struct GlassMlpStep {
  glass::nn::Sequential model;
  std::unique_ptr<glass::optim::Optimizer> optimizer;
  glass::Tensor x, y;

  // sizes = {in, hidden..., classes}; adam: Adam(1e-3) instead of SGD(0.01, momentum 0.9).
  GlassMlpStep(const std::vector<int64_t>& sizes, int64_t batch, bool adam) {
    glass::manual_seed(0);
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
      model->push_back(glass::nn::Linear(sizes[i], sizes[i + 1]));
      if (i + 2 < sizes.size()) model->push_back(glass::nn::ReLU());
    }
    if (adam) {
      optimizer = std::make_unique<glass::optim::Adam>(model->parameters(),
                                                       glass::optim::AdamOptions(1e-3));
    } else {
      optimizer = std::make_unique<glass::optim::SGD>(model->parameters(),
                                                      glass::optim::SGDOptions(0.01).momentum(0.9));
    }
    x = glass::randn({batch, sizes.front()});
    y = glass::randint(0, sizes.back(), {batch});
  }

  float step() {
    optimizer->zero_grad();
    glass::Tensor loss = glass::nn::functional::cross_entropy(model(x), y);
    loss.backward();
    optimizer->step();
    return loss.item<float>();
  }
};

}  // namespace bench
