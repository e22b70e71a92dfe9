// tests/distributed/worker/mlp_training.h — lesson 06's MLP and the data both sides of the
// cross-process DDP check use: the worker trains it under DDP, ddp_process_test.cpp trains
// it in one process as the reference.
//
// Invariant: everything here is a function of fixed seeds only (the model's initial
// parameters of manual_seed(0), the batches of a Generator seeded 1234), so two processes
// that call it get the same bits; and a parameter file holds every parameter of
// parameters(), in that order, as raw float32, nothing else.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/generator.h"
#include "core/ops/random.h"
#include "nn/modules/linear.h"

namespace glass::distributed::worker {

// Lesson 06's classifier: 784-512-512-10 (other sizes for tests of mismatched models).
struct MLPImpl : nn::Module {
  explicit MLPImpl(int64_t in = 784, int64_t hidden = 512, int64_t classes = 10) : Module("MLP") {
    fc1 = register_module("fc1", nn::Linear(in, hidden));
    fc2 = register_module("fc2", nn::Linear(hidden, hidden));
    fc3 = register_module("fc3", nn::Linear(hidden, classes));
  }
  Tensor forward(const Tensor& x) const { return fc3(fc2(fc1(x).relu()).relu()); }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
GLASS_MODULE(MLP);

inline constexpr int kTrainSteps = 5;
inline constexpr int64_t kGlobalBatch = 32;
inline constexpr double kLearningRate = 0.05;
inline constexpr double kMomentum = 0.9;

struct Batch {
  Tensor x;  // (kGlobalBatch, 784)
  Tensor y;  // (kGlobalBatch,) class indices
};

// The global batches of every step; rank r of n trains on rows [r B/n, (r + 1) B/n).
inline std::vector<Batch> global_batches() {
  Generator gen = make_generator(Device(kCPU), 1234);
  std::vector<Batch> batches;
  for (int s = 0; s < kTrainSteps; ++s) {
    Tensor x = randn({kGlobalBatch, 784}, gen);
    Tensor y = randint(0, 10, {kGlobalBatch}, gen);
    batches.push_back({x, y});
  }
  return batches;
}

// "<dir>/step<s>_rank<r>.f32"
inline std::string parameter_file(const std::string& dir, int step, int rank) {
  return dir + "/step" + std::to_string(step) + "_rank" + std::to_string(rank) + ".f32";
}

inline void write_parameters(const nn::Module& model, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const Tensor& p : model.parameters()) {
    const Tensor c = p.detach().contiguous();
    out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.nbytes()));
  }
  GLASS_CHECK(out.good(), "write_parameters: could not write ", path);
}

}  // namespace glass::distributed::worker
