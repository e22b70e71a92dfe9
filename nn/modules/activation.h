// nn/modules/activation.h — the activation functions as modules, for Sequential.
//
// They hold no parameters; each forward is the F:: function of the same name (shapes
// unchanged). GELU remembers which approximation it uses.
#pragma once

#include <ostream>
#include <string>

#include "core/tensor.h"
#include "nn/module.h"

namespace glass::nn {

class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& os) const override { os << "ReLU()"; }
};
GLASS_MODULE(ReLU);

class GELUImpl : public Module {
 public:
  // approximate: "none" (exact, with erf) or "tanh"; anything else is an error.
  explicit GELUImpl(std::string approximate = "none");
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& os) const override;

  std::string approximate;
};
GLASS_MODULE(GELU);

class TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& os) const override { os << "Tanh()"; }
};
GLASS_MODULE(Tanh);

class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) const;
  void pretty_print(std::ostream& os) const override { os << "Sigmoid()"; }
};
GLASS_MODULE(Sigmoid);

}  // namespace glass::nn
