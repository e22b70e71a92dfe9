// lessons/09_cuda_kernels/lesson_kernels.h — the lesson's own kernels (lesson_kernels.cu):
// the five rungs of the reduction ladder and a racy reduction for the race detector. Each
// launcher queues its kernel(s) on the current stream and returns; the lesson reads the
// result and the simulator's counters afterwards. Invariant: every rung's block is kBlock
// threads, the exercises' block (exercises.h holds the one definition).
#pragma once

#include "core/tensor.h"
#include "exercises/exercises.h"

namespace lesson09 {

using glass::lesson09::kBlock;

// The sum of x (float, 1-D, on cuda:0) into out[0] by rung 1..5 of the ladder: a first
// launch writes one partial sum per block into `partials`, a second launch (one block)
// sums the partials. partials needs partials_needed(rung, n) floats.
void ladder_sum(int rung, const glass::Tensor& x, const glass::Tensor& partials,
                const glass::Tensor& out);
int64_t partials_needed(int rung, int64_t n);
const char* rung_name(int rung);

// Rung 2 with the __syncthreads() of its loop left out, one block over x (256 floats):
// the race detector stops it. And rung 2 itself on the same input, for comparison.
void racy_block_sum(const glass::Tensor& x, const glass::Tensor& out);
void fixed_block_sum(const glass::Tensor& x, const glass::Tensor& out);

}  // namespace lesson09
