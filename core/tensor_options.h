// core/tensor_options.h — dtype, device, requires_grad and pinned_memory for factories.
//
// Mirrors libtorch: glass::zeros({2, 3}, glass::kFloat64) and
// glass::zeros({2, 3}, glass::TensorOptions().dtype(kFloat64).requires_grad(true)) both
// work, because TensorOptions converts implicitly from a ScalarType, a Device or a
// DeviceType.
//
// Invariant: dtype and device are optional, as in libtorch, and "unset" is a real state,
// not a default in disguise. An unset dtype means the default dtype (float32) unless the
// factory infers one (arange(5) is Long); an unset device means the CPU for a factory,
// but "the input's device" for everything made from an input — zeros_like(x, kBool),
// x.to(kFloat64), a backward formula's zeros — so nothing built from a CUDA tensor
// silently lands on the CPU. dtype() and device() give the resolved value; has_dtype() /
// has_device() and device_opt() tell "unset" apart.
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
  TensorOptions(ScalarType t) : dtype_(t) {}           // NOLINT: implicit, as in libtorch
  TensorOptions(Device d) : device_(d) {}              // NOLINT
  TensorOptions(DeviceType d) : device_(Device(d)) {}  // NOLINT

  TensorOptions dtype(std::optional<ScalarType> t) const {
    auto o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions device(std::optional<Device> d) const {
    auto o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    auto o = *this;
    o.requires_grad_ = r;
    return o;
  }
  // Page-locked host memory, from the registered pinned allocator (allocator.h); CPU only.
  TensorOptions pinned_memory(bool p) const {
    auto o = *this;
    o.pinned_memory_ = p;
    return o;
  }

  ScalarType dtype() const { return dtype_.value_or(get_default_dtype()); }
  bool has_dtype() const { return dtype_.has_value(); }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  Device device() const { return device_.value_or(Device(kCPU)); }
  bool has_device() const { return device_.has_value(); }
  std::optional<Device> device_opt() const { return device_; }
  bool requires_grad() const { return requires_grad_; }
  bool pinned_memory() const { return pinned_memory_; }

  // These options with every field that `other` sets taken from `other` (libtorch's
  // merge_in): x.options().merge_in(kBool) is "like x, but Bool". requires_grad and
  // pinned_memory are plain flags and always come from `other`.
  TensorOptions merge_in(const TensorOptions& other) const {
    auto o = *this;
    if (other.dtype_) o.dtype_ = other.dtype_;
    if (other.device_) o.device_ = other.device_;
    o.requires_grad_ = other.requires_grad_;
    o.pinned_memory_ = other.pinned_memory_;
    return o;
  }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
  bool pinned_memory_ = false;
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace glass
