// lessons/06_training/exercises/wrong_answers.cpp — the deliberately wrong answers of
// wrong_answers.h: each calls the library function its exercise is about, and
// exercises_test.cpp asserts the symbol check rejects it.
#include "wrong_answers.h"

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

}  // namespace glass::lesson06::wrong
