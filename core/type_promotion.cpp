// core/type_promotion.cpp — PyTorch's three-tier result_type (see the header).
#include "core/type_promotion.h"

namespace glass {
namespace {

int category(ScalarType t) {
  if (t == ScalarType::Undefined) return -1;
  if (t == kBool) return 0;
  return is_floating_type(t) ? 2 : 1;
}

// The higher tier wins unless the lower tier is of a higher category.
ScalarType combine(ScalarType higher, ScalarType lower) {
  if (higher == ScalarType::Undefined) return lower;
  if (lower == ScalarType::Undefined) return higher;
  return category(lower) > category(higher) ? promote_types(higher, lower) : higher;
}

}  // namespace

ScalarType result_type(TensorList operands) {
  ScalarType dim_result = ScalarType::Undefined;
  ScalarType zero_dim_result = ScalarType::Undefined;
  ScalarType wrapped_result = ScalarType::Undefined;
  for (const Tensor& t : operands) {
    if (!t.defined()) continue;
    ScalarType current = t.dtype();
    if (t.unsafeGetTensorImpl()->is_wrapped_number()) {
      if (is_floating_type(current)) current = get_default_dtype();
      wrapped_result = promote_types(wrapped_result, current);
    } else if (t.dim() == 0) {
      zero_dim_result = promote_types(zero_dim_result, current);
    } else {
      dim_result = promote_types(dim_result, current);
    }
  }
  return combine(dim_result, combine(zero_dim_result, wrapped_result));
}

ScalarType result_type(const Tensor& a, const Tensor& b) { return result_type({a, b}); }

ScalarType result_type(const Tensor& a, const Scalar& b) {
  ScalarType s = b.is_floating_point() ? get_default_dtype() : b.type();
  return combine(a.dim() == 0 ? ScalarType::Undefined : a.dtype(),
                 combine(a.dim() == 0 ? a.dtype() : ScalarType::Undefined, s));
}

}  // namespace glass
