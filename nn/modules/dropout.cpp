// nn/modules/dropout.cpp — Dropout's forward reads the training flag (see dropout.h).
#include "nn/modules/dropout.h"

#include "core/error.h"
#include "nn/functional/dropout.h"

namespace glass::nn {

DropoutImpl::DropoutImpl(double probability) : Module("Dropout"), p(probability) {
  GLASS_CHECK(p >= 0 && p <= 1, "Dropout: probability has to be between 0 and 1, but got ", p);
}

Tensor DropoutImpl::forward(const Tensor& x) const {
  return functional::dropout(x, p, is_training());
}

void DropoutImpl::pretty_print(std::ostream& os) const { os << "Dropout(p=" << p << ")"; }

}  // namespace glass::nn
