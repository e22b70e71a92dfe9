// lessons/10_data_parallel/exercises/student.cpp — your answers to lesson 10's exercises
// (see exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_10
#include "exercises.h"

namespace glass::lesson10 {

// ---- exercise 1 ------------------------------------------------------------------------

void my_ring_all_reduce([[maybe_unused]] distributed::ProcessGroup& group,
                        [[maybe_unused]] Tensor& tensor) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

// ---- exercise 2 ------------------------------------------------------------------------

void average_gradients_with_hooks([[maybe_unused]] nn::Module& module,
                                  [[maybe_unused]] distributed::ProcessGroup& group) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

// ---- exercise 3 ------------------------------------------------------------------------

std::vector<size_t> my_distributed_indices(
    [[maybe_unused]] size_t n, [[maybe_unused]] size_t num_replicas, [[maybe_unused]] size_t rank,
    [[maybe_unused]] bool shuffle, [[maybe_unused]] uint64_t seed, [[maybe_unused]] size_t epoch) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

}  // namespace glass::lesson10
