// lessons/02_storage_and_strides/exercises/student.cpp — your answers to lesson 02's
// exercises (see exercises.h for each contract and README.md for the ideas).
//
// Each body below only reports that it is not written yet; replace it with your code
// (and drop [[maybe_unused]] once you use a parameter). Test it with
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
#include "exercises.h"

namespace glass::lesson02 {

int64_t storage_address([[maybe_unused]] IntArrayRef sizes, [[maybe_unused]] IntArrayRef strides,
                        [[maybe_unused]] int64_t offset, [[maybe_unused]] IntArrayRef index) {
  throw glass::Error("exercise 1: not implemented yet — see README");
}

Tensor strided_slice([[maybe_unused]] const Tensor& t, [[maybe_unused]] int64_t dim,
                     [[maybe_unused]] int64_t start, [[maybe_unused]] int64_t end,
                     [[maybe_unused]] int64_t step) {
  throw glass::Error("exercise 2: not implemented yet — see README");
}

Tensor make_contiguous([[maybe_unused]] const Tensor& t) {
  throw glass::Error("exercise 3: not implemented yet — see README");
}

std::optional<Shape> find_view_strides([[maybe_unused]] IntArrayRef sizes,
                                       [[maybe_unused]] IntArrayRef strides,
                                       [[maybe_unused]] IntArrayRef shape) {
  throw glass::Error("exercise 4: not implemented yet — see README");
}

}  // namespace glass::lesson02
