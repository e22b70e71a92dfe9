// nn/modules/dropout.h — Dropout: F::dropout while training, the identity in eval().
//
// The module's training flag (Module::train / eval, which reach every submodule) is what
// switches it, so `model->eval()` before evaluation is all a user has to remember.
#pragma once

#include <ostream>

#include "core/tensor.h"
#include "nn/module.h"

namespace glass::nn {

class DropoutImpl : public Module {
 public:
  // p: the probability of zeroing each element, in [0, 1].
  explicit DropoutImpl(double p = 0.5);
  // x: any shape → x's shape.
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& os) const override;

  double p;
};
GLASS_MODULE(Dropout);

}  // namespace glass::nn
