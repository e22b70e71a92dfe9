// lessons/06_training/exercises/student.cpp — your answers to lesson 06's exercises (see
// exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
#include "exercises.h"

namespace glass::lesson06 {

// ---- exercise 1 ------------------------------------------------------------------------

double accuracy([[maybe_unused]] const Tensor& logits, [[maybe_unused]] const Tensor& labels) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

// ---- exercise 2 ------------------------------------------------------------------------

void sgd_momentum_step([[maybe_unused]] const std::vector<Tensor>& params,
                       [[maybe_unused]] std::vector<Tensor>& buffers, [[maybe_unused]] double lr,
                       [[maybe_unused]] double momentum, [[maybe_unused]] double weight_decay) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

// ---- exercise 3 ------------------------------------------------------------------------

double train_one_epoch([[maybe_unused]] nn::Sequential& model,
                       [[maybe_unused]] data::DataLoader& loader,
                       [[maybe_unused]] optim::Optimizer& optimizer) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

// ---- exercise 4 ------------------------------------------------------------------------

double scheduled_lr([[maybe_unused]] int64_t step, [[maybe_unused]] const Schedule& schedule) {
  throw glass::Error("exercise 4: not implemented yet — see README");
}

double clipped_scheduled_sgd_step([[maybe_unused]] const std::vector<Tensor>& params,
                                  [[maybe_unused]] double max_norm, [[maybe_unused]] int64_t step,
                                  [[maybe_unused]] const Schedule& schedule) {
  throw glass::Error("exercise 4: not implemented yet — see README");
}

}  // namespace glass::lesson06
