// nn/modules/activation.cpp — the activation modules' forwards (see activation.h).
#include "nn/modules/activation.h"

#include <utility>

#include "core/error.h"
#include "nn/functional/activation.h"

namespace glass::nn {

Tensor ReLUImpl::forward(const Tensor& x) const { return functional::relu(x); }

GELUImpl::GELUImpl(std::string mode) : Module("GELU"), approximate(std::move(mode)) {
  // Checked here, not at the first forward, so a typo fails where the model is built.
  GLASS_CHECK(approximate == "none" || approximate == "tanh",
              "GELU: approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
}
Tensor GELUImpl::forward(const Tensor& x) const { return functional::gelu(x, approximate); }
void GELUImpl::pretty_print(std::ostream& os) const {
  os << "GELU(approximate='" << approximate << "')";
}

Tensor TanhImpl::forward(const Tensor& x) const { return functional::tanh(x); }
Tensor SigmoidImpl::forward(const Tensor& x) const { return functional::sigmoid(x); }

}  // namespace glass::nn
