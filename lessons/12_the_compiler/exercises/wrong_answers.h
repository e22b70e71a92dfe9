// lessons/12_the_compiler/exercises/wrong_answers.h — plausible wrong answers to lesson 12's
// exercises, which the tests show their graders reject (or, for a banned call, the symbol
// check). Not for students to copy: each is wrong in a way explained beside it.
#pragma once

#include "exercises.h"

namespace glass::lesson12::wrong {

// Exercise 1.
std::vector<std::vector<int>> chains_ignore_other_readers(const compiler::Graph& graph);
std::vector<std::vector<int>> chains_through_outputs(const compiler::Graph& graph);
std::vector<std::vector<int>> chains_of_one(const compiler::Graph& graph);
std::vector<std::vector<int>> chains_from_the_library(const compiler::Graph& graph);

// Exercise 2 (each pairs with exercise 2's own record()).
bool accepts_same_numel(const Guard& guard, const std::vector<Tensor>& inputs);
bool accepts_any_dtype(const Guard& guard, const std::vector<Tensor>& inputs);
bool accepts_any_grad_mode(const Guard& guard, const std::vector<Tensor>& inputs);
bool accepts_by_compiling(const Guard& guard, const std::vector<Tensor>& inputs);

// Exercise 3.
Tensor branch_by_item(const Tensor& x);
Tensor branch_by_data_ptr(const Tensor& x);
Tensor branch_per_element(const Tensor& x);
Tensor branch_at_zero_too(const Tensor& x);

}  // namespace glass::lesson12::wrong
