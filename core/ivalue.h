// core/ivalue.h — one op argument (or result) in a generic, "boxed" form, like c10::IValue.
//
// An Op<Signature> is called with typed arguments; code that handles every op alike (the
// compiler's tracer, which records any call, and the graph it later replays) needs them in
// one type instead. An IValue holds any argument type an op in core takes: a tensor, a
// list of tensors, a shape, a number, a dtype, a device, the member of an op family, a
// generator, or nothing (an empty std::optional). It owns what it holds: an IntArrayRef
// argument is copied into a vector, so a boxed call outlives the braced list it came from.
// A Stack is the arguments of one call, first argument first; a call leaves its results
// there in their place.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/device_kernels.h"
#include "core/generator.h"
#include "core/tensor.h"

namespace glass {

class IValue {
 public:
  using Payload = std::variant<std::monostate, Tensor, std::vector<Tensor>, std::vector<int64_t>,
                               int64_t, double, bool, Scalar, ScalarType, Device, UnaryOp, BinaryOp,
                               ReduceOp, Generator>;

  IValue() = default;                                         // None
  IValue(Tensor t) : v_(std::move(t)) {}                      // NOLINT
  IValue(TensorList ts) : v_(ts.vec()) {}                     // NOLINT
  IValue(std::vector<Tensor> ts) : v_(std::move(ts)) {}       // NOLINT
  IValue(IntArrayRef ints) : v_(ints.vec()) {}                // NOLINT
  IValue(std::vector<int64_t> ints) : v_(std::move(ints)) {}  // NOLINT
  IValue(int64_t i) : v_(i) {}                                // NOLINT
  IValue(double d) : v_(d) {}                                 // NOLINT
  IValue(bool b) : v_(b) {}                                   // NOLINT
  IValue(Scalar s) : v_(s) {}                                 // NOLINT
  IValue(ScalarType t) : v_(t) {}                             // NOLINT
  IValue(Device d) : v_(d) {}                                 // NOLINT
  IValue(UnaryOp op) : v_(op) {}                              // NOLINT
  IValue(BinaryOp op) : v_(op) {}                             // NOLINT
  IValue(ReduceOp op) : v_(op) {}                             // NOLINT
  IValue(Generator g) : v_(std::move(g)) {}                   // NOLINT
  template <class T>
  IValue(const std::optional<T>& o) {  // NOLINT: nullopt is None
    if (o) *this = IValue(*o);
  }

  bool is_none() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_tensor() const { return std::holds_alternative<Tensor>(v_); }
  bool is_tensor_list() const { return std::holds_alternative<std::vector<Tensor>>(v_); }
  template <class T>
  bool holds() const {
    return std::holds_alternative<T>(v_);
  }

  // The held value; asking for the wrong type is an error naming both types.
  template <class T>
  const T& get() const {
    const T* p = std::get_if<T>(&v_);
    if (p == nullptr) wrong_type(type_name_of<T>());
    return *p;
  }
  template <class T>
  T& get() {
    T* p = std::get_if<T>(&v_);
    if (p == nullptr) wrong_type(type_name_of<T>());
    return *p;
  }
  const Tensor& tensor() const { return get<Tensor>(); }
  Tensor& tensor() { return get<Tensor>(); }

  const Payload& payload() const { return v_; }
  // "Tensor", "int[]", "Scalar", ... — the type of what is held now.
  const char* type_name() const;
  // The value as a schema or a graph dump shows it: a tensor by its shape and dtype.
  std::string to_string() const;

  template <class T>
  static const char* type_name_of();

 private:
  [[noreturn]] void wrong_type(const char* wanted) const;
  Payload v_;
};

std::ostream& operator<<(std::ostream& os, const IValue& v);

namespace dispatch {
// glass::dispatch::Stack (as torch::jit::Stack): in glass:: itself the name would collide with
// users' own (a module called Stack, say).
using Stack = std::vector<IValue>;
}  // namespace dispatch

// ---- from a typed argument to an IValue and back ------------------------------------------
//
// unbox<T>(v) gives what a parameter of type T binds to. It returns references into the
// IValue where it can: an in-place op's `Tensor&` writes through the IValue's handle, which
// shares its TensorImpl with the caller's tensor, and an IntArrayRef points into the IValue's
// vector, which lives on the stack for the whole call.
namespace boxing {

template <class T>
struct Unbox {
  using Plain = std::remove_cvref_t<T>;
  static decltype(auto) get(IValue& v) {
    if constexpr (std::is_same_v<Plain, IntArrayRef>)
      return IntArrayRef(v.get<std::vector<int64_t>>());
    else if constexpr (std::is_same_v<Plain, TensorList>)
      return TensorList(v.get<std::vector<Tensor>>());
    else if constexpr (std::is_lvalue_reference_v<T> &&
                       !std::is_const_v<std::remove_reference_t<T>>)
      return static_cast<T>(v.get<Plain>());
    else
      return static_cast<const Plain&>(v.get<Plain>());
  }
};
template <class U>
struct Unbox<std::optional<U>> {
  static std::optional<U> get(IValue& v) {
    if (v.is_none()) return std::nullopt;
    return std::optional<U>(v.get<U>());
  }
};
template <class U>
struct Unbox<const std::optional<U>&> : Unbox<std::optional<U>> {};

template <class T>
inline constexpr bool is_optional_v = false;
template <class U>
inline constexpr bool is_optional_v<std::optional<U>> = true;

// The schema's spelling of a parameter or result type: "Tensor", "Tensor(a!)" for one an op
// writes in place, "int[]", "Scalar?", ...
template <class T>
std::string type_name() {
  using Plain = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<Plain, Tensor>)
    return std::is_lvalue_reference_v<T> && !std::is_const_v<std::remove_reference_t<T>>
               ? "Tensor(a!)"
               : "Tensor";
  else if constexpr (std::is_same_v<Plain, TensorList>)
    return "Tensor[]";
  else if constexpr (std::is_same_v<Plain, IntArrayRef>)
    return "int[]";
  else if constexpr (std::is_same_v<Plain, void>)
    return "()";
  else if constexpr (is_optional_v<Plain>)
    return type_name<typename Plain::value_type>() + "?";
  else if constexpr (requires { std::tuple_size<Plain>::value; }) {
    std::string s = "(";
    [&]<size_t... I>(std::index_sequence<I...>) {
      ((s += (I ? ", " : "") + type_name<std::tuple_element_t<I, Plain>>()), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<Plain>>{});
    return s + ")";
  } else
    return IValue::type_name_of<Plain>();
}

// True for a parameter an op writes into (a non-const Tensor&).
template <class T>
inline constexpr bool is_mutable_tensor_v =
    std::is_lvalue_reference_v<T> && !std::is_const_v<std::remove_reference_t<T>> &&
    std::is_same_v<std::remove_cvref_t<T>, Tensor>;

}  // namespace boxing

template <class T>
const char* IValue::type_name_of() {
  if constexpr (std::is_same_v<T, Tensor>)
    return "Tensor";
  else if constexpr (std::is_same_v<T, std::vector<Tensor>>)
    return "Tensor[]";
  else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
    return "int[]";
  else if constexpr (std::is_same_v<T, int64_t>)
    return "int";
  else if constexpr (std::is_same_v<T, double>)
    return "float";
  else if constexpr (std::is_same_v<T, bool>)
    return "bool";
  else if constexpr (std::is_same_v<T, Scalar>)
    return "Scalar";
  else if constexpr (std::is_same_v<T, ScalarType>)
    return "ScalarType";
  else if constexpr (std::is_same_v<T, Device>)
    return "Device";
  else if constexpr (std::is_same_v<T, UnaryOp>)
    return "UnaryOp";
  else if constexpr (std::is_same_v<T, BinaryOp>)
    return "BinaryOp";
  else if constexpr (std::is_same_v<T, ReduceOp>)
    return "ReduceOp";
  else if constexpr (std::is_same_v<T, Generator>)
    return "Generator";
  else if constexpr (std::is_same_v<T, std::monostate>)
    return "None";
  else
    static_assert(sizeof(T) == 0, "no IValue form for this argument type");
}

}  // namespace glass
