// tests/distributed/sharding_reference.h — what the sharding tests (ZeRO, FSDP) compare
// against: a deeper model than lesson 06's MLP, the single-process reference training, the
// optimizers the ranks wrap, and the closeness bound.
//
// Invariant: the reference is one process on every step's global batch (worker/
// mlp_training.h's batches), starting from the parameters the ranks start from.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "distributed/worker/mlp_training.h"
#include "nn/functional/loss.h"
#include "nn/modules/linear.h"
#include "nn/optim/adam.h"
#include "nn/optim/sgd.h"
#include "nn/utils/clip_grad.h"

namespace glass::distributed::testing {

using worker::MLP;

inline constexpr double kAdamLr = 1e-3;

// Ten Linear layers (the issue asks for at least eight), 784 → 64 → … → 10.
struct DeepImpl : nn::Module {
  DeepImpl() : Module("Deep") {
    int64_t in = 784;
    for (int i = 0; i < 10; ++i) {
      const int64_t out = i == 9 ? 10 : 64;
      layers.push_back(register_module("fc" + std::to_string(i), nn::Linear(in, out)));
      in = out;
    }
  }
  Tensor forward(const Tensor& x) const {
    Tensor h = x;
    for (size_t i = 0; i < layers.size(); ++i) {
      h = layers[i](h);
      if (i + 1 < layers.size()) h = h.relu();
    }
    return h;
  }
  std::vector<nn::Linear> layers;
};
GLASS_MODULE(Deep);

inline void copy_params(nn::Module& to, const nn::Module& from) {
  NoGradGuard no_grad;
  auto dst = to.parameters(), src = from.parameters();
  for (size_t i = 0; i < dst.size(); ++i) dst[i].copy_(src[i]);
}

// Every element within rtol 1e-5 and atol 1e-7 (the bound).
inline void expect_close(const Tensor& actual, const Tensor& expected, const std::string& what) {
  const Tensor a = actual.contiguous(), e = expected.contiguous();
  const float* pa = a.data_ptr<float>();
  const float* pe = e.data_ptr<float>();
  int reported = 0;
  for (int64_t i = 0; i < a.numel() && reported < 3; ++i) {
    if (std::fabs(pa[i] - pe[i]) > 1e-7 + 1e-5 * std::fabs(pe[i])) {
      ADD_FAILURE() << what << "[" << i << "]: " << pa[i] << " vs single-process " << pe[i];
      ++reported;
    }
  }
}

inline std::unique_ptr<optim::Optimizer> adam_over(std::vector<Tensor> owned) {
  return std::make_unique<optim::Adam>(std::move(owned), optim::AdamOptions(kAdamLr));
}

// The optimizer a rank wraps (or the reference uses): Adam, or SGD with momentum.
inline std::unique_ptr<optim::Optimizer> make_optimizer(bool adam, std::vector<Tensor> params) {
  if (adam) return adam_over(std::move(params));
  return std::make_unique<optim::SGD>(
      std::move(params), optim::SGDOptions(worker::kLearningRate).momentum(worker::kMomentum));
}

// The single-process reference, on the whole global batch of every step, with the
// optimizer `make` builds over all its parameters.
//
// Adam divides each update by √v, so where a gradient is near zero, float32 noise in it —
// which a different summation order makes (32 rows at once, or two means of 16 averaged) —
// becomes an update difference up to lr · noise / eps, far above 1e-5. With Adam the
// reference therefore forms the global batch's gradient as the ranks do: each rank's
// local-batch gradient, summed in rank order and divided by the world size (the threads
// backend's AVG). The same gradients, bit for bit; what is checked is ZeRO's sharded step.
// With SGD (no division) the reference is the plain global batch. clip > 0: the gradients
// are clipped to that norm before each step.
template <class Model>
void train_reference(Model& reference, const std::vector<worker::Batch>& batches, int world,
                     bool adam, double clip = 0) {
  std::vector<Tensor> params = reference->parameters();
  std::unique_ptr<optim::Optimizer> opt = make_optimizer(adam, params);
  const int64_t local = worker::kGlobalBatch / world;
  for (const worker::Batch& b : batches) {
    opt->zero_grad();
    if (!adam) {
      nn::functional::cross_entropy(reference(b.x), b.y).backward();
    } else {
      std::vector<Tensor> sum(params.size());
      for (int r = 0; r < world; ++r) {
        for (Tensor& p : params) p.mutable_grad() = Tensor();
        Tensor x = b.x.narrow(0, r * local, local), y = b.y.narrow(0, r * local, local);
        nn::functional::cross_entropy(reference(x), y).backward();
        NoGradGuard no_grad;
        for (size_t i = 0; i < params.size(); ++i)
          sum[i] = r == 0 ? params[i].grad().clone() : sum[i].add_(params[i].grad());
      }
      NoGradGuard no_grad;
      for (size_t i = 0; i < params.size(); ++i)
        params[i].mutable_grad() = sum[i].div_(static_cast<int64_t>(world));
    }
    if (clip > 0) nn::utils::clip_grad_norm_(params, clip);
    opt->step();
  }
}

// The reference and the ranks' starting point: `initial` holds the parameters every
// rank starts from (rank 0's; the others are copied from it), `reference` those after one
// process trained on the global batches (train_reference).
template <class Model>
struct Reference {
  Model initial;
  Model trained;
};
template <class Model>
Reference<Model> make_reference(const std::vector<worker::Batch>& batches, int world, bool adam,
                                double clip = 0) {
  manual_seed(0);
  Reference<Model> r;
  copy_params(*r.initial, *r.trained);
  train_reference(r.trained, batches, world, adam, clip);
  return r;
}

}  // namespace glass::distributed::testing
