// core/ops/read_value.h — the ops that hand a tensor's values back to C++.
//
// item() returns an element as a Scalar, and printing reads every element into text.
// Both are ops tagged kReadsValueOp, so that code which watches every op (the compiler's
// tracer) sees the moment a value leaves the graph: whatever C++ then does with it (a branch,
// a loop bound, a printout) is invisible to a trace, which must stop there (a graph break).
#pragma once

#include "core/tensor.h"

namespace glass {

template <class Sig>
class Op;

namespace ops {
// The one element of a one-element tensor (waits for its device). PyTorch:
// aten::_local_scalar_dense.
extern Op<Scalar(const Tensor&)> item;
// Marks that `t` is about to be printed; does nothing else (print.cpp reads the values).
extern Op<void(const Tensor&)> print;
}  // namespace ops

}  // namespace glass
