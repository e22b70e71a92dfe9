// lessons/06_training/exercises/solution.cpp — the reference answers to lesson 06's
// exercises (the build uses them unless GLASS_EXERCISES=student). Try your own in
// student.cpp before reading these.
#include "exercises.h"

#include <cmath>
#include <numbers>

namespace glass::lesson06 {

namespace F = nn::functional;

// ---- exercise 1 ------------------------------------------------------------------------

double accuracy(const Tensor& logits, const Tensor& labels) {  // logits: (N, C), labels: (N)
  GLASS_CHECK(logits.dim() == 2 && labels.dim() == 1 && labels.size(0) == logits.size(0),
              "accuracy(): expected logits (N, C) and labels (N), got logits ", logits.sizes(),
              " and labels ", labels.sizes());
  NoGradGuard no_grad;  // a metric, not part of any model
  // argmax(1) by hand: mark each row's maxima, give every other position the index C (one
  // past the last class), and the smallest index left in a row is its first maximum.
  const int64_t classes = logits.size(1);
  Tensor is_max = logits == logits.amax({1}, /*keepdim=*/true);          // (N, C) Bool
  Tensor predicted = where(is_max, arange(classes), classes).amin({1});  // (N)
  Tensor hits = predicted == labels;                                     // (N) Bool
  const int64_t correct = hits.sum().item<int64_t>();
  return static_cast<double>(correct) / static_cast<double>(labels.size(0));
}

// ---- exercise 2 ------------------------------------------------------------------------

void sgd_momentum_step(const std::vector<Tensor>& params, std::vector<Tensor>& buffers, double lr,
                       double momentum, double weight_decay) {
  GLASS_CHECK(buffers.size() == params.size(), "sgd_momentum_step(): ", params.size(),
              " parameters but ", buffers.size(), " momentum buffers; start with ",
              "std::vector<Tensor>(params.size())");
  NoGradGuard no_grad;  // the update is bookkeeping, not part of the model's function
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i];  // a handle: the same tensor as the model's, so p.sub_ updates it
    if (!p.grad().defined()) continue;  // took no part in the loss: no update, no momentum
    Tensor g = p.grad();
    if (weight_decay != 0) g = g + p * weight_decay;  // a new tensor: .grad() is left as is
    Tensor& buf = buffers[i];
    if (!buf.defined()) {
      buf = g.clone();  // its own storage: the next backward may add into .grad() in place
    } else {
      buf.mul_(momentum).add_(g);
    }
    p.sub_(buf, lr);  // p -= lr * buf, in place
  }
}

// ---- exercise 3 ------------------------------------------------------------------------

double train_one_epoch(nn::Sequential& model, data::DataLoader& loader,
                       optim::Optimizer& optimizer) {
  model->train();
  double loss_sum = 0;  // sum over examples of their loss
  int64_t examples = 0;
  for (data::Example& batch : loader) {  // begin() starts the next epoch
    optimizer.zero_grad();
    Tensor logits = model(batch.data);                     // (B, C)
    Tensor loss = F::cross_entropy(logits, batch.target);  // the batch's mean
    loss.backward();
    optimizer.step();
    const int64_t b = batch.data.size(0);
    loss_sum += loss.item<double>() * static_cast<double>(b);  // the batch's sum
    examples += b;
  }
  return loss_sum / static_cast<double>(examples);
}

// ---- exercise 4 ------------------------------------------------------------------------

double scheduled_lr(int64_t step, const Schedule& schedule) {
  const auto& [lr, warmup, total, min_lr] = schedule;
  GLASS_CHECK(step >= 0 && warmup >= 0 && total > warmup, "scheduled_lr(): expected step >= 0 ",
              "and 0 <= warmup < total, got step ", step, ", warmup ", warmup, ", total ", total);
  if (step < warmup)  // 1/warmup, 2/warmup, ..., 1 of the peak: the first step already moves
    return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (step >= total) return min_lr;
  const double t = static_cast<double>(step - warmup) / static_cast<double>(total - warmup);
  return min_lr + (lr - min_lr) * (1 + std::cos(std::numbers::pi * t)) / 2;  // 1 → 0 over t
}

double clipped_scheduled_sgd_step(const std::vector<Tensor>& params, double max_norm, int64_t step,
                                  const Schedule& schedule) {
  const double lr = scheduled_lr(step, schedule);  // checks the schedule before anything moves
  NoGradGuard no_grad;        // clipping and the update are bookkeeping, not part of the model
  std::vector<Tensor> grads;  // handles: the parameters' own .grad() tensors
  for (const Tensor& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  // The norm of all gradients laid end to end as one vector: the squares of every
  // element of every gradient, summed, then one square root. (Clipping each gradient by
  // its own norm would change the update's direction; one factor for all keeps it.)
  double squares = 0;
  for (const Tensor& g : grads) squares += (g * g).sum().item<double>();
  const double norm = std::sqrt(squares);
  const double coef = max_norm / (norm + 1e-6);  // 1e-6: no division by zero at norm 0
  if (coef < 1)
    for (Tensor& g : grads) g.mul_(coef);  // in place: p.grad() itself is clipped
  for (const Tensor& p : params)
    if (p.grad().defined()) Tensor(p).sub_(p.grad(), lr);  // p -= lr * grad, in place
  return norm;
}

}  // namespace glass::lesson06
