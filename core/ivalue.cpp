// core/ivalue.cpp — how an IValue names its type and prints itself.
#include "core/ivalue.h"

#include <sstream>

#include "core/error.h"

namespace glass {

const char* IValue::type_name() const {
  return std::visit([](const auto& v) { return type_name_of<std::remove_cvref_t<decltype(v)>>(); },
                    v_);
}

void IValue::wrong_type(const char* wanted) const {
  GLASS_CHECK(false, "IValue: asked for a ", wanted, " but it holds a ", type_name());
  __builtin_unreachable();
}

std::string IValue::to_string() const {
  std::ostringstream os;
  std::visit(
      [&](const auto& v) {
        using T = std::remove_cvref_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          os << "None";
        } else if constexpr (std::is_same_v<T, Tensor>) {
          if (!v.defined())
            os << "Tensor(undefined)";
          else
            os << "Tensor" << v.sizes() << ":" << glass::to_string(v.dtype());
        } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
          os << "[";
          for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << IValue(v[i]).to_string();
          os << "]";
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          os << IntArrayRef(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          os << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<T, ScalarType>) {
          os << glass::to_string(v);
        } else if constexpr (std::is_same_v<T, UnaryOp> || std::is_same_v<T, BinaryOp> ||
                             std::is_same_v<T, ReduceOp>) {
          os << glass::to_string(v);
        } else if constexpr (std::is_same_v<T, Generator>) {
          os << (v.defined() ? "Generator" : "Generator(undefined)");
        } else {
          os << v;
        }
      },
      v_);
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const IValue& v) { return os << v.to_string(); }

}  // namespace glass
