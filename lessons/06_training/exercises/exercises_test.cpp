// lessons/06_training/exercises/exercises_test.cpp — grades lesson 06's exercises: the
// accuracy metric on hand-made logits (ties included), the hand-written SGD step against
// glass::optim::SGD step by step, and the training loop against a reference loop, by its
// returned mean, and by training a real classifier on Fashion-MNIST (skipped where Debian's
// dataset-fashion-mnist is not installed); the learning-rate schedule against hand-computed
// values and the clipped step against nn::utils::clip_grad_norm_ and a plain SGD step. Built
// against solution.cpp or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "../../common/answer_symbols.h"
#include "exercises.h"
#include "nn/utils/clip_grad.h"
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

// ---- exercise 4 ------------------------------------------------------------------------

using LrFunction = std::function<double(int64_t, const Schedule&)>;
using StepFunction =
    std::function<double(const std::vector<Tensor>&, double, int64_t, const Schedule&)>;

// "" or, for the first value of `lr_of` that is not the hand-computed one, what differs.
// The numbers were worked out on paper from the formula in exercises.h (cos(pi/4) = sqrt(2)/2,
// cos(pi/3) = 1/2), not by running it.
std::string lr_mismatch(const LrFunction& lr_of) {
  const Schedule usual{.lr = 0.1, .warmup = 4, .total = 12, .min_lr = 0.01};
  const Schedule no_warmup{.lr = 1.0, .warmup = 0, .total = 3, .min_lr = 0.0};
  const Schedule one_step_warmup{.lr = 3e-4, .warmup = 1, .total = 2, .min_lr = 3e-5};
  struct Case {
    const Schedule& schedule;
    int64_t step;
    double want;
    const char* why;
  };
  const Case cases[] = {
      {usual, 0, 0.025, "warmup: the first step takes 1/4 of the peak, not 0"},
      {usual, 1, 0.05, "warmup: 2/4 of the peak"},
      {usual, 3, 0.1, "the warmup's last step reaches the peak"},
      {usual, 4, 0.1, "t = 0: the decay starts from the peak"},
      {usual, 6, 0.08681980515339464, "t = 1/4: 0.01 + 0.09 (1 + sqrt(2)/2) / 2"},
      {usual, 8, 0.055, "t = 1/2: halfway from 0.1 to 0.01"},
      {usual, 10, 0.02318019484660536, "t = 3/4: 0.01 + 0.09 (1 - sqrt(2)/2) / 2"},
      {usual, 12, 0.01, "step total: min_lr"},
      {usual, 1000, 0.01, "after total: min_lr"},
      {no_warmup, 0, 1.0, "warmup 0: the peak at once"},
      {no_warmup, 1, 0.75, "t = 1/3: (1 + 1/2) / 2"},
      {no_warmup, 2, 0.25, "t = 2/3: (1 - 1/2) / 2"},
      {no_warmup, 3, 0.0, "step total: min_lr"},
      {one_step_warmup, 0, 3e-4, "warmup 1: its one step is at the peak already"},
      {one_step_warmup, 1, 3e-4, "t = 0 again"},
      {one_step_warmup, 2, 3e-5, "step total: min_lr"},
  };
  for (const Case& c : cases) {
    const double got = lr_of(c.step, c.schedule);
    if (!(std::abs(got - c.want) <= 1e-12)) {
      std::ostringstream out;
      out.precision(15);
      out << "scheduled_lr(step " << c.step << ", lr " << c.schedule.lr << ", warmup "
          << c.schedule.warmup << ", total " << c.schedule.total << ", min_lr " << c.schedule.min_lr
          << ") = " << got << ", want " << c.want << " (" << c.why << ")";
      return out.str();
    }
  }
  return "";
}

// The learning rate the reference step uses: the formula of exercises.h, written here again.
double reference_lr(int64_t step, const Schedule& s) {
  if (step < s.warmup) return s.lr * static_cast<double>(step + 1) / static_cast<double>(s.warmup);
  if (step >= s.total) return s.min_lr;
  const double t = static_cast<double>(step - s.warmup) / static_cast<double>(s.total - s.warmup);
  return s.min_lr + (s.lr - s.min_lr) * (1 + std::cos(std::numbers::pi * t)) / 2;
}

// Parameters of several shapes and two dtypes, drawn after manual_seed(seed): the last one,
// (2, 2), never gets a gradient.
std::vector<Tensor> several_parameters(uint64_t seed) {
  manual_seed(seed);
  return {randn({4, 3}).requires_grad_(),
          randn({3}).requires_grad_(),
          randn({}).requires_grad_(),
          randn({2, 3, 2}).requires_grad_(),
          randn({5}).to(kDouble).requires_grad_(),
          randn({2, 2}).requires_grad_()};
}

// "" or the first way `step_fn` differs from the reference — nn::utils::clip_grad_norm_, then
// p -= lr * grad with the schedule's lr — over steps 0 to 9 of a schedule with warmup 3 and
// total 8 (so crossing both boundaries), max_norm 1, with gradients whose global norm is set
// to go above and below 1 in turn. The two copies of the parameters get the same gradients.
std::string step_mismatch(const StepFunction& step_fn) {
  const Schedule schedule{.lr = 0.1, .warmup = 3, .total = 8, .min_lr = 0.01};
  const double max_norm = 1.0;
  const double norms[] = {5.0, 0.3, 2.0, 0.5, 10.0, 0.2, 1.5, 0.8, 3.0, 0.1};
  std::vector<Tensor> reference = several_parameters(21), mine = several_parameters(21);
  const size_t with_grad = reference.size() - 1;
  manual_seed(22);
  for (int64_t step = 0; step < 10; ++step) {
    // Random gradients, scaled so that all of them as one vector have norm norms[step].
    std::vector<Tensor> grads;
    double squares = 0;
    for (size_t i = 0; i < with_grad; ++i) {
      grads.push_back(randn(reference[i].sizes()).to(reference[i].dtype()));
      squares += (grads[i].to(kDouble) * grads[i].to(kDouble)).sum().item<double>();
    }
    for (size_t i = 0; i < with_grad; ++i) {
      Tensor g = grads[i] * (norms[step] / std::sqrt(squares));
      reference[i].mutable_grad() = g.clone();
      mine[i].mutable_grad() = g.clone();
    }
    const double want_norm = nn::utils::clip_grad_norm_(reference, max_norm);
    {
      NoGradGuard no_grad;
      for (size_t i = 0; i < with_grad; ++i)
        reference[i].sub_(reference[i].grad(), reference_lr(step, schedule));
    }
    const double norm = step_fn(mine, max_norm, step, schedule);
    std::ostringstream out;
    out << "step " << step << " (lr " << reference_lr(step, schedule) << ", gradient norm "
        << norms[step] << (norms[step] > max_norm ? ", clipped to " : ", under ") << max_norm
        << "): ";
    if (!(std::abs(norm - want_norm) <= 1e-5 * want_norm))
      return out.str() + "returned " + std::to_string(norm) + ", want the norm before clipping, " +
             std::to_string(want_norm);
    for (size_t i = 0; i < with_grad; ++i)
      if (!mine[i].grad().defined() || max_diff(mine[i].grad(), reference[i].grad()) > 1e-6)
        return out.str() + "gradient " + std::to_string(i) +
               " is not what clip_grad_norm_ leaves (one factor for all gradients, when the "
               "global norm is over max_norm)";
    for (size_t i = 0; i < with_grad; ++i)
      if (const double diff = max_diff(mine[i], reference[i]); diff > 1e-5) {
        out << "parameter " << i << " (sizes " << reference[i].sizes()
            << ") differs from the reference by " << diff;
        return out.str();
      }
    if (mine.back().grad().defined() || max_diff(mine.back(), reference.back()) != 0)
      return out.str() + "the parameter without a gradient moved or got one";
  }
  return "";
}

TEST(Exercise4ClippedScheduledSgd, TheScheduleAtHandComputedSteps) {
  EXPECT_EQ(lr_mismatch(scheduled_lr), "");
}

TEST(Exercise4ClippedScheduledSgd, TheScheduleChecksItsArguments) {
  const Schedule usual{.lr = 0.1, .warmup = 4, .total = 12, .min_lr = 0.01};
  EXPECT_DOUBLE_EQ(scheduled_lr(0, usual), 0.025) << "a valid schedule does not throw";
  EXPECT_THROW(scheduled_lr(-1, usual), Error) << "a negative step";
  EXPECT_THROW(scheduled_lr(0, Schedule{.lr = 0.1, .warmup = 4, .total = 4, .min_lr = 0}), Error)
      << "total == warmup: no decay to divide by";
  EXPECT_THROW(scheduled_lr(0, Schedule{.lr = 0.1, .warmup = 5, .total = 4, .min_lr = 0}), Error)
      << "total < warmup";
  EXPECT_THROW(scheduled_lr(0, Schedule{.lr = 0.1, .warmup = -1, .total = 4, .min_lr = 0}), Error)
      << "a negative warmup";
}

TEST(Exercise4ClippedScheduledSgd, HandWorkedExample) {
  // Two parameters whose gradients, [3] and [4], have global norm 5: over max_norm 1 they
  // become [0.6] and [0.8] (each gradient alone is over 1 too, but clipping each by its own
  // norm would give [1] and [1]). Step 8 of the usual schedule: lr 0.055.
  const Schedule usual{.lr = 0.1, .warmup = 4, .total = 12, .min_lr = 0.01};
  Tensor a = tensor({1.0}, kDouble).requires_grad_(), b = tensor({2.0}, kDouble).requires_grad_();
  a.mutable_grad() = tensor({3.0}, kDouble);
  b.mutable_grad() = tensor({4.0}, kDouble);
  EXPECT_NEAR(clipped_scheduled_sgd_step({a, b}, 1.0, 8, usual), 5.0, 1e-12);
  EXPECT_NEAR(a.grad().item<double>(), 0.6, 1e-6);
  EXPECT_NEAR(b.grad().item<double>(), 0.8, 1e-6);
  EXPECT_NEAR(a.item<double>(), 1 - 0.055 * 0.6, 1e-7);  // 0.967
  EXPECT_NEAR(b.item<double>(), 2 - 0.055 * 0.8, 1e-7);  // 1.956
  // Under the bound only the schedule acts: gradient [0.3, 0.4] (norm 0.5), step 0: lr 0.025.
  Tensor c = tensor({1.0, 2.0}, kDouble).requires_grad_();
  c.mutable_grad() = tensor({0.3, 0.4}, kDouble);
  EXPECT_NEAR(clipped_scheduled_sgd_step({c}, 1.0, 0, usual), 0.5, 1e-12);
  EXPECT_LT(max_diff(c.grad(), tensor({0.3, 0.4}, kDouble)), 1e-15) << "no clipping under 1";
  EXPECT_LT(max_diff(c, tensor({0.9925, 1.99}, kDouble)), 1e-12) << c;
}

TEST(Exercise4ClippedScheduledSgd, MatchesClipGradNormAndSgdAcrossTheSchedule) {
  EXPECT_EQ(step_mismatch(clipped_scheduled_sgd_step), "");
}

TEST(Exercise4ClippedScheduledSgd, UpdatesInPlaceWithoutRecordingAGraph) {
  nn::Sequential model = small_mlp(4, 6, 2, 13);
  std::vector<Tensor> params = model->parameters();
  const Tensor weight = params[0];
  const void* storage = weight.data_ptr();
  const uint32_t version = weight._version();
  Tensor before = weight.detach().clone();
  manual_seed(14);
  Tensor x = randn({8, 4}) * 10, y = randint(0, 2, {8});  // * 10: gradients worth clipping
  fresh_backward(params, [&] { return F::cross_entropy(model(x), y); });
  const Schedule schedule{.lr = 0.1, .warmup = 2, .total = 10, .min_lr = 0};
  EXPECT_EQ(nodes_recorded([&] { clipped_scheduled_sgd_step(params, 0.1, 3, schedule); }), 0)
      << "clip and update under NoGradGuard";
  EXPECT_GT(max_diff(weight, before), 0) << "the model's own weight did not change";
  EXPECT_EQ(weight.data_ptr(), storage) << "update p in place (p.sub_), not by assignment";
  EXPECT_GT(weight._version(), version);
  EXPECT_TRUE(weight.requires_grad());
  EXPECT_EQ(weight.grad_fn(), nullptr) << "the parameter must stay a leaf";
  fresh_backward(params, [&] { return F::cross_entropy(model(x), y); });
  EXPECT_TRUE(weight.grad().defined()) << "the model still trains";
}

// The grader's own checks: each wrong answer of wrong_answers.h fails it, at the place its
// mistake shows (not counted as exercise 4's: they test the tests, not your code).
TEST(Exercise4ClippedScheduledSgd, TheGraderRejectsAWarmupOffByOne) {
  const std::string lr = lr_mismatch(wrong::scheduled_lr_warmup_off_by_one);
  EXPECT_TRUE(lr.starts_with("scheduled_lr(step 0,")) << lr;
  const std::string step = step_mismatch(wrong::step_warmup_off_by_one);
  EXPECT_TRUE(step.starts_with("step 0 ") && step.find("parameter 0") != std::string::npos) << step;
}

TEST(Exercise4ClippedScheduledSgd, TheGraderRejectsClippingEachParameterByItsOwnNorm) {
  const std::string why = step_mismatch(wrong::step_clipping_each_parameter);
  EXPECT_TRUE(why.starts_with("step 0 ") && why.find("gradient 0 is not") != std::string::npos)
      << why;
}

TEST(Exercise4ClippedScheduledSgd, TheGraderRejectsClippingAfterTheUpdate) {
  const std::string why = step_mismatch(wrong::step_clipping_after_the_update);
  EXPECT_TRUE(why.starts_with("step 0 ") && why.find("parameter 0") != std::string::npos) << why;
}

// ---- the bans: what the compiled answers call ---------------------------------------------

const std::vector<std::string> kBans1 = {
    "glass::Tensor::argmax(", "glass::Tensor::argmin(", "glass::Tensor::max(long",
    "glass::Tensor::min(long", "glass::argmax(", "glass::argmin(",
    "glass::max(glass::Tensor const&, long", "glass::min(glass::Tensor const&, long",
    "glass::ops::max_dim",
    // the device's arg-reduce kernel, reached directly
    "glass::kernels_for("};
const std::vector<std::string> kBans2 = {"glass::optim::"};
const std::vector<std::string> kBans4 = {
    "glass::nn::utils::clip_grad_norm_", "glass::nn::utils::clip_grad_value_",
    "glass::nn::utils::detail::", "glass::distributed::", "glass::optim::"};

// "" or "exercise N must not call X. " for each banned call the exercise's function in
// `object` makes, itself or through its helpers and lambdas.
std::string banned_calls(const std::string& object, const std::string& ns) {
  return lessons::exercise_calls_banned(object, 1, ns + "accuracy(", kBans1) +
         lessons::exercise_calls_banned(object, 2, ns + "sgd_momentum_step(", kBans2) +
         lessons::exercise_calls_banned(object, 4, ns + "scheduled_lr(", kBans4) +
         lessons::exercise_calls_banned(object, 4, ns + "clipped_scheduled_sgd_step(", kBans4);
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
  const std::string clip =
      exercise_calls_banned(object, 4, wrong + "step_by_clip_grad_norm(", kBans4);
  EXPECT_TRUE(clip.starts_with("exercise 4 must not call glass::nn::utils::clip_grad_norm_("))
      << clip;
  // Exercise 4's other wrong answers call nothing banned: the grader rejects them by value.
  for (const char* numeric : {"step_warmup_off_by_one(", "step_clipping_each_parameter(",
                              "step_clipping_after_the_update("})
    EXPECT_EQ(exercise_calls_banned(object, 4, wrong + numeric, kBans4), "") << numeric;
  // The wrong accuracies are right: only the symbol check tells them apart.
  Tensor logits = tensor({{1.0, 1.0, 0.0}, {0.0, 2.0, 2.0}});
  EXPECT_DOUBLE_EQ(wrong::accuracy_by_argmax(logits, tensor({int64_t{0}, 1})), 1.0);
  EXPECT_DOUBLE_EQ(wrong::accuracy_by_max_dim(logits, tensor({int64_t{0}, 1})), 1.0);
  // So is the step through clip_grad_norm_: it passes exercise 4's grader.
  EXPECT_EQ(step_mismatch(wrong::step_by_clip_grad_norm), "");
}

}  // namespace
}  // namespace glass::lesson06
