// core/scalar.h — a number that is not (yet) a tensor: the `2` in `x * 2`.
//
// A Scalar remembers whether it was written as a bool, an integer or a floating-point
// value, because that category takes part in type promotion exactly as a Python number
// does in PyTorch: int64_tensor * 2 stays Long, int64_tensor * 2.5 becomes Float.
#pragma once

#include <cstdint>
#include <ostream>
#include <type_traits>

#include "core/scalar_type.h"

namespace glass {

class Scalar {
 public:
  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : tag_(kBool) { v_.i = v; }  // NOLINT: implicit like libtorch's Scalar
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : tag_(kInt64) {  // NOLINT
    v_.i = static_cast<int64_t>(v);
  }
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : tag_(kFloat64) {  // NOLINT
    v_.d = static_cast<double>(v);
  }

  bool is_floating_point() const { return tag_ == kFloat64; }
  bool is_integral(bool include_bool) const {
    return tag_ == kInt64 || (include_bool && tag_ == kBool);
  }
  bool is_boolean() const { return tag_ == kBool; }
  // The dtype a tensor made from this number would have: Bool, Long or Double.
  ScalarType type() const { return tag_; }

  template <class T>
  T to() const {
    return tag_ == kFloat64 ? static_cast<T>(v_.d) : static_cast<T>(v_.i);
  }
  double toDouble() const { return to<double>(); }
  int64_t toLong() const { return to<int64_t>(); }
  bool toBool() const { return to<bool>(); }

 private:
  ScalarType tag_;
  union {
    double d;
    int64_t i;
  } v_;
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace glass
