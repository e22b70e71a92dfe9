// core/tensor.cpp — the Tensor methods that are not ops: item (a thin call of ops::item),
// requires_grad_, set_data, names.
#include "core/tensor.h"

#include "core/dispatcher.h"
#include "core/ops/read_value.h"

#include <sstream>

namespace glass {

Scalar Tensor::item() const { return ops::item(*this); }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  GLASS_CHECK(!requires_grad || is_floating_point(),
              "requires_grad_(): only Tensors of floating point "
              "dtype can require gradients, got ",
              to_string(dtype()), " (convert with .to(glass::kFloat) first)");
  checked_impl()->set_requires_grad(requires_grad);
  return *this;
}

void Tensor::set_data(const Tensor& new_data) const {
  GLASS_CHECK(new_data.defined(), "set_data(): new_data is an undefined tensor");
  GLASS_CHECK(!requires_grad() || new_data.is_floating_point(),
              "set_data(): this tensor requires grad, so its data must stay floating point, got ",
              to_string(new_data.dtype()));
  checked_impl()->shallow_copy_from(*new_data.unsafeGetTensorImpl());
}

std::string Tensor::toString() const {
  if (!defined()) return "UndefinedType";
  std::ostringstream s;
  s << (is_cpu() ? "CPU" : "CUDA") << to_string(dtype()) << "Type{";
  for (int64_t d = 0; d < dim(); ++d) s << (d ? "," : "") << size(d);
  s << "}";
  return s.str();
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.is_floating_point()) return os << s.toDouble();
  if (s.is_boolean()) return os << (s.toBool() ? "true" : "false");
  return os << s.toLong();
}

}  // namespace glass
