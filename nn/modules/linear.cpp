// nn/modules/linear.cpp — Linear's parameters, their initialisation and forward.
#include "nn/modules/linear.h"

#include <cmath>

#include "core/error.h"
#include "core/ops/factories.h"
#include "nn/functional/linear.h"
#include "nn/init.h"

namespace glass::nn {

LinearImpl::LinearImpl(const LinearOptions& opts) : Module("Linear"), options(opts) {
  GLASS_CHECK(options.in_features() >= 0 && options.out_features() >= 0,
              "Linear: in_features and out_features must be >= 0, got in_features = ",
              options.in_features(), " and out_features = ", options.out_features());
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  if (options.bias()) bias = register_parameter("bias", empty({options.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  // gain(leaky_relu, sqrt(5)) = sqrt(2 / 6), so the bound is sqrt(3) · sqrt(1/3) /
  // sqrt(fan_in) = 1 / sqrt(fan_in): the old "uniform in ±1/sqrt(fan_in)" rule, kept by
  // PyTorch in this form.
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (!bias.defined()) return;
  const int64_t fan_in = options.in_features();
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  init::uniform_(bias, -bound, bound);
}

Tensor LinearImpl::forward(const Tensor& x) const { return functional::linear(x, weight, bias); }

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features()
     << ", out_features=" << options.out_features() << ", bias=" << std::boolalpha << options.bias()
     << std::noboolalpha << ")";
}

}  // namespace glass::nn
