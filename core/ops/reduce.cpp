// core/ops/reduce.cpp — reductions (see reduce.h).
//
// [SECTION] primitives     [SECTION] composites     [SECTION] Tensor methods
#include "core/ops/reduce.h"

#include <cmath>
#include <limits>
#include <vector>

#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/ops/views.h"
#include "core/shape.h"
#include "core/tensor_iterator.h"

namespace glass {
namespace {

// [SECTION] primitives -------------------------------------------------------------------

// Which dims a reduction removes, as a mask; checks range and duplicates.
std::vector<bool> reduced_dims(const Tensor& x, IntArrayRef dim, const char* op) {
  std::vector<bool> mask(x.dim(), dim.empty());
  for (int64_t d : dim) {
    int64_t w = wrap_dim(d, x.dim(), op);
    if (x.dim() == 0) continue;
    GLASS_CHECK(!mask[w], op, "(): dim ", w, " appears multiple times in the list of dims ", dim);
    mask[w] = true;
  }
  return mask;
}

Shape keepdim_shape(const Tensor& x, const std::vector<bool>& mask) {
  Shape s = x.sizes().vec();
  for (size_t d = 0; d < s.size(); ++d)
    if (mask[d]) s[d] = 1;
  return s;
}

Shape result_shape(const Tensor& x, const std::vector<bool>& mask, bool keepdim) {
  if (keepdim) return keepdim_shape(x, mask);
  Shape s;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (!mask[d]) s.push_back(x.size(d));
  return s;
}

Scalar identity(ReduceOp op, ScalarType t) {
  switch (op) {
    case ReduceOp::Sum: return 0;
    case ReduceOp::Prod: return 1;
    case ReduceOp::Max:
      if (is_floating_type(t)) return -std::numeric_limits<double>::infinity();
      return t == kBool ? Scalar(false) : Scalar(t == kInt32 ? INT32_MIN : INT64_MIN);
    case ReduceOp::Min:
      if (is_floating_type(t)) return std::numeric_limits<double>::infinity();
      return t == kBool ? Scalar(true) : Scalar(t == kInt32 ? INT32_MAX : INT64_MAX);
  }
  return 0;
}

Tensor reduce_native(ReduceOp op, const Tensor& x, IntArrayRef dim, bool keepdim,
                     std::optional<ScalarType> dtype) {
  const char* name = to_string(op);
  GLASS_CHECK(x.defined(), name, "(): expected a defined tensor");
  std::vector<bool> mask = reduced_dims(x, dim, name);
  if (op == ReduceOp::Max || op == ReduceOp::Min) {
    if (x.numel() == 0) {
      GLASS_CHECK(!dim.empty(), name,
                  "(): expected reduction dim to be specified for input.numel() == 0 "
                  "(an empty tensor has no maximum or minimum). Specify the reduction dim with the "
                  "'dim' argument.");
      for (int64_t d = 0; d < x.dim(); ++d)
        GLASS_CHECK(!(mask[d] && x.size(d) == 0), name, "(): expected reduction dim ", d,
                    " to have non-zero size (the tensor has shape ", x.sizes(), ")");
    }
  }
  ScalarType out_dtype = x.dtype();
  if (op == ReduceOp::Sum || op == ReduceOp::Prod) {
    out_dtype = dtype.value_or(is_integral_type(x.dtype(), true) ? kInt64 : x.dtype());
  }
  Tensor out = empty(keepdim_shape(x, mask), TensorOptions(out_dtype).device(x.device()));
  detail::fill_into(out, identity(op, out_dtype));
  TensorIteratorConfig cfg(name);
  cfg.add_output(out).add_input(x).is_reduction(true).declare_static_common_dtype(out_dtype);
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).reduce(iter, op);
  iter.cast_outputs();
  return keepdim ? out : out.view(result_shape(x, mask, false));
}

// Views x contiguously as (outer, n, inner) around `dim`.
struct Split3 {
  int64_t outer = 1, n = 1, inner = 1;
};
Split3 split_at(const Tensor& x, int64_t d) {
  Split3 s;
  if (x.dim() == 0) return s;
  for (int64_t i = 0; i < d; ++i) s.outer *= x.size(i);
  s.n = x.size(d);
  for (int64_t i = d + 1; i < x.dim(); ++i) s.inner *= x.size(i);
  return s;
}

std::tuple<Tensor, Tensor> max_dim_native(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "max" : "min";
  GLASS_CHECK(x.defined(), name, "(): expected a defined tensor");
  int64_t d = wrap_dim(dim, x.dim(), name);
  GLASS_CHECK(x.dim() == 0 || x.size(d) > 0, name, "(): expected reduction dim ", d,
              " to have non-zero size (the tensor has shape ", x.sizes(), ")");
  std::vector<bool> mask(x.dim(), false);
  if (x.dim() > 0) mask[d] = true;
  Split3 s = split_at(x, d);
  Tensor values = empty(keepdim_shape(x, mask), x.options());
  Tensor indices = empty(keepdim_shape(x, mask), TensorOptions(kInt64).device(x.device()));
  kernels_for(x.device())
      .arg_reduce(x.contiguous(), s.outer, s.n, s.inner, is_max, values, indices);
  if (keepdim) return {values, indices};
  Shape rs = result_shape(x, mask, false);
  return {values.view(rs), indices.view(rs)};
}

Tensor softmax_native(const Tensor& x, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  GLASS_CHECK(x.defined(), name, "(): expected a defined tensor");
  GLASS_CHECK(x.is_floating_point(), name, "(): expected a floating-point tensor, got ",
              to_string(x.dtype()), " (convert with .to(glass::kFloat) or pass dtype)");
  int64_t d = wrap_dim(dim, x.dim(), name);
  Split3 s = split_at(x, d);
  Tensor out = empty(x.sizes(), x.options());
  if (x.numel() > 0)
    kernels_for(x.device()).softmax(x.contiguous(), s.outer, s.n, s.inner, log, out);
  return out;
}

}  // namespace

namespace ops {
Op<Tensor(ReduceOp, const Tensor&, IntArrayRef, bool, std::optional<ScalarType>)> reduce(
    "reduce", &reduce_native);
Op<std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool, bool)> max_dim("max_dim",
                                                                           &max_dim_native);
Op<Tensor(const Tensor&, int64_t, bool)> softmax("softmax", &softmax_native);
namespace {
const bool registered = dispatch::register_ops({&reduce, &max_dim, &softmax});
}  // namespace
}  // namespace ops

// [SECTION] composites -------------------------------------------------------------------

Tensor sum(const Tensor& x, std::optional<ScalarType> dtype) {
  return ops::reduce(ReduceOp::Sum, x, {}, false, dtype);
}
Tensor sum(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return ops::reduce(ReduceOp::Sum, x, dim, keepdim, dtype);
}
Tensor prod(const Tensor& x, std::optional<ScalarType> dtype) {
  return ops::reduce(ReduceOp::Prod, x, {}, false, dtype);
}
Tensor amax(const Tensor& x, IntArrayRef dim, bool keepdim) {
  return ops::reduce(ReduceOp::Max, x, dim, keepdim, std::nullopt);
}
Tensor amin(const Tensor& x, IntArrayRef dim, bool keepdim) {
  return ops::reduce(ReduceOp::Min, x, dim, keepdim, std::nullopt);
}

namespace {
// Number of elements each output of a reduction over `dim` combines.
int64_t reduced_count(const Tensor& x, IntArrayRef dim) {
  std::vector<bool> mask = reduced_dims(x, dim, "mean");
  int64_t n = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (mask[d]) n *= x.size(d);
  return n;
}

void check_floating(const Tensor& x, std::optional<ScalarType> dtype, const char* op) {
  ScalarType t = dtype.value_or(x.dtype());
  GLASS_CHECK(is_floating_type(t), op,
              "(): could not infer output dtype. Input dtype must be a "
              "floating point dtype, got ",
              to_string(t), " (pass dtype=glass::kFloat or convert with .to())");
}
}  // namespace

Tensor mean(const Tensor& x, std::optional<ScalarType> dtype) { return mean(x, {}, false, dtype); }
Tensor mean(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  check_floating(x, dtype, "mean");
  Tensor s = sum(x, dim, keepdim, dtype);
  return div(s, static_cast<double>(reduced_count(x, dim)));
}

Tensor var(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) {
  check_floating(x, std::nullopt, "var");
  Tensor mu = mean(x, dim, true);
  Tensor diff = sub(x, mu);
  Tensor ss = sum(mul(diff, diff), dim, keepdim);
  int64_t n = reduced_count(x, dim) - (unbiased ? 1 : 0);
  // n <= 0 gives inf or nan, as in PyTorch (which also warns).
  return div(ss, static_cast<double>(std::max<int64_t>(n, 0)));
}

Tensor std(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) {
  return sqrt(var(x, dim, unbiased, keepdim));
}

Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim) {
  Tensor xf = x.is_floating_point() ? x : x.to(get_default_dtype());
  Tensor m = amax(xf, dim, true).detach();
  // An all -inf (or +inf) slice would give inf - inf = nan; shift by 0 there instead.
  m = masked_fill(m, abs(m) == std::numeric_limits<double>::infinity(), 0);
  Tensor out = add(log(sum(exp(sub(xf, m)), dim, true)), m);
  if (keepdim) return out;
  std::vector<bool> mask = reduced_dims(x, dim, "logsumexp");
  return out.view(result_shape(x, mask, false));
}

Tensor norm(const Tensor& x, const Scalar& p, IntArrayRef dim, bool keepdim) {
  check_floating(x, std::nullopt, "norm");
  double pv = p.toDouble();
  if (pv == 2) return sqrt(sum(mul(x, x), dim, keepdim));
  if (pv == 1) return sum(abs(x), dim, keepdim);
  if (std::isinf(pv)) return pv > 0 ? amax(abs(x), dim, keepdim) : amin(abs(x), dim, keepdim);
  if (pv == 0) return sum(ne(x, wrapped_scalar_tensor(0)).to(x.dtype()), dim, keepdim);
  return pow(sum(pow(abs(x), pv), dim, keepdim), 1.0 / pv);
}

std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return ops::max_dim(x, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return ops::max_dim(x, dim, keepdim, false);
}

namespace {
Tensor arg_reduce(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  if (dim) return std::get<1>(ops::max_dim(x, *dim, keepdim, is_max));
  GLASS_CHECK(x.numel() > 0, is_max ? "argmax" : "argmin",
              "(): expected reduction dim to be "
              "specified for input.numel() == 0");
  Tensor idx = std::get<1>(ops::max_dim(x.reshape({-1}), 0, false, is_max));
  return keepdim ? idx.view(Shape(x.dim(), 1)) : idx;
}
}  // namespace

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce(x, dim, keepdim, true);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce(x, dim, keepdim, false);
}

Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return ops::softmax(dtype ? x.to(*dtype) : x, dim, false);
}
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  return ops::softmax(dtype ? x.to(*dtype) : x, dim, true);
}

// [SECTION] Tensor methods ------------------------------------------------------------------

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return glass::sum(*this, dtype); }
Tensor Tensor::sum(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return glass::sum(*this, dim, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return glass::mean(*this, dtype); }
Tensor Tensor::mean(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return glass::mean(*this, dim, keepdim, dtype);
}
Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return glass::prod(*this, dtype); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ops::reduce(ReduceOp::Prod, *this, dim, keepdim, dtype);
}
Tensor Tensor::max() const { return ops::reduce(ReduceOp::Max, *this, {}, false, std::nullopt); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return glass::max(*this, dim, keepdim);
}
Tensor Tensor::min() const { return ops::reduce(ReduceOp::Min, *this, {}, false, std::nullopt); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return glass::min(*this, dim, keepdim);
}
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return glass::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return glass::argmin(*this, dim, keepdim);
}
Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const {
  return glass::amax(*this, dim, keepdim);
}
Tensor Tensor::amin(IntArrayRef dim, bool keepdim) const {
  return glass::amin(*this, dim, keepdim);
}
Tensor Tensor::var(IntArrayRef dim, bool unbiased, bool keepdim) const {
  return glass::var(*this, dim, unbiased, keepdim);
}
Tensor Tensor::std(IntArrayRef dim, bool unbiased, bool keepdim) const {
  return glass::std(*this, dim, unbiased, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dim, bool keepdim) const {
  return glass::logsumexp(*this, dim, keepdim);
}
Tensor Tensor::norm(const Scalar& p) const { return glass::norm(*this, p); }
Tensor Tensor::norm(const Scalar& p, IntArrayRef dim, bool keepdim) const {
  return glass::norm(*this, p, dim, keepdim);
}
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return glass::softmax(*this, dim, dtype);
}
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return glass::log_softmax(*this, dim, dtype);
}

}  // namespace glass
