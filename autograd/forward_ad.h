// autograd/forward_ad.h — forward-mode AD with dual tensors: Jacobian-vector products.
//
// Reverse mode (engine.h) pushes one vector back through the graph and gets vᵀJ: a row of
// the Jacobian per backward pass. Forward mode pushes a tangent v forward alongside each
// value and gets J v: a column per pass, with no graph kept at all (seed §IV). A dual
// tensor is a primal value paired with a tangent of the same shape; every op on duals also
// computes its output's tangent with the op's forward-mode rule (autograd/formula.h).
//
//   forward_ad::DualLevel level;                    // tangents live while this does
//   Tensor x = forward_ad::make_dual(primal, v);
//   Tensor y = f(x);
//   Tensor jv = forward_ad::unpack_dual(y).tangent;  // J(primal) · v
//
// Invariant: a tensor has a tangent only while the level that gave it one is alive;
// leaving the level strips every tangent it handed out, so no dual outlives it.
#pragma once

#include "core/tensor.h"

namespace glass::autograd::forward_ad {

// RAII: enters a dual level (PyTorch's `with fwAD.dual_level():`). One level at a time.
class DualLevel {
 public:
  DualLevel();
  ~DualLevel();
  DualLevel(const DualLevel&) = delete;
  DualLevel& operator=(const DualLevel&) = delete;
  static bool active();
};

// A tensor with primal's values and `tangent` as its tangent. The tangent must have the
// primal's shape and dtype (floating point). Requires an active DualLevel.
Tensor make_dual(const Tensor& primal, const Tensor& tangent);

struct UnpackedDual {
  Tensor primal;   // the values, without tangent or history (a detach())
  Tensor tangent;  // undefined when the tensor carries none
};
UnpackedDual unpack_dual(const Tensor& t);

}  // namespace glass::autograd::forward_ad
