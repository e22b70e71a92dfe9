// lessons/08_cuda_async/exercises/student.cpp — your answers to lesson 08's exercises (see
// exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_08
#include "exercises.h"

namespace glass::lesson08 {

// ---- exercise 1 ------------------------------------------------------------------------

void pipeline([[maybe_unused]] const std::vector<Tensor>& inputs, [[maybe_unused]] Tensor& slot,
              [[maybe_unused]] std::vector<Tensor>& outputs,
              [[maybe_unused]] cuda::CUDAStream producer,
              [[maybe_unused]] cuda::CUDAStream consumer) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

// ---- exercise 2 ------------------------------------------------------------------------

Tensor stage_and_compute([[maybe_unused]] const Tensor& batch) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

}  // namespace glass::lesson08
