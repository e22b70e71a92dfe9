// lessons/10_data_parallel/exercises/wrong_answers.h — deliberately wrong answers to lesson
// 10's exercises, which exercises_test.cpp checks its graders reject.
//
// A grader that passes every answer proves nothing: each function here breaks one rule of
// its exercise's contract (named beside it), and a test asserts the grader says so. They
// are compiled into an object file of their own (wrong_answers.cpp), so the symbol check
// that catches banned calls can be shown catching the banned ones here.
#pragma once

#include "exercises.h"

namespace glass::lesson10::wrong {

// Exercise 1.
void ring_reduce_scatter_only(distributed::ProcessGroup& group, Tensor& tensor);   // values
void ring_gather_to_rank_zero(distributed::ProcessGroup& group, Tensor& tensor);   // bytes, peers
void ring_everyone_to_everyone(distributed::ProcessGroup& group, Tensor& tensor);  // bytes
void ring_with_allreduce(distributed::ProcessGroup& group, Tensor& tensor);        // a collective
void ring_from_the_library(distributed::ProcessGroup& group, Tensor& tensor);      // banned symbol
void ring_send_then_recv(distributed::ProcessGroup& group, Tensor& tensor);  // waits on its send
void ring_on_a_group_of_its_own(distributed::ProcessGroup& group, Tensor& tensor);  // banned

// Exercise 2.
void hooks_sum_without_dividing(nn::Module& module, distributed::ProcessGroup& group);
void hooks_weights_only(nn::Module& module, distributed::ProcessGroup& group);  // biases local
void hooks_by_reducer(nn::Module& module, distributed::ProcessGroup& group);    // banned symbol
void hooks_by_ddp(nn::Module& module, distributed::ProcessGroup& group);        // banned symbol

// Exercise 3.
std::vector<size_t> indices_without_padding(size_t n, size_t num_replicas, size_t rank,
                                            bool shuffle, uint64_t seed, size_t epoch);
std::vector<size_t> indices_ignoring_epoch(size_t n, size_t num_replicas, size_t rank, bool shuffle,
                                           uint64_t seed, size_t epoch);
std::vector<size_t> indices_in_blocks(size_t n, size_t num_replicas, size_t rank, bool shuffle,
                                      uint64_t seed, size_t epoch);  // contiguous, not strided
std::vector<size_t> indices_from_the_library(size_t n, size_t num_replicas, size_t rank,
                                             bool shuffle, uint64_t seed,
                                             size_t epoch);  // banned symbol

}  // namespace glass::lesson10::wrong
