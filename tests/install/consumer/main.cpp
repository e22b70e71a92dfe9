// tests/install/consumer/main.cpp — the smallest real program against the installed API.
// Prints a broadcast sum, a matmul and a fused group's result; the install test compares
// the output.
#include <glass/glass.h>

#include <iostream>

#include "compiler/pointwise.h"

int main() {
  glass::Tensor x = glass::arange(6, glass::kFloat).view({2, 3});
  std::cout << x + glass::tensor({10., 20., 30.}) << "\n";
  std::cout << x.matmul(x.t()) << "\n";
  std::cout << glass::storage_index(x.t(), {2, 1}) << "\n";
  // A fused group's IR, interpreted (compiling would write to the user's kernel cache).
  glass::compiler::PointwiseProgram p;
  p.set_output(p.unary(glass::UnaryOp::Relu,
                       p.binary(glass::BinaryOp::Sub, p.input(0, glass::kFloat), p.scalar(2))));
  std::cout << glass::compiler::interpret_pointwise(p, {x}) << "\n";
  return 0;
}
