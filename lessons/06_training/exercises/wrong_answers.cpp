// lessons/06_training/exercises/wrong_answers.cpp — the deliberately wrong answers of
// wrong_answers.h: exercises 1 and 2's call the library function their exercise is about,
// and exercises_test.cpp asserts the symbol check rejects them; exercise 4's are each wrong
// in one way, and it asserts the grader rejects them. Each is whole here: none calls the
// answer in solution.cpp or student.cpp.
#include "wrong_answers.h"

#include "nn/utils/clip_grad.h"

#include <cmath>
#include <numbers>
#include <tuple>

namespace glass::lesson06::wrong {

double accuracy_by_argmax(const Tensor& logits, const Tensor& labels) {
  NoGradGuard no_grad;
  return (logits.argmax(1) == labels).sum().item<double>() / static_cast<double>(labels.size(0));
}

double accuracy_by_max_dim(const Tensor& logits, const Tensor& labels) {
  NoGradGuard no_grad;
  Tensor predicted = std::get<1>(logits.max(1));
  return (predicted == labels).sum().item<double>() / static_cast<double>(labels.size(0));
}

void sgd_momentum_step_by_optim(const std::vector<Tensor>& params,
                                [[maybe_unused]] std::vector<Tensor>& buffers, double lr,
                                double momentum, double weight_decay) {
  // A fresh SGD each call keeps no momentum between calls; beside the point here: it is
  // the optimizer the exercise asks you to write.
  optim::SGD sgd(params, optim::SGDOptions(lr).momentum(momentum).weight_decay(weight_decay));
  sgd.step();
}

// ---- exercise 4 ------------------------------------------------------------------------

namespace {

// The right schedule, or (off_by_one) a warmup of lr * step / warmup: step 0 does not move,
// and the peak comes one step late.
double lr_at(int64_t step, const Schedule& s, bool off_by_one = false) {
  if (step < s.warmup)
    return s.lr * static_cast<double>(off_by_one ? step : step + 1) / static_cast<double>(s.warmup);
  if (step >= s.total) return s.min_lr;
  const double t = static_cast<double>(step - s.warmup) / static_cast<double>(s.total - s.warmup);
  return s.min_lr + (s.lr - s.min_lr) * (1 + std::cos(std::numbers::pi * t)) / 2;
}

std::vector<Tensor> grads_of(const std::vector<Tensor>& params) {
  std::vector<Tensor> grads;
  for (const Tensor& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

double global_norm(const std::vector<Tensor>& grads) {
  double squares = 0;
  for (const Tensor& g : grads) squares += (g * g).sum().item<double>();
  return std::sqrt(squares);
}

void clip_together(const std::vector<Tensor>& grads, double norm, double max_norm) {
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1)
    for (Tensor g : grads) g.mul_(coef);
}

void update(const std::vector<Tensor>& params, double lr) {
  for (Tensor p : params)
    if (p.grad().defined()) p.sub_(p.grad(), lr);
}

}  // namespace

double scheduled_lr_warmup_off_by_one(int64_t step, const Schedule& schedule) {
  return lr_at(step, schedule, /*off_by_one=*/true);
}

double step_warmup_off_by_one(const std::vector<Tensor>& params, double max_norm, int64_t step,
                              const Schedule& schedule) {
  NoGradGuard no_grad;
  const std::vector<Tensor> grads = grads_of(params);
  const double norm = global_norm(grads);
  clip_together(grads, norm, max_norm);
  update(params, lr_at(step, schedule, /*off_by_one=*/true));
  return norm;
}

double step_clipping_each_parameter(const std::vector<Tensor>& params, double max_norm,
                                    int64_t step, const Schedule& schedule) {
  NoGradGuard no_grad;
  const std::vector<Tensor> grads = grads_of(params);
  const double norm = global_norm(grads);  // the right number to return ...
  for (const Tensor& g : grads) clip_together({g}, global_norm({g}), max_norm);  // ... not used
  update(params, lr_at(step, schedule));
  return norm;
}

double step_clipping_after_the_update(const std::vector<Tensor>& params, double max_norm,
                                      int64_t step, const Schedule& schedule) {
  NoGradGuard no_grad;
  const std::vector<Tensor> grads = grads_of(params);
  const double norm = global_norm(grads);
  update(params, lr_at(step, schedule));  // the full gradient has already moved p
  clip_together(grads, norm, max_norm);   // the gradients end right, the parameters not
  return norm;
}

double step_by_clip_grad_norm(const std::vector<Tensor>& params, double max_norm, int64_t step,
                              const Schedule& schedule) {
  const double norm = nn::utils::clip_grad_norm_(params, max_norm);
  NoGradGuard no_grad;
  update(params, lr_at(step, schedule));
  return norm;
}

}  // namespace glass::lesson06::wrong
