// core/tensor_options.h — dtype, device and requires_grad for factory functions.
//
// Mirrors libtorch: glass::zeros({2, 3}, glass::kFloat64) and
// glass::zeros({2, 3}, glass::TensorOptions().dtype(kFloat64).requires_grad(true)) both
// work, because TensorOptions converts implicitly from a ScalarType or a Device.
// An unset dtype means "the default dtype" (float32) unless the factory infers one
// (arange(5) is Long, as in PyTorch).
#pragma once

#include <optional>

#include "core/device.h"
#include "core/scalar_type.h"

namespace glass {

// The dtype floating-point factories and Python-style float scalars produce.
ScalarType get_default_dtype();
void set_default_dtype(ScalarType t);  // kFloat32 or kFloat64 only

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}   // NOLINT: implicit, as in libtorch
  TensorOptions(Device d) : device_(d) {}      // NOLINT
  TensorOptions(DeviceType d) : device_(d) {}  // NOLINT

  TensorOptions dtype(ScalarType t) const {
    auto o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions dtype(std::optional<ScalarType> t) const {
    auto o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions device(Device d) const {
    auto o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    auto o = *this;
    o.requires_grad_ = r;
    return o;
  }

  ScalarType dtype() const { return dtype_.value_or(get_default_dtype()); }
  bool has_dtype() const { return dtype_.has_value(); }
  Device device() const { return device_; }
  bool requires_grad() const { return requires_grad_; }

 private:
  std::optional<ScalarType> dtype_;
  Device device_ = Device(kCPU);
  bool requires_grad_ = false;
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace glass
