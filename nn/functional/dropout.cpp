// nn/functional/dropout.cpp — one uniform draw per element, compared with p (see dropout.h).
#include "nn/functional/dropout.h"

#include "core/error.h"
#include "core/ops/random.h"

namespace glass::nn::functional {

Tensor dropout(const Tensor& x, double p, bool training) {
  GLASS_CHECK(x.defined(), "dropout(): got an undefined tensor");
  GLASS_CHECK(p >= 0 && p <= 1, "dropout(): probability has to be between 0 and 1, but got ", p);
  if (!training || p == 0 || x.numel() == 0) return x;
  if (p == 1) return x * 0;
  GLASS_CHECK(x.is_floating_point(), "dropout(): expected a floating-point input, got dtype ",
              x.dtype());
  // The mask is data, not a function of x: it is built with no graph, and the product
  // x · mask is the only recorded op, so the gradient is mask · grad.
  // u ~ U[0, 1) keeps an element when u >= p, which happens with probability 1 - p.
  Tensor mask = (rand(x.sizes(), x.options()) >= p).to(x.dtype());
  mask.mul_(1.0 / (1.0 - p));
  return x * mask;
}

}  // namespace glass::nn::functional
