// viewer/app/training.h — lesson 06's training loop, one step at a time, for the app.
//
// The Fashion-MNIST MLP 784-512-512-10 with Adam (lr 1e-3), as lessons/06_training trains
// it, but driven by the UI: step() runs one minibatch (zero_grad, forward, cross-entropy,
// backward under a GradientRecorder, optimizer step) and returns the backward graph's
// snapshot with gradient statistics, so the graph panel is rebuilt every step. Batches are
// drawn from a seeded generator, so a run is reproducible. Owns the model and optimizer.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "viewer/snapshot.h"

namespace glass::viz::app {

struct TrainerOptions {
  std::string root = "/usr/share/datasets/fashion-mnist";
  int64_t batch_size = 64;
  int64_t train_limit = 0;  // use only the first N training images (0: all)
  int64_t eval_size = 512;  // test images for the accuracy curve
  uint64_t seed = 0;
};

struct StepResult {
  double loss = 0;
  Tensor loss_tensor;  // the same loss, detached (0-dim): what the inspector shows
  double batch_accuracy = 0;
  Snapshot graph;  // the step's backward graph, with gradient statistics
};

class Trainer {
 public:
  // Loads the data (a glass::Error naming the directory when it is missing).
  explicit Trainer(const TrainerOptions& options = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  StepResult step();
  // Accuracy on the first eval_size test images (no grad).
  double evaluate();
  int64_t steps() const { return steps_; }

  const std::vector<double>& losses() const { return losses_; }
  const std::vector<double>& accuracies() const { return accuracies_; }  // one per evaluate()
  std::vector<std::pair<std::string, Tensor>> parameters() const;

  // A few fixed test images (28x28 float, [0, 1]) with the model's current predictions.
  struct Sample {
    Tensor image;  // (784)
    int64_t label = 0, predicted = 0;
  };
  std::vector<Sample> samples(int64_t count = 8);
  static const std::array<std::string, 10>& class_names();

 private:
  struct State;
  std::unique_ptr<State> state_;
  int64_t steps_ = 0;
  std::vector<double> losses_, accuracies_;
};

}  // namespace glass::viz::app
