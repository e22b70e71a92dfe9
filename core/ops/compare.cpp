// core/ops/compare.cpp — isclose, allclose and equal (see compare.h).
#include "core/ops/compare.h"

#include <limits>

#include "core/ops/pointwise.h"
#include "core/ops/reduce.h"
#include "core/shape.h"

namespace glass {
namespace {

void check_pair(const Tensor& a, const Tensor& b, const char* op) {
  GLASS_CHECK(a.defined() && b.defined(), op, "(): expected two defined tensors");
}

// True when no element of the Bool tensor t is false (read back to the host).
bool all_true(const Tensor& t) { return logical_not(t).sum().item<int64_t>() == 0; }

}  // namespace

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_pair(a, b, "isclose");
  GLASS_CHECK(a.dtype() == b.dtype(), "isclose(): expected both tensors to have the same dtype, ",
              "but got ", to_string(a.dtype()), " and ", to_string(b.dtype()),
              " (convert one with .to(other.dtype()))");
  GLASS_CHECK(rtol >= 0, "isclose(): rtol must be greater than or equal to zero, but got ", rtol);
  GLASS_CHECK(atol >= 0, "isclose(): atol must be greater than or equal to zero, but got ", atol);
  broadcast_shapes(a.sizes(), b.sizes(), "isclose");  // the error names isclose, not eq
  Tensor close = eq(a, b);  // catches inf == inf, where the difference below is nan
  if (equal_nan && a.is_floating_point()) close = close | (ne(a, a) & ne(b, b));
  if (rtol == 0 && atol == 0) return close;
  // Bool has no subtraction; compare its values as numbers.
  Tensor fa = a.dtype() == kBool ? a.to(get_default_dtype()) : a;
  Tensor fb = b.dtype() == kBool ? b.to(get_default_dtype()) : b;
  Tensor allowed = atol + (rtol * fb).abs();
  Tensor actual = (fa - fb).abs();
  // actual < inf: finite (nan compares false), so inf - inf never passes as "close".
  Tensor finite = actual < std::numeric_limits<double>::infinity();
  return close | (finite & (actual <= allowed));
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return all_true(isclose(a, b, rtol, atol, equal_nan));
}

bool equal(const Tensor& a, const Tensor& b) {
  check_pair(a, b, "equal");
  GLASS_CHECK(a.device() == b.device(),
              "equal(): expected both tensors to be on the same device, but got ", a.device(),
              " and ", b.device(), " (move one with .to(other.device()))");
  return a.sizes() == b.sizes() && all_true(eq(a, b));
}

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return glass::isclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return glass::allclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& other) const { return glass::equal(*this, other); }

}  // namespace glass
