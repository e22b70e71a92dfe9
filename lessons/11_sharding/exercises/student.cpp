// lessons/11_sharding/exercises/student.cpp — your answers to lesson 11's exercises
// (see exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_11
#include "exercises.h"

namespace glass::lesson11 {

// ---- exercise 1 ------------------------------------------------------------------------

Tensor shard_rows([[maybe_unused]] const Tensor& full, [[maybe_unused]] int world_size,
                  [[maybe_unused]] int rank) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

// ---- exercise 2 ------------------------------------------------------------------------

Tensor my_reduce_scatter([[maybe_unused]] distributed::ProcessGroup& group,
                         [[maybe_unused]] const Tensor& input) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

// ---- exercise 3 ------------------------------------------------------------------------

void shard_for_forward([[maybe_unused]] nn::Module& module,
                       [[maybe_unused]] distributed::ProcessGroup& group) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

}  // namespace glass::lesson11
