// core/cpu/fold_slices.h — a full reduction of a large input on several threads, with the
// same bits on every run: each thread folds its own slice of the iteration space, then the
// partial results are combined in the order of their slices (outputs may not be shared
// between threads, and adding partials in arrival order would make the last bits depend
// on timing). Eager's reduce kernel (cpu_reduce.cpp) and the compiler's fused reductions
// (compiler/pointwise_run.cpp) both use it.
// Invariant: for a given thread count and grain, the result does not depend on scheduling,
// nor on whether the pool was free.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/parallel.h"
#include "core/tensor_iterator.h"

namespace glass::cpu {

// Combines, in slice order, the folds of the slices of `iter` (input operand 1 onward; the
// output is not touched). fold(data, strides, n, acc) folds one run into acc; each slice
// starts from `start`; combine(total, partial) joins them, starting from `start`.
// The slices are cut here, one per thread (at least `grain` elements each), not by
// parallel_for: it runs its chunks serially when the pool is busy (another rank-thread
// reducing at the same time) or this thread is marked serial, and one serial chunk would
// fold in another order. So the same thread count always cuts, folds and combines alike.
template <class A, class Fold, class Combine>
A fold_slices_in_order(const TensorIterator& iter, A start, int64_t grain, const Fold& fold,
                       const Combine& combine) {
  const int64_t numel = iter.numel();
  const int64_t slices = std::max<int64_t>(
      1, std::min<int64_t>(get_num_threads(), numel / std::max<int64_t>(grain, 1)));
  struct Partial {
    A value;  // a struct, so that A = bool is no std::vector<bool> proxy
  };
  std::vector<Partial> partials(static_cast<size_t>(slices), Partial{start});
  parallel_for(0, slices, 1, [&](int64_t first, int64_t last) {
    for (int64_t s = first; s < last; ++s) {
      const int64_t b = numel * s / slices, e = numel * (s + 1) / slices;
      A& local = partials[static_cast<size_t>(s)].value;
      iter.serial_for_each(
          [&](char** data, const int64_t* strides, int64_t n) { fold(data, strides, n, local); }, b,
          e);
    }
  });
  A total = start;
  for (const Partial& partial : partials) total = combine(total, partial.value);
  return total;
}

}  // namespace glass::cpu
