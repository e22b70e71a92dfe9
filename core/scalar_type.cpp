// core/scalar_type.cpp — dtype names as PyTorch prints them.
#include "core/scalar_type.h"

namespace glass {

const char* to_string(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "Bool";
    case ScalarType::Int32: return "Int";
    case ScalarType::Int64: return "Long";
    case ScalarType::Float32: return "Float";
    case ScalarType::Float64: return "Double";
    case ScalarType::Undefined: return "Undefined";
  }
  return "Undefined";
}

const char* dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Int32: return "int32";
    case ScalarType::Int64: return "int64";
    case ScalarType::Float32: return "float32";
    case ScalarType::Float64: return "float64";
    case ScalarType::Undefined: return "undefined";
  }
  return "undefined";
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << to_string(t); }

}  // namespace glass
