// tests/install/consumer/main.cpp — the smallest real program against the installed API.
// Prints a broadcast sum and a matmul; the install test compares the output.
#include <glass/glass.h>

#include <iostream>

int main() {
  glass::Tensor x = glass::arange(6, glass::kFloat).view({2, 3});
  std::cout << x + glass::tensor({10., 20., 30.}) << "\n";
  std::cout << x.matmul(x.t()) << "\n";
  std::cout << glass::storage_index(x.t(), {2, 1}) << "\n";
  return 0;
}
