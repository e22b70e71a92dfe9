// core/cpu/fold_slices.h — a full reduction of a large input on several threads, with the
// same bits on every run: each thread folds its own slice of the iteration space, then the
// partial results are combined in the order of their slices (outputs may not be shared
// between threads, and adding partials in arrival order would make the last bits depend
// on timing). Eager's reduce kernel (cpu_reduce.cpp) and the compiler's fused reductions
// (compiler/pointwise_run.cpp) both use it.
// Invariant: for a given thread count and grain, the result does not depend on scheduling.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "core/tensor_iterator.h"

namespace glass::cpu {

// Combines, in slice order, the folds of `grain`-element slices of `iter` (input operand
// 1 onward; the output is not touched). fold(data, strides, n, acc) folds one run into acc;
// each slice starts from `start`; combine(total, partial) joins them, starting from `start`.
template <class A, class Fold, class Combine>
A fold_slices_in_order(const TensorIterator& iter, A start, int64_t grain, const Fold& fold,
                       const Combine& combine) {
  std::mutex m;
  std::vector<std::pair<int64_t, A>> partials;  // (slice begin, its fold)
  parallel_for(0, iter.numel(), grain, [&](int64_t b, int64_t e) {
    A local = start;
    iter.serial_for_each(
        [&](char** data, const int64_t* strides, int64_t n) { fold(data, strides, n, local); }, b,
        e);
    std::lock_guard<std::mutex> lock(m);
    partials.emplace_back(b, local);
  });
  std::sort(partials.begin(), partials.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  A total = start;
  for (const auto& [begin, partial] : partials) total = combine(total, partial);
  return total;
}

}  // namespace glass::cpu
