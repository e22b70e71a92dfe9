// lessons/06_training/exercises/exercises_test.cpp — grades lesson 06's exercises: the
// accuracy metric on hand-made logits (ties included), the hand-written SGD step against
// glass::optim::SGD step by step, and the training loop against a reference loop, by its
// returned mean, and by training a real classifier on Fashion-MNIST (skipped where Debian's
// dataset-fashion-mnist is not installed). Built against solution.cpp or student.cpp
// (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "../../common/answer_symbols.h"
#include "exercises.h"
#include "wrong_answers.h"

namespace glass::lesson06 {
namespace {

namespace F = nn::functional;

// ---- helpers ---------------------------------------------------------------------------

// The number of graph nodes recorded while `work` runs (lesson 04's events channel).
int nodes_recorded(const std::function<void()>& work) {
  int count = 0;
  events::Subscription watch(
      [&](const events::Event& e) { count += e.kind == events::Kind::GraphNodeCreated; });
  work();
  return count;
}

double max_diff(const Tensor& a, const Tensor& b) {
  return (a.detach().to(kDouble) - b.detach().to(kDouble)).abs().max().item<double>();
}

// A small MLP whose layers draw their starting values in order after manual_seed(seed),
// so that two calls with one seed give two identical, independent models.
nn::Sequential small_mlp(int64_t in, int64_t hidden, int64_t classes, uint64_t seed) {
  manual_seed(seed);
  nn::Sequential model;
  model->push_back(nn::Linear(in, hidden));
  model->push_back(nn::ReLU());
  model->push_back(nn::Linear(hidden, classes));
  return model;
}

// ---- exercise 1 ------------------------------------------------------------------------

TEST(Exercise1Accuracy, HandMadeLogits) {
  // Row by row: argmax 0 (label 0, right), 1 (label 1, right), 2 (label 0, wrong),
  // 0 (label 2, wrong): 2 of 4.
  Tensor logits = tensor({{2.0, 1.0, 0.0}, {0.0, 3.0, 1.0}, {1.0, 0.0, 5.0}, {0.5, 0.2, 0.1}});
  EXPECT_DOUBLE_EQ(accuracy(logits, tensor({int64_t{0}, 1, 0, 2})), 0.5);
  EXPECT_DOUBLE_EQ(accuracy(logits, tensor({int64_t{0}, 1, 2, 0})), 1.0);
  EXPECT_DOUBLE_EQ(accuracy(logits, tensor({int64_t{1}, 2, 0, 1})), 0.0);
  // One example, negative scores: the largest is the least negative.
  EXPECT_DOUBLE_EQ(accuracy(tensor({{-3.0, -0.5, -2.0}}), tensor({int64_t{1}})), 1.0);
}

TEST(Exercise1Accuracy, TiesGoToTheLowestIndex) {
  Tensor two_way = tensor({{1.0, 1.0, 0.0}});  // 0 and 1 tie: the prediction is 0
  EXPECT_DOUBLE_EQ(accuracy(two_way, tensor({int64_t{0}})), 1.0);
  EXPECT_DOUBLE_EQ(accuracy(two_way, tensor({int64_t{1}})), 0.0)
      << "a tie is not a hit for every tied class";
  Tensor late_tie = tensor({{0.0, 2.0, 2.0, 1.0}});  // 1 and 2 tie: the prediction is 1
  EXPECT_DOUBLE_EQ(accuracy(late_tie, tensor({int64_t{1}})), 1.0);
  EXPECT_DOUBLE_EQ(accuracy(late_tie, tensor({int64_t{2}})), 0.0);
  Tensor all_equal = tensor({{3.0, 3.0, 3.0}, {3.0, 3.0, 3.0}});  // both predict 0
  EXPECT_DOUBLE_EQ(accuracy(all_equal, tensor({int64_t{0}, 2})), 0.5);
}

TEST(Exercise1Accuracy, AnyStridesMatchesARowByRowCount) {
  manual_seed(1);
  Tensor scores = randn({7, 50});  // (C, N): stored class-major
  Tensor logits = scores.t();      // (N, C), a view with strides [1, 50]
  Tensor labels = randint(0, 7, {50});
  // The expected count, with plain loops over a contiguous copy.
  Tensor c = logits.contiguous();
  int64_t correct = 0;
  for (int64_t n = 0; n < 50; ++n) {
    const float* row = c.data_ptr<float>() + n * 7;
    int64_t best = 0;
    for (int64_t k = 1; k < 7; ++k)
      if (row[k] > row[best]) best = k;
    correct += best == labels.data_ptr<int64_t>()[n];
  }
  EXPECT_DOUBLE_EQ(accuracy(logits, labels), static_cast<double>(correct) / 50);
  // Float64 logits too.
  EXPECT_DOUBLE_EQ(accuracy(logits.to(kDouble), labels), static_cast<double>(correct) / 50);
}

TEST(Exercise1Accuracy, RecordsNoGraphAndChecksShapes) {
  Tensor w = tensor({{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}}).requires_grad_();  // (3 classes, 2)
  Tensor x = tensor({{2.0, 0.0}, {0.0, 3.0}, {1.0, 0.5}});                   // (3, 2)
  Tensor logits = x.mm(w.t());  // (3, 3), requires grad: a model's output in training
  double acc = 0;
  // Row 0 scores [2, 0, 2] (tie: 0), row 1 [0, 3, 3] (tie: 1), row 2 [1, 0.5, 1.5] (2).
  EXPECT_EQ(nodes_recorded([&] {
              acc = accuracy(logits, tensor({int64_t{0}, 1, 2}));
            }),
            0)
      << "accuracy is a measurement: compute it under NoGradGuard";
  EXPECT_DOUBLE_EQ(acc, 1.0);
  EXPECT_THROW(accuracy(tensor({1.0, 2.0}), tensor({int64_t{1}})), Error) << "1-D logits";
  EXPECT_THROW(accuracy(tensor({{1.0, 2.0}}), tensor({int64_t{1}, 0})), Error)
      << "2 labels for 1 row";
}

// ---- exercise 2 ------------------------------------------------------------------------

// Fresh gradients for `params` from one backward of `loss_fn()`.
void fresh_backward(const std::vector<Tensor>& params, const std::function<Tensor()>& loss_fn) {
  for (const Tensor& p : params) p.mutable_grad() = Tensor();
  loss_fn().backward();
}

TEST(Exercise2SgdMomentum, HandWorkedExample) {
  // L = sum(p * [1, 0.5]): the gradient is [1, 0.5] at every step. lr 0.1, momentum 0.9:
  //   buf = [1, 0.5]       p = [1, -2] - 0.1 buf = [0.9, -2.05]
  //   buf = [1.9, 0.95]    p = [0.71, -2.145]
  //   buf = [2.71, 1.355]  p = [0.439, -2.2805]
  Tensor p = tensor({1.0, -2.0}, kDouble).requires_grad_();
  std::vector<Tensor> params{p}, buffers(1);
  const std::vector<std::vector<double>> want = {{0.9, -2.05}, {0.71, -2.145}, {0.439, -2.2805}};
  for (const auto& expected : want) {
    fresh_backward(params, [&] { return (p * tensor({1.0, 0.5}, kDouble)).sum(); });
    sgd_momentum_step(params, buffers, 0.1, 0.9);
    EXPECT_LT(max_diff(p, tensor(std::vector<double>(expected), kDouble)), 1e-12) << p;
  }
  ASSERT_TRUE(buffers[0].defined());
  EXPECT_LT(max_diff(buffers[0], tensor({2.71, 1.355}, kDouble)), 1e-12) << buffers[0];
}

// Trains two identical MLPs side by side on the same random batches, one with optim::SGD
// and one with sgd_momentum_step, and compares every parameter after every step.
void compare_with_optim_sgd(double lr, double momentum, double weight_decay, bool set_to_none) {
  nn::Sequential reference = small_mlp(5, 8, 3, 11), mine = small_mlp(5, 8, 3, 11);
  optim::SGD sgd(reference->parameters(),
                 optim::SGDOptions(lr).momentum(momentum).weight_decay(weight_decay));
  std::vector<Tensor> params = mine->parameters(), buffers(params.size());
  manual_seed(12);
  for (int step = 1; step <= 6; ++step) {
    Tensor x = randn({16, 5}), y = randint(0, 3, {16});
    sgd.zero_grad(set_to_none);
    F::cross_entropy(reference(x), y).backward();
    sgd.step();
    mine->zero_grad(set_to_none);
    F::cross_entropy(mine(x), y).backward();
    sgd_momentum_step(params, buffers, lr, momentum, weight_decay);
    std::vector<Tensor> want = reference->parameters();
    for (size_t i = 0; i < params.size(); ++i)
      ASSERT_LT(max_diff(params[i], want[i]), 1e-6)
          << "parameter " << i << " after step " << step << " (lr " << lr << ", momentum "
          << momentum << ", weight_decay " << weight_decay << ")";
  }
}

TEST(Exercise2SgdMomentum, MatchesOptimSgdOverSeveralSteps) {
  compare_with_optim_sgd(0.05, 0.9, 0.0, true);
  compare_with_optim_sgd(0.1, 0.5, 0.01, true);  // with weight decay
  compare_with_optim_sgd(0.1, 0.0, 0.0, true);   // momentum 0: plain SGD
}

TEST(Exercise2SgdMomentum, BufferIsACopyNotTheGradientItself) {
  // zero_grad(false) zeroes .grad() in place and the next backward adds into that same
  // tensor. A buffer that *is* the gradient tensor would be wiped and overwritten with it.
  compare_with_optim_sgd(0.05, 0.9, 0.0, /*set_to_none=*/false);
}

TEST(Exercise2SgdMomentum, SkipsParametersWithoutAGradient) {
  Tensor used = tensor({1.0, 2.0}).requires_grad_(), unused = tensor({3.0}).requires_grad_();
  std::vector<Tensor> params{used, unused}, buffers(2);
  fresh_backward(params, [&] { return (used * used).sum(); });  // grad 2 * used = [2, 4]
  sgd_momentum_step(params, buffers, 0.5, 0.9);
  EXPECT_LT(max_diff(used, tensor({0.0, 0.0})), 1e-7) << used;
  EXPECT_EQ(unused.item<float>(), 3.0f) << "a parameter with no gradient must not move";
  EXPECT_TRUE(buffers[0].defined());
  EXPECT_FALSE(buffers[1].defined()) << "no gradient, no momentum buffer";
}

TEST(Exercise2SgdMomentum, UpdatesInPlaceWithoutRecordingAGraph) {
  nn::Sequential model = small_mlp(4, 6, 2, 3);
  std::vector<Tensor> params = model->parameters(), buffers(params.size());
  const Tensor weight = params[0];
  const void* storage = weight.data_ptr();
  const uint32_t version = weight._version();
  Tensor before = weight.detach().clone();
  manual_seed(4);
  Tensor x = randn({8, 4}), y = randint(0, 2, {8});
  fresh_backward(params, [&] { return F::cross_entropy(model(x), y); });
  EXPECT_EQ(nodes_recorded([&] { sgd_momentum_step(params, buffers, 0.1, 0.9, 0.01); }), 0)
      << "run the update under NoGradGuard";
  EXPECT_GT(max_diff(weight, before), 0) << "the model's own weight did not change";
  EXPECT_EQ(weight.data_ptr(), storage) << "update p in place (p.sub_), not by assignment";
  EXPECT_GT(weight._version(), version);
  EXPECT_TRUE(weight.requires_grad());
  EXPECT_EQ(weight.grad_fn(), nullptr) << "the parameter must stay a leaf";
  // The model still trains: another forward and backward reach the same parameters.
  fresh_backward(params, [&] { return F::cross_entropy(model(x), y); });
  EXPECT_TRUE(weight.grad().defined());
}

// ---- exercise 3 ------------------------------------------------------------------------

TEST(Exercise3TrainOneEpoch, ReturnsTheMeanLossPerExample) {
  // lr 0: the parameters never move, so the epoch's mean loss is the loss of the whole
  // dataset at once. 10 examples in batches of 3 (3, 3, 3, 1): the mean of the four batch
  // means would weigh the last example three times too much.
  nn::Sequential model = small_mlp(4, 6, 3, 5);
  manual_seed(6);
  Tensor x = randn({10, 4}) * 3, y = randint(0, 3, {10});
  data::DataLoader loader(data::TensorDataset(x, y), data::DataLoaderOptions(3));
  optim::SGD frozen(model->parameters(), optim::SGDOptions(0.0));
  const double got = train_one_epoch(model, loader, frozen);
  double want = 0;
  {
    NoGradGuard no_grad;
    want = F::cross_entropy(model(x), y).item<double>();
  }
  EXPECT_NEAR(got, want, 1e-5);
  EXPECT_EQ(loader.epoch(), 1u) << "train_one_epoch must run exactly one epoch of the loader";
}

TEST(Exercise3TrainOneEpoch, MatchesTheReferenceLoop) {
  // The same model, data, shuffle and optimizer, trained by your function and by the
  // loop of README section 7: the parameters must agree after each of two epochs.
  nn::Sequential reference = small_mlp(4, 6, 3, 8), mine = small_mlp(4, 6, 3, 8);
  manual_seed(9);
  Tensor x = randn({40, 4}), y = randint(0, 3, {40});
  auto options = data::DataLoaderOptions(8).shuffle(true).seed(3);
  data::DataLoader ref_loader(data::TensorDataset(x, y), options),
      my_loader(data::TensorDataset(x, y), options);
  optim::Adam ref_adam(reference->parameters(), optim::AdamOptions(0.01)),
      my_adam(mine->parameters(), optim::AdamOptions(0.01));
  for (int epoch = 1; epoch <= 2; ++epoch) {
    double ref_sum = 0;
    for (data::Example& batch : ref_loader) {
      ref_adam.zero_grad();
      Tensor loss = F::cross_entropy(reference(batch.data), batch.target);
      loss.backward();
      ref_adam.step();
      ref_sum += loss.item<double>() * static_cast<double>(batch.data.size(0));
    }
    const double got = train_one_epoch(mine, my_loader, my_adam);
    EXPECT_NEAR(got, ref_sum / 40, 1e-6) << "epoch " << epoch;
    std::vector<Tensor> want = reference->parameters(), have = mine->parameters();
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_LT(max_diff(have[i], want[i]), 1e-6)
          << "parameter " << i << " after epoch " << epoch
          << " (zero_grad every batch, then forward, loss, backward, step)";
  }
  // One Adam update per batch: 40 / 8 = 5 per epoch.
  for (const Tensor& p : mine->parameters()) {
    auto* state =
        dynamic_cast<optim::AdamParamState*>(my_adam.state().at(p.unsafeGetTensorImpl()).get());
    ASSERT_NE(state, nullptr);
    EXPECT_EQ(state->step(), 10) << "optimizer.step() should run once per batch";
  }
}

TEST(Exercise3TrainOneEpoch, PutsTheModelInTrainingMode) {
  nn::Sequential model = small_mlp(4, 6, 3, 10);
  model->eval();
  manual_seed(10);
  data::DataLoader loader(data::TensorDataset(randn({6, 4}), randint(0, 3, {6})),
                          data::DataLoaderOptions(3));
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.01));
  train_one_epoch(model, loader, sgd);
  EXPECT_TRUE(model->is_training()) << "call model->train() first (a Dropout layer would care)";
  for (const auto& child : model->children()) EXPECT_TRUE(child->is_training());
}

TEST(Exercise3TrainOneEpoch, LearnsFashionMnist) {
  using data::FashionMNIST;
  if (!std::filesystem::exists(FashionMNIST::kDefaultRoot))
    GTEST_SKIP() << FashionMNIST::kDefaultRoot
                 << " is absent (apt-get install dataset-fashion-mnist)";
  FashionMNIST train, test(FashionMNIST::kDefaultRoot, FashionMNIST::Split::Test);
  auto normalize = [](const Tensor& images) { return (images - 0.2860) / 0.3530; };
  // The first 6000 training images, 2 epochs of an MLP 784-64-10: about 190 Adam steps.
  data::DataLoader loader(data::TensorDataset(normalize(train.images().narrow(0, 0, 6000)),
                                              train.labels().narrow(0, 0, 6000)),
                          data::DataLoaderOptions(64).shuffle(true).seed(0));
  nn::Sequential model = small_mlp(784, 64, 10, 0);
  optim::Adam adam(model->parameters(), optim::AdamOptions(1e-3));
  const double first = train_one_epoch(model, loader, adam);
  const double second = train_one_epoch(model, loader, adam);
  EXPECT_LT(second, first) << "the mean loss should fall from epoch 1 to epoch 2";
  EXPECT_LT(first, 1.5) << "an epoch's mean loss starts near ln(10) = 2.30 and must fall";

  // Accuracy on the first 1000 test images, measured here (not with exercise 1).
  model->eval();
  NoGradGuard no_grad;
  Tensor logits = model(normalize(test.images().narrow(0, 0, 1000)));
  const int64_t correct =
      (logits.argmax(1) == test.labels().narrow(0, 0, 1000)).sum().item<int64_t>();
  EXPECT_GE(correct, 750) << "test accuracy " << correct / 10.0
                          << "% after 2 epochs (chance is 10%)";
}

// ---- the bans: what the compiled answers call ---------------------------------------------

const std::vector<std::string> kBans1 = {"glass::Tensor::argmax(",
                                         "glass::Tensor::argmin(",
                                         "glass::Tensor::max(long",
                                         "glass::Tensor::min(long",
                                         "glass::argmax(",
                                         "glass::argmin(",
                                         "glass::max(glass::Tensor const&, long",
                                         "glass::min(glass::Tensor const&, long",
                                         "glass::ops::max_dim"};
const std::vector<std::string> kBans2 = {"glass::optim::"};

// "" or "exercise N must not call X. " for each banned call the exercise's function in
// `object` makes, itself or through its helpers and lambdas.
std::string banned_calls(const std::string& object, const std::string& ns) {
  return lessons::exercise_calls_banned(object, 1, ns + "accuracy(", kBans1) +
         lessons::exercise_calls_banned(object, 2, ns + "sgd_momentum_step(", kBans2);
}

TEST(Lesson06Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(banned_calls(GLASS_LESSON06_ANSWERS_OBJECT, "glass::lesson06::"), "")
      << GLASS_LESSON06_ANSWERS_OBJECT;
}

TEST(Lesson06Bans, TheSymbolCheckCatchesEachBannedCall) {
  using lessons::exercise_calls_banned;
  const std::string object = GLASS_LESSON06_WRONG_OBJECT;
  const std::string wrong = "glass::lesson06::wrong::";
  const std::string argmax =
      exercise_calls_banned(object, 1, wrong + "accuracy_by_argmax(", kBans1);
  EXPECT_TRUE(argmax.starts_with("exercise 1 must not call glass::Tensor::argmax(")) << argmax;
  const std::string max = exercise_calls_banned(object, 1, wrong + "accuracy_by_max_dim(", kBans1);
  EXPECT_TRUE(max.starts_with("exercise 1 must not call glass::Tensor::max(long")) << max;
  const std::string sgd =
      exercise_calls_banned(object, 2, wrong + "sgd_momentum_step_by_optim(", kBans2);
  EXPECT_NE(sgd.find("exercise 2 must not call glass::optim::SGD::"), std::string::npos) << sgd;
  // The wrong accuracies are right: only the symbol check tells them apart.
  Tensor logits = tensor({{1.0, 1.0, 0.0}, {0.0, 2.0, 2.0}});
  EXPECT_DOUBLE_EQ(wrong::accuracy_by_argmax(logits, tensor({int64_t{0}, 1})), 1.0);
  EXPECT_DOUBLE_EQ(wrong::accuracy_by_max_dim(logits, tensor({int64_t{0}, 1})), 1.0);
}

}  // namespace
}  // namespace glass::lesson06
