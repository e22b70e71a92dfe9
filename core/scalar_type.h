// core/scalar_type.h — the element types a tensor can hold, and how they combine.
//
// A dtype is a tag on the TensorImpl; the bytes in Storage are untyped. Promotion
// follows PyTorch: the types form a chain  bool < int32 < int64 < float32 < float64
// for the ones glasstorch supports, and result_type() (in type_promotion.h) decides
// which operand's type wins when categories differ.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>

#include "core/error.h"

namespace glass {

enum class ScalarType : int8_t {
  Bool = 0,
  Int32 = 1,
  Int64 = 2,
  Float32 = 3,
  Float64 = 4,
  Undefined = 5,
};

using Dtype = ScalarType;

// libtorch spells these kFloat, kLong, ...; both spellings are provided.
inline constexpr ScalarType kBool = ScalarType::Bool;
inline constexpr ScalarType kInt32 = ScalarType::Int32;
inline constexpr ScalarType kInt = ScalarType::Int32;
inline constexpr ScalarType kInt64 = ScalarType::Int64;
inline constexpr ScalarType kLong = ScalarType::Int64;
inline constexpr ScalarType kFloat32 = ScalarType::Float32;
inline constexpr ScalarType kFloat = ScalarType::Float32;
inline constexpr ScalarType kFloat64 = ScalarType::Float64;
inline constexpr ScalarType kDouble = ScalarType::Float64;

constexpr size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::Int32: return 4;
    case ScalarType::Int64: return 8;
    case ScalarType::Float32: return 4;
    case ScalarType::Float64: return 8;
    case ScalarType::Undefined: return 0;
  }
  return 0;
}

constexpr bool is_floating_type(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64;
}
constexpr bool is_integral_type(ScalarType t, bool include_bool) {
  return t == ScalarType::Int32 || t == ScalarType::Int64 ||
         (include_bool && t == ScalarType::Bool);
}

// libtorch's names, as its C++ messages print them: "Float", "Long", ...
const char* to_string(ScalarType t);
// Python's names without "torch.": "float32", "int64", ... — what users of torch read (the
// distributed layer's messages, the viewer's labels, print's dtype= suffix).
const char* dtype_name(ScalarType t);
std::ostream& operator<<(std::ostream& os, ScalarType t);

// The smallest type both a and b fit in (PyTorch's promoteTypes for these types).
constexpr ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  return static_cast<int8_t>(a) > static_cast<int8_t>(b) ? a : b;
}

// May a result of type `from` be written into a tensor of type `to` in place?
// Floats do not go into integers, and nothing but bool goes into bool (PyTorch's canCast).
constexpr bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_type(from) && is_integral_type(to, true)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

// The C++ type behind each ScalarType, and the reverse.
template <class T>
struct CppTypeToScalarType;
template <>
struct CppTypeToScalarType<bool> {
  static constexpr ScalarType value = kBool;
};
template <>
struct CppTypeToScalarType<int32_t> {
  static constexpr ScalarType value = kInt32;
};
template <>
struct CppTypeToScalarType<int64_t> {
  static constexpr ScalarType value = kInt64;
};
template <>
struct CppTypeToScalarType<float> {
  static constexpr ScalarType value = kFloat32;
};
template <>
struct CppTypeToScalarType<double> {
  static constexpr ScalarType value = kFloat64;
};
template <class T>
inline constexpr ScalarType scalar_type_of = CppTypeToScalarType<T>::value;

// Calls f.template operator()<T>() with T the C++ type of `t`: the one place where a
// runtime dtype becomes a compile-time type. Kernels are written once as templates:
//   dispatch_dtype(t, "add", [&]<class T>() { ... T ... });
template <class F>
decltype(auto) dispatch_dtype(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::Bool: return std::forward<F>(f).template operator()<bool>();
    case ScalarType::Int32: return std::forward<F>(f).template operator()<int32_t>();
    case ScalarType::Int64: return std::forward<F>(f).template operator()<int64_t>();
    case ScalarType::Float32: return std::forward<F>(f).template operator()<float>();
    case ScalarType::Float64: return std::forward<F>(f).template operator()<double>();
    case ScalarType::Undefined: break;
  }
  detail::throw_error(detail::str_cat(op, "(): undefined dtype"));
}

// Same, for kernels that make no sense on bool (arithmetic that PyTorch rejects on bool).
// f is never instantiated for bool, so a kernel template need not exist for it.
template <class F>
decltype(auto) dispatch_numeric(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::Int32: return std::forward<F>(f).template operator()<int32_t>();
    case ScalarType::Int64: return std::forward<F>(f).template operator()<int64_t>();
    case ScalarType::Float32: return std::forward<F>(f).template operator()<float>();
    case ScalarType::Float64: return std::forward<F>(f).template operator()<double>();
    case ScalarType::Bool: break;
    case ScalarType::Undefined: detail::throw_error(detail::str_cat(op, "(): undefined dtype"));
  }
  detail::throw_error(detail::str_cat(op, "(): not implemented for dtype Bool"));
}

template <class F>
decltype(auto) dispatch_floating(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::Float32: return std::forward<F>(f).template operator()<float>();
    case ScalarType::Float64: return std::forward<F>(f).template operator()<double>();
    default: break;
  }
  detail::throw_error(detail::str_cat(
      op, "(): expected a floating-point dtype (Float or Double), got ", to_string(t)));
}

}  // namespace glass
