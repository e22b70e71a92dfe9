// core/ops/pointwise.cpp — elementwise ops (see pointwise.h).
//
// [SECTION] op names      [SECTION] native implementations     [SECTION] dispatched ops
// [SECTION] public functions and operators                      [SECTION] Tensor methods
#include "core/ops/pointwise.h"

#include "core/device_guard.h"
#include "core/ops/factories.h"
#include "core/ops/views.h"
#include "core/shape.h"
#include "core/tensor_iterator.h"
#include "core/type_promotion.h"

namespace glass {

// [SECTION] op names ---------------------------------------------------------------------

// Each op's name and its in-place spelling side by side, so the two cannot drift apart.
// Static strings: core's events carry them (Note [Op names in events], dispatcher.h).
const char* to_string(UnaryOp op) {
  static const char* names[] = {"neg",  "abs",  "exp",         "log",     "sqrt", "rsqrt",
                                "sin",  "cos",  "tanh",        "sigmoid", "relu", "gelu",
                                "gelu", "sign", "logical_not", "log1p"};
  return names[static_cast<int>(op)];
}
const char* inplace_name(UnaryOp op) {
  static const char* names[] = {"neg_",  "abs_",  "exp_",         "log_",     "sqrt_", "rsqrt_",
                                "sin_",  "cos_",  "tanh_",        "sigmoid_", "relu_", "gelu_",
                                "gelu_", "sign_", "logical_not_", "log1p_"};
  return names[static_cast<int>(op)];
}

const char* to_string(BinaryOp op) {
  static const char* names[] = {"add", "sub", "mul", "div", "pow", "maximum",     "minimum",   "eq",
                                "ne",  "lt",  "le",  "gt",  "ge",  "logical_and", "logical_or"};
  return names[static_cast<int>(op)];
}
const char* inplace_name(BinaryOp op) {
  static const char* names[] = {"add_",     "sub_",     "mul_", "div_",         "pow_",
                                "maximum_", "minimum_", "eq_",  "ne_",          "lt_",
                                "le_",      "gt_",      "ge_",  "logical_and_", "logical_or_"};
  return names[static_cast<int>(op)];
}

const char* to_string(ReduceOp op) {
  static const char* names[] = {"sum", "prod", "amax", "amin"};
  return names[static_cast<int>(op)];
}

namespace {

// [SECTION] native implementations -------------------------------------------------------

void check_defined(const Tensor& t, const char* op, const char* arg = "input") {
  GLASS_CHECK(t.defined(), op, "(): expected a defined tensor for '", arg,
              "', got an undefined one");
}

void bump(const Tensor& t) { t.unsafeGetTensorImpl()->bump_version(); }

void configure_unary(TensorIteratorConfig& cfg, UnaryOp op, ScalarType in) {
  switch (op) {
    case UnaryOp::Neg:
      GLASS_CHECK(in != kBool,
                  "neg(): negation, the `-` operator, on a bool tensor is not "
                  "supported. Use logical_not() or the `~` operator instead.");
      break;
    case UnaryOp::Abs:
    case UnaryOp::Relu:
    case UnaryOp::Sign:
      GLASS_CHECK(in != kBool || op == UnaryOp::Sign, to_string(op),
                  "(): not implemented for 'Bool'");
      break;
    case UnaryOp::LogicalNot: cfg.declare_static_common_dtype(kBool); break;
    default:  // exp, log, ...: integer inputs compute in the default float dtype
      cfg.promote_integer_inputs_to_float(true);
  }
}

Tensor unary_native(UnaryOp op, const Tensor& x) {
  check_defined(x, to_string(op));
  TensorIteratorConfig cfg(to_string(op));
  cfg.add_output(Tensor()).add_input(x);
  configure_unary(cfg, op, x.dtype());
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).unary(iter, op);
  return iter.output();
}

Tensor& unary_inplace_native(UnaryOp op, Tensor& x) {
  check_defined(x, to_string(op));
  TensorIteratorConfig cfg(to_string(op));
  cfg.add_output(x).add_input(x).is_inplace(true);
  configure_unary(cfg, op, x.dtype());
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).unary(iter, op);
  iter.cast_outputs();
  bump(x);
  return x;
}

void configure_binary(TensorIteratorConfig& cfg, BinaryOp op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case BinaryOp::Sub:
      GLASS_CHECK(!(a.dtype() == kBool && b.dtype() == kBool),
                  "sub(): subtraction, the `-` operator, with two bool tensors is not supported. "
                  "Use the `^` or logical_xor() operator instead.");
      break;
    case BinaryOp::Div:
      cfg.promote_integer_inputs_to_float(true);  // true division, as in Python 3
      break;
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr: cfg.declare_static_common_dtype(kBool); break;
    default: break;
  }
  if (is_comparison(op)) cfg.declare_static_output_dtype(kBool);
}

Tensor binary_native(BinaryOp op, const Tensor& a, const Tensor& b) {
  check_defined(a, to_string(op), "self");
  check_defined(b, to_string(op), "other");
  TensorIteratorConfig cfg(to_string(op));
  cfg.add_output(Tensor()).add_input(a).add_input(b);
  configure_binary(cfg, op, a, b);
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).binary(iter, op);
  return iter.output();
}

Tensor& binary_out_impl(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, bool inplace) {
  check_defined(a, to_string(op), "self");
  check_defined(b, to_string(op), "other");
  check_defined(out, to_string(op), "out");
  TensorIteratorConfig cfg(to_string(op));
  cfg.add_output(out).add_input(a).add_input(b).is_inplace(inplace);
  configure_binary(cfg, op, a, b);
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).binary(iter, op);
  iter.cast_outputs();
  bump(out);
  return out;
}

Tensor& binary_inplace_native(BinaryOp op, Tensor& self, const Tensor& other) {
  return binary_out_impl(op, self, self, other, true);
}

void check_clamp(const Tensor& x, const std::optional<Scalar>& lo,
                 const std::optional<Scalar>& hi) {
  check_defined(x, "clamp");
  GLASS_CHECK(lo || hi, "clamp(): at least one of 'min' or 'max' must not be None");
  GLASS_CHECK(x.dtype() != kBool, "clamp(): not implemented for 'Bool'");
}

Tensor clamp_native(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  check_clamp(x, lo, hi);
  // clamp(int_tensor, 0.5) is Float, as in PyTorch: the bounds take part in promotion.
  ScalarType t = x.dtype();
  if (lo) t = promote_types(t, result_type(x, *lo));
  if (hi) t = promote_types(t, result_type(x, *hi));
  TensorIteratorConfig cfg("clamp");
  cfg.add_output(Tensor()).add_input(x).declare_static_common_dtype(t);
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).clamp(iter, lo, hi);
  return iter.output();
}

Tensor& clamp_inplace_native(Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  check_clamp(x, lo, hi);
  TensorIteratorConfig cfg("clamp_");
  cfg.add_output(x).add_input(x).is_inplace(true).check_all_same_dtype(true);
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).clamp(iter, lo, hi);
  bump(x);
  return x;
}

Tensor where_native(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_defined(cond, "where", "condition");
  check_defined(a, "where", "self");
  check_defined(b, "where", "other");
  GLASS_CHECK(cond.dtype() == kBool,
              "where(): expected condition to be a boolean tensor, but got a "
              "tensor with dtype ",
              to_string(cond.dtype()), " (compare it, e.g. x > 0, to get one)");
  TensorIteratorConfig cfg("where");
  cfg.add_output(Tensor()).add_const_input(cond).add_input(a).add_input(b);
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).where(iter);
  return iter.output();
}

Tensor& masked_fill_native(Tensor& self, const Tensor& mask, const Scalar& value) {
  check_defined(self, "masked_fill_", "self");
  check_defined(mask, "masked_fill_", "mask");
  GLASS_CHECK(mask.dtype() == kBool, "masked_fill_(): expected the mask to be a Bool tensor, got ",
              to_string(mask.dtype()));
  GLASS_CHECK(is_expandable_to(mask.sizes(), self.sizes()), "masked_fill_(): mask of shape ",
              mask.sizes(), " cannot be broadcast to the tensor's shape ", self.sizes());
  TensorIteratorConfig cfg("masked_fill_");
  cfg.add_output(self).add_input(self).add_const_input(mask.expand(self.sizes())).is_inplace(true);
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).masked_fill(iter, value);
  iter.cast_outputs();
  bump(self);
  return self;
}

// Fills a freshly made tensor without counting it as an in-place write: a new tensor
// starts at version 0, as in PyTorch (factories, clone and to() use these).
void copy_into_native(Tensor& self, const Tensor& src, bool non_blocking) {
  check_defined(self, "copy_", "self");
  check_defined(src, "copy_", "src");
  if (self.is_same(src)) return;
  GLASS_CHECK(is_expandable_to(src.sizes(), self.sizes()), "copy_(): the source of shape ",
              src.sizes(), " cannot be broadcast to the destination shape ", self.sizes());
  Tensor s = src;
  if (self.device() != src.device()) {
    const DeviceKernels& k = kernels_for(self.is_cpu() ? src.device() : self.device());
    GLASS_CHECK(k.cross_device_copy != nullptr, "copy_(): copying from ", src.device(), " to ",
                self.device(), " is not supported by this build");
    k.cross_device_copy(self, s.expand(self.sizes()), non_blocking);
    return;
  }
  // An overlapping source (x.copy_(x.t())) is read in full before anything is written.
  if (s.is_alias_of(self)) s = ops::clone(s);
  TensorIteratorConfig cfg("copy_");
  cfg.add_output(self)
      .add_const_input(s.expand(self.sizes()))
      .declare_static_common_dtype(self.dtype());
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).copy(iter);
}

void fill_into_native(Tensor& self, const Scalar& value) {
  check_defined(self, "fill_", "self");
  TensorIteratorConfig cfg("fill_");
  cfg.add_output(self).declare_static_common_dtype(self.dtype());
  TensorIterator iter = cfg.build();
  kernels_for(iter.device()).fill(iter, value);
}

Tensor& copy_native(Tensor& self, const Tensor& src, bool non_blocking) {
  detail::copy_into(self, src, non_blocking);
  if (!self.is_same(src)) bump(self);
  return self;
}

Tensor& fill_native(Tensor& self, const Scalar& value) {
  detail::fill_into(self, value);
  bump(self);
  return self;
}

Tensor to_copy_native(const Tensor& self, ScalarType dtype, Device device, bool non_blocking) {
  check_defined(self, "to", "self");
  Tensor out = empty(self.sizes(), TensorOptions(dtype).device(device));
  detail::copy_into(out, self, non_blocking);
  return out;
}

}  // namespace

// [SECTION] dispatched ops ----------------------------------------------------------------

namespace ops {
Op<Tensor(UnaryOp, const Tensor&)> unary("unary", &unary_native);
Op<Tensor&(UnaryOp, Tensor&)> unary_("unary_", &unary_inplace_native);
Op<Tensor(BinaryOp, const Tensor&, const Tensor&)> binary("binary", &binary_native);
Op<Tensor&(BinaryOp, Tensor&, const Tensor&)> binary_("binary_", &binary_inplace_native);
Op<Tensor(const Tensor&, std::optional<Scalar>, std::optional<Scalar>)> clamp("clamp",
                                                                              &clamp_native);
Op<Tensor&(Tensor&, std::optional<Scalar>, std::optional<Scalar>)> clamp_("clamp_",
                                                                          &clamp_inplace_native);
Op<Tensor(const Tensor&, const Tensor&, const Tensor&)> where("where", &where_native);
Op<Tensor&(Tensor&, const Tensor&, const Scalar&)> masked_fill_("masked_fill_",
                                                                &masked_fill_native);
Op<Tensor&(Tensor&, const Tensor&, bool)> copy_("copy_", &copy_native);
Op<Tensor&(Tensor&, const Scalar&)> fill_("fill_", &fill_native);
Op<Tensor(const Tensor&, ScalarType, Device, bool)> to_copy("to_copy", &to_copy_native);
Op<void(Tensor&, const Tensor&, bool)> copy_into("copy_into", &copy_into_native);
Op<void(Tensor&, const Scalar&)> fill_into("fill_into", &fill_into_native);
namespace {
const bool registered =
    dispatch::register_ops({&unary, &unary_, &binary, &binary_, &clamp, &clamp_, &where,
                            &masked_fill_, &copy_, &fill_, &to_copy, &copy_into, &fill_into});
}  // namespace
}  // namespace ops

void detail::copy_into(const Tensor& dst, const Tensor& src, bool non_blocking) {
  Tensor self = dst;  // a handle of the same TensorImpl: the op writes into dst
  ops::copy_into(self, src, non_blocking);
}

void detail::fill_into(const Tensor& dst, const Scalar& value) {
  Tensor self = dst;
  ops::fill_into(self, value);
}

// [SECTION] public functions and operators -------------------------------------------------

namespace {
Tensor wrap(const Scalar& s) { return wrapped_scalar_tensor(s); }
bool is_one(const Scalar& s) { return s.toDouble() == 1.0; }
}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return ops::binary(BinaryOp::Add, a,
                     is_one(alpha) ? b : ops::binary(BinaryOp::Mul, b, wrap(alpha)));
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) { return add(a, wrap(b), alpha); }
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return ops::binary(BinaryOp::Sub, a,
                     is_one(alpha) ? b : ops::binary(BinaryOp::Mul, b, wrap(alpha)));
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) { return sub(a, wrap(b), alpha); }
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Mul, a, b); }
Tensor mul(const Tensor& a, const Scalar& b) { return ops::binary(BinaryOp::Mul, a, wrap(b)); }
Tensor div(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Div, a, b); }
Tensor div(const Tensor& a, const Scalar& b) { return ops::binary(BinaryOp::Div, a, wrap(b)); }
Tensor pow(const Tensor& a, const Tensor& e) { return ops::binary(BinaryOp::Pow, a, e); }
Tensor pow(const Tensor& a, const Scalar& e) { return ops::binary(BinaryOp::Pow, a, wrap(e)); }
Tensor pow(const Scalar& a, const Tensor& e) { return ops::binary(BinaryOp::Pow, wrap(a), e); }
Tensor maximum(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Minimum, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Ge, a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) {
  return ops::binary(BinaryOp::LogicalAnd, a, b);
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return ops::binary(BinaryOp::LogicalOr, a, b);
}
Tensor logical_not(const Tensor& a) { return ops::unary(UnaryOp::LogicalNot, a); }

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return binary_out_impl(BinaryOp::Add, out, a, is_one(alpha) ? b : mul(b, alpha), false);
}
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return binary_out_impl(BinaryOp::Sub, out, a, is_one(alpha) ? b : mul(b, alpha), false);
}
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return binary_out_impl(BinaryOp::Mul, out, a, b, false);
}
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return binary_out_impl(BinaryOp::Div, out, a, b, false);
}

Tensor neg(const Tensor& x) { return ops::unary(UnaryOp::Neg, x); }
Tensor abs(const Tensor& x) { return ops::unary(UnaryOp::Abs, x); }
Tensor exp(const Tensor& x) { return ops::unary(UnaryOp::Exp, x); }
Tensor log(const Tensor& x) { return ops::unary(UnaryOp::Log, x); }
Tensor log1p(const Tensor& x) { return ops::unary(UnaryOp::Log1p, x); }
Tensor sqrt(const Tensor& x) { return ops::unary(UnaryOp::Sqrt, x); }
Tensor rsqrt(const Tensor& x) { return ops::unary(UnaryOp::Rsqrt, x); }
Tensor sin(const Tensor& x) { return ops::unary(UnaryOp::Sin, x); }
Tensor cos(const Tensor& x) { return ops::unary(UnaryOp::Cos, x); }
Tensor tanh(const Tensor& x) { return ops::unary(UnaryOp::Tanh, x); }
Tensor sigmoid(const Tensor& x) { return ops::unary(UnaryOp::Sigmoid, x); }
Tensor relu(const Tensor& x) { return ops::unary(UnaryOp::Relu, x); }
Tensor gelu(const Tensor& x, const std::string& approximate) {
  GLASS_CHECK(approximate == "none" || approximate == "tanh",
              "gelu(): approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
  return ops::unary(approximate == "none" ? UnaryOp::Gelu : UnaryOp::GeluTanh, x);
}
Tensor sign(const Tensor& x) { return ops::unary(UnaryOp::Sign, x); }
Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return ops::clamp(x, lo, hi);
}
Tensor clamp_min(const Tensor& x, const Scalar& lo) { return ops::clamp(x, lo, std::nullopt); }
Tensor clamp_max(const Tensor& x, const Scalar& hi) { return ops::clamp(x, std::nullopt, hi); }

Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return ops::where(c, a, b); }
Tensor where(const Tensor& c, const Scalar& a, const Tensor& b) {
  return ops::where(c, wrap(a), b);
}
Tensor where(const Tensor& c, const Tensor& a, const Scalar& b) {
  return ops::where(c, a, wrap(b));
}
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  Tensor out = ops::clone(self);
  ops::masked_fill_(out, mask, value);
  return out;
}
Tensor to_copy(const Tensor& self, ScalarType dtype, Device device, bool non_blocking) {
  return ops::to_copy(self, dtype, device, non_blocking);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return sub(wrap(a), b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(wrap(a), b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, wrap(b)); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, wrap(b)); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, wrap(b)); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, wrap(b)); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, wrap(b)); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, wrap(b)); }
Tensor operator&(const Tensor& a, const Tensor& b) { return logical_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return logical_or(a, b); }
Tensor operator~(const Tensor& a) { return logical_not(a); }

// [SECTION] Tensor methods ------------------------------------------------------------------

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const {
  return glass::add(*this, o, alpha);
}
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const {
  return glass::add(*this, o, alpha);
}
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  return ops::binary_(BinaryOp::Add, *this, is_one(alpha) ? o : glass::mul(o, alpha));
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) { return add_(wrap(o), alpha); }
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const {
  return glass::sub(*this, o, alpha);
}
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const {
  return glass::sub(*this, o, alpha);
}
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) {
  return ops::binary_(BinaryOp::Sub, *this, is_one(alpha) ? o : glass::mul(o, alpha));
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) { return sub_(wrap(o), alpha); }
Tensor Tensor::mul(const Tensor& o) const { return glass::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return glass::mul(*this, o); }
Tensor& Tensor::mul_(const Tensor& o) { return ops::binary_(BinaryOp::Mul, *this, o); }
Tensor& Tensor::mul_(const Scalar& o) { return ops::binary_(BinaryOp::Mul, *this, wrap(o)); }
Tensor Tensor::div(const Tensor& o) const { return glass::div(*this, o); }
Tensor Tensor::div(const Scalar& o) const { return glass::div(*this, o); }
Tensor& Tensor::div_(const Tensor& o) { return ops::binary_(BinaryOp::Div, *this, o); }
Tensor& Tensor::div_(const Scalar& o) { return ops::binary_(BinaryOp::Div, *this, wrap(o)); }
Tensor Tensor::pow(const Tensor& e) const { return glass::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return glass::pow(*this, e); }
Tensor& Tensor::pow_(const Tensor& e) { return ops::binary_(BinaryOp::Pow, *this, e); }
Tensor& Tensor::pow_(const Scalar& e) { return ops::binary_(BinaryOp::Pow, *this, wrap(e)); }
Tensor Tensor::maximum(const Tensor& o) const { return glass::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return glass::minimum(*this, o); }

Tensor Tensor::neg() const { return glass::neg(*this); }
Tensor& Tensor::neg_() { return ops::unary_(UnaryOp::Neg, *this); }
Tensor Tensor::abs() const { return glass::abs(*this); }
Tensor& Tensor::abs_() { return ops::unary_(UnaryOp::Abs, *this); }
Tensor Tensor::exp() const { return glass::exp(*this); }
Tensor& Tensor::exp_() { return ops::unary_(UnaryOp::Exp, *this); }
Tensor Tensor::log() const { return glass::log(*this); }
Tensor& Tensor::log_() { return ops::unary_(UnaryOp::Log, *this); }
Tensor Tensor::log1p() const { return glass::log1p(*this); }
Tensor& Tensor::log1p_() { return ops::unary_(UnaryOp::Log1p, *this); }
Tensor Tensor::sqrt() const { return glass::sqrt(*this); }
Tensor& Tensor::sqrt_() { return ops::unary_(UnaryOp::Sqrt, *this); }
Tensor Tensor::rsqrt() const { return glass::rsqrt(*this); }
Tensor& Tensor::rsqrt_() { return ops::unary_(UnaryOp::Rsqrt, *this); }
Tensor Tensor::sin() const { return glass::sin(*this); }
Tensor& Tensor::sin_() { return ops::unary_(UnaryOp::Sin, *this); }
Tensor Tensor::cos() const { return glass::cos(*this); }
Tensor& Tensor::cos_() { return ops::unary_(UnaryOp::Cos, *this); }
Tensor Tensor::tanh() const { return glass::tanh(*this); }
Tensor& Tensor::tanh_() { return ops::unary_(UnaryOp::Tanh, *this); }
Tensor Tensor::sigmoid() const { return glass::sigmoid(*this); }
Tensor& Tensor::sigmoid_() { return ops::unary_(UnaryOp::Sigmoid, *this); }
Tensor Tensor::relu() const { return glass::relu(*this); }
Tensor& Tensor::relu_() { return ops::unary_(UnaryOp::Relu, *this); }
Tensor Tensor::gelu(const std::string& approximate) const {
  return glass::gelu(*this, approximate);
}
Tensor Tensor::sign() const { return glass::sign(*this); }
Tensor& Tensor::sign_() { return ops::unary_(UnaryOp::Sign, *this); }
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  return ops::clamp(*this, lo, hi);
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return ops::clamp_(*this, lo, hi);
}
Tensor Tensor::clamp_min(const Scalar& lo) const { return ops::clamp(*this, lo, std::nullopt); }
Tensor& Tensor::clamp_min_(const Scalar& lo) { return ops::clamp_(*this, lo, std::nullopt); }
Tensor Tensor::clamp_max(const Scalar& hi) const { return ops::clamp(*this, std::nullopt, hi); }
Tensor& Tensor::clamp_max_(const Scalar& hi) { return ops::clamp_(*this, std::nullopt, hi); }

Tensor Tensor::eq(const Tensor& o) const { return glass::eq(*this, o); }
Tensor Tensor::eq(const Scalar& o) const { return glass::eq(*this, wrap(o)); }
Tensor Tensor::ne(const Tensor& o) const { return glass::ne(*this, o); }
Tensor Tensor::ne(const Scalar& o) const { return glass::ne(*this, wrap(o)); }
Tensor Tensor::lt(const Tensor& o) const { return glass::lt(*this, o); }
Tensor Tensor::lt(const Scalar& o) const { return glass::lt(*this, wrap(o)); }
Tensor Tensor::le(const Tensor& o) const { return glass::le(*this, o); }
Tensor Tensor::le(const Scalar& o) const { return glass::le(*this, wrap(o)); }
Tensor Tensor::gt(const Tensor& o) const { return glass::gt(*this, o); }
Tensor Tensor::gt(const Scalar& o) const { return glass::gt(*this, wrap(o)); }
Tensor Tensor::ge(const Tensor& o) const { return glass::ge(*this, o); }
Tensor Tensor::ge(const Scalar& o) const { return glass::ge(*this, wrap(o)); }
Tensor Tensor::logical_and(const Tensor& o) const { return glass::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return glass::logical_or(*this, o); }
Tensor Tensor::logical_not() const { return glass::logical_not(*this); }
Tensor Tensor::where(const Tensor& cond, const Tensor& other) const {
  return ops::where(cond, *this, other);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& v) const {
  return glass::masked_fill(*this, mask, v);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& v) {
  return ops::masked_fill_(*this, mask, v);
}

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  return ops::copy_(*this, src, non_blocking);
}
Tensor& Tensor::fill_(const Scalar& v) { return ops::fill_(*this, v); }
Tensor& Tensor::zero_() { return ops::fill_(*this, 0); }

// Every to() lands here: the target dtype and device, with the unset ones taken from
// this tensor, and a copy only when something changes (or the caller asks for one).
Tensor Tensor::to(TensorOptions options, bool non_blocking, bool copy) const {
  ScalarType dt = options.has_dtype() ? options.dtype() : dtype();
  Device dev = options.has_device() ? resolve_device(options.device()) : device();
  Tensor out = *this;
  if (copy || dt != dtype() || dev != device()) out = ops::to_copy(*this, dt, dev, non_blocking);
  // to(TensorOptions().pinned_memory(true)): the result in page-locked memory (CPU only).
  if (options.pinned_memory() && !out.is_pinned()) out = out.pin_memory();
  return out;
}
Tensor Tensor::to(Device device, ScalarType dtype, bool non_blocking, bool copy) const {
  return to(TensorOptions(dtype).device(device), non_blocking, copy);
}
Tensor Tensor::to(ScalarType dtype, bool non_blocking, bool copy) const {
  return to(TensorOptions(dtype), non_blocking, copy);
}
Tensor Tensor::to(const Tensor& other, bool non_blocking, bool copy) const {
  return to(other.options(), non_blocking, copy);
}
Tensor Tensor::cpu() const { return to(TensorOptions(kCPU)); }
Tensor Tensor::cuda() const { return to(TensorOptions(kCUDA)); }

}  // namespace glass
