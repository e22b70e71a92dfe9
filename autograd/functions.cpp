// autograd/functions.cpp — the backward formulas of elementwise ops, reductions and matmul,
// each beside its forward and its forward-mode rule. Views, joins and indexing are in
// view_functions.cpp; the in-place-only ops in inplace_functions.cpp; the machinery
// (FormulaNode, record) in formula.h.
//
// Each handler runs the op below the Autograd key, then record()s the node. A formula maps
// grad_output to one gradient per input (vᵀJ); a jvp maps the inputs' tangents to the
// output's (J v). In-place variants (exp_, add_, clamp_) record the same formula with
// the tensor's old value as input and the tensor itself as output.
//
// [SECTION] elementwise      [SECTION] reductions and matmul      [SECTION] registration
#include "autograd/functions.h"

#include <algorithm>

#include "autograd/formula.h"
#include "autograd/variable.h"
#include "core/ops/factories.h"
#include "core/ops/linalg.h"
#include "core/ops/pointwise.h"
#include "core/ops/reduce.h"
#include "core/print.h"

namespace glass::autograd {
namespace {

using F = FormulaNode;
constexpr DispatchKey K = DispatchKey::Autograd;
Tensor zero_where_not(const Tensor& mask, const Tensor& g) { return where(mask, g, 0.0); }

// [SECTION] elementwise ------------------------------------------------------------------

// Formulas that read the input x (the others read only the output y): an in-place
// version must keep a copy of x, since the write destroys it.
bool unary_reads_input(UnaryOp op) {
  switch (op) {
    case UnaryOp::Abs:
    case UnaryOp::Log:
    case UnaryOp::Log1p:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Gelu:
    case UnaryOp::GeluTanh: return true;
    default: return false;
  }
}

// y = op(x) has been computed; join it to the graph.
void record_unary(UnaryOp op, const Tensor& x, const Tensor& y) {
  switch (op) {
    case UnaryOp::Neg:
      record(
          "NegBackward0", {x}, y, {}, [](const F&, const Tensor& g) -> tensor_list { return {-g}; },
          unary_jvp);
      break;
    case UnaryOp::Abs:
      record(
          "AbsBackward0", {x}, y, {{x}},
          [](const F& n, const Tensor& g) -> tensor_list { return {g * n.get(0).sign()}; },
          unary_jvp);
      break;
    case UnaryOp::Exp:
      record(
          "ExpBackward0", {x}, y, {{y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list { return {g * n.get(0)}; }, unary_jvp);
      break;
    case UnaryOp::Log:
      record(
          "LogBackward0", {x}, y, {{x}},
          [](const F& n, const Tensor& g) -> tensor_list { return {g / n.get(0)}; }, unary_jvp);
      break;
    case UnaryOp::Log1p:
      record(
          "Log1PBackward0", {x}, y, {{x}},
          [](const F& n, const Tensor& g) -> tensor_list { return {g / (n.get(0) + 1)}; },
          unary_jvp);
      break;
    case UnaryOp::Sqrt:
      record(
          "SqrtBackward0", {x}, y, {{y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list { return {g / (n.get(0) * 2)}; },
          unary_jvp);
      break;
    case UnaryOp::Rsqrt:  // d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3
      record(
          "RsqrtBackward0", {x}, y, {{y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list { return {g * n.get(0).pow(3) * -0.5}; },
          unary_jvp);
      break;
    case UnaryOp::Sin:
      record(
          "SinBackward0", {x}, y, {{x}},
          [](const F& n, const Tensor& g) -> tensor_list { return {g * n.get(0).cos()}; },
          unary_jvp);
      break;
    case UnaryOp::Cos:
      record(
          "CosBackward0", {x}, y, {{x}},
          [](const F& n, const Tensor& g) -> tensor_list { return {-(g * n.get(0).sin())}; },
          unary_jvp);
      break;
    case UnaryOp::Tanh:
      record(
          "TanhBackward0", {x}, y, {{y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list {
            Tensor t = n.get(0);
            return {g * (1 - t * t)};
          },
          unary_jvp);
      break;
    case UnaryOp::Sigmoid:
      record(
          "SigmoidBackward0", {x}, y, {{y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list {
            Tensor s = n.get(0);
            return {g * s * (1 - s)};
          },
          unary_jvp);
      break;
    case UnaryOp::Relu:  // PyTorch's threshold_backward: the gradient passes where y > 0
      record(
          "ReluBackward0", {x}, y, {{y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list {
            return {zero_where_not(n.get(0) > 0, g)};
          },
          unary_jvp);
      break;
    case UnaryOp::Sign:
      record(
          "SignBackward0", {x}, y, {},
          [](const F&, const Tensor& g) -> tensor_list { return {g * 0}; }, unary_jvp);
      break;
    case UnaryOp::Gelu:  // d/dx x·Φ(x) = Φ(x) + x·φ(x); Φ(x) = y / x from the forward (Φ(0) = 1/2)
      record(
          "GeluBackward0", {x}, y, {{x}, {y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list {
            Tensor x = n.get(0), y = n.get(1);
            Tensor cdf = where(x == 0, 0.5, y / x);
            Tensor pdf = (x * x * -0.5).exp() * 0.3989422804014327;  // 1 / sqrt(2 pi)
            return {g * (cdf + x * pdf)};
          },
          unary_jvp);
      break;
    // y = x/2 (1 + tanh u), u = k (x + c x^3): dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3c x^2)
    case UnaryOp::GeluTanh:
      record(
          "GeluBackward0", {x}, y, {{x}},
          [](const F& n, const Tensor& g) -> tensor_list {
            const double k = 0.7978845608028654, c = 0.044715;
            Tensor x = n.get(0), x2 = x * x;
            Tensor t = (x * (1 + x2 * c) * k).tanh();
            return {g * ((1 + t) * 0.5 + x * 0.5 * (1 - t * t) * k * (1 + x2 * (3 * c)))};
          },
          unary_jvp);
      break;
    case UnaryOp::LogicalNot: break;
  }
}

Tensor unary_autograd(UnaryOp op, const Tensor& x) {
  Tensor y = ops::unary.redispatch(K, op, x);
  if (y.is_floating_point()) record_unary(op, x, y);  // logical_not: nothing to differentiate
  return y;
}

Tensor& unary_inplace_autograd(UnaryOp op, Tensor& self) {
  Tensor old = prepare_inplace(self, std::string(to_string(op)) + "_", unary_reads_input(op));
  ops::unary_.redispatch(K, op, self);
  if (self.is_floating_point()) record_unary(op, old, self);
  return self;
}

// A tangent that may be absent (zero): the helpers skip the term instead of adding zeros.
Tensor plus(const Tensor& a, const Tensor& b) {
  return !a.defined() ? b : !b.defined() ? a : a + b;
}
Tensor times(const Tensor& t, const Tensor& factor) { return t.defined() ? t * factor : Tensor(); }

bool binary_reads_self(BinaryOp op) {
  return op == BinaryOp::Mul || op == BinaryOp::Div || op == BinaryOp::Pow ||
         op == BinaryOp::Maximum || op == BinaryOp::Minimum;
}

// The gradient through an extremum: to the larger (smaller) input, split evenly on ties.
Tensor pick(const Tensor& win, const Tensor& tie, const Tensor& g) {
  return where(win, g, where(tie, g * 0.5, 0.0));
}

void record_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& y) {
  switch (op) {
    case BinaryOp::Add:
      record(
          "AddBackward0", {a, b}, y, {},
          [](const F&, const Tensor& g) -> tensor_list {
            return {g, g};
          },
          [](const F&, const JvpArgs& j) { return plus(j.tangents[0], j.tangents[1]); });
      break;
    case BinaryOp::Sub:
      record(
          "SubBackward0", {a, b}, y, {},
          [](const F&, const Tensor& g) -> tensor_list {
            return {g, -g};
          },
          [](const F&, const JvpArgs& j) {
            const Tensor& tb = j.tangents[1];
            return plus(j.tangents[0], tb.defined() ? -tb : tb);
          });
      break;
    case BinaryOp::Mul:
      record(
          "MulBackward0", {a, b}, y, {{a}, {b}},
          [](const F& n, const Tensor& g) -> tensor_list {
            return {n.needs(0) ? g * n.get(1) : Tensor(), n.needs(1) ? g * n.get(0) : Tensor()};
          },
          [](const F&, const JvpArgs& j) {  // d(ab) = da b + a db
            return plus(times(j.tangents[0], j.inputs[1]), times(j.tangents[1], j.inputs[0]));
          });
      break;
    case BinaryOp::Div:
      record(
          "DivBackward0", {a, b}, y, {{a}, {b}},
          [](const F& n, const Tensor& g) -> tensor_list {
            Tensor a = n.get(0), b = n.get(1);
            return {g / b, n.needs(1) ? -g * a / (b * b) : Tensor()};
          },
          [](const F&, const JvpArgs& j) {  // d(a/b) = da/b - db a/b^2 = (da - db y)/b
            const Tensor &ta = j.tangents[0], &tb = j.tangents[1];
            Tensor num = plus(ta, tb.defined() ? -(tb * j.out) : tb);
            return num / j.inputs[1];
          });
      break;
    case BinaryOp::Pow:  // d/da a^b = b a^(b-1) (0 where b = 0, as PyTorch); d/db a^b = a^b log a
      record(
          "PowBackward0", {a, b}, y, {{a}, {b}, {y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list {
            Tensor a = n.get(0), b = n.get(1);
            Tensor ga = where(b == 0, 0.0, g * b * a.pow(b - 1));
            if (!n.needs(1)) return {ga, Tensor()};
            return {ga, where((a == 0) & (b >= 0), 0.0, g * n.get(2) * a.log())};
          },
          [](const F&, const JvpArgs& j) {
            const Tensor &a = j.inputs[0], &b = j.inputs[1];
            Tensor ta = j.tangents[0].defined()
                            ? where(b == 0, 0.0, j.tangents[0] * b * a.pow(b - 1))
                            : Tensor();
            Tensor tb = j.tangents[1].defined()
                            ? where((a == 0) & (b >= 0), 0.0, j.tangents[1] * j.out * a.log())
                            : Tensor();
            return plus(ta, tb);
          });
      break;
    case BinaryOp::Maximum:  // ties split the gradient evenly, as PyTorch does
      record(
          "MaximumBackward0", {a, b}, y, {{a}, {b}},
          [](const F& n, const Tensor& g) -> tensor_list {
            Tensor a = n.get(0), b = n.get(1), tie = a == b;
            return {pick(a > b, tie, g), pick(b > a, tie, g)};
          },
          [](const F&, const JvpArgs& j) {
            const Tensor &a = j.inputs[0], &b = j.inputs[1];
            Tensor tie = a == b;
            Tensor ta = j.tangents[0].defined() ? pick(a > b, tie, j.tangents[0]) : Tensor();
            Tensor tb = j.tangents[1].defined() ? pick(b > a, tie, j.tangents[1]) : Tensor();
            return plus(ta, tb);
          });
      break;
    case BinaryOp::Minimum:
      record(
          "MinimumBackward0", {a, b}, y, {{a}, {b}},
          [](const F& n, const Tensor& g) -> tensor_list {
            Tensor a = n.get(0), b = n.get(1), tie = a == b;
            return {pick(a < b, tie, g), pick(b < a, tie, g)};
          },
          [](const F&, const JvpArgs& j) {
            const Tensor &a = j.inputs[0], &b = j.inputs[1];
            Tensor tie = a == b;
            Tensor ta = j.tangents[0].defined() ? pick(a < b, tie, j.tangents[0]) : Tensor();
            Tensor tb = j.tangents[1].defined() ? pick(b < a, tie, j.tangents[1]) : Tensor();
            return plus(ta, tb);
          });
      break;
    default: break;
  }
}

Tensor binary_autograd(BinaryOp op, const Tensor& a, const Tensor& b) {
  Tensor y = ops::binary.redispatch(K, op, a, b);
  if (!is_comparison(op) && y.is_floating_point()) record_binary(op, a, b, y);
  return y;
}

Tensor& binary_inplace_autograd(BinaryOp op, Tensor& self, const Tensor& other) {
  Tensor old = prepare_inplace(self, std::string(to_string(op)) + "_", binary_reads_self(op));
  ops::binary_.redispatch(K, op, self, other);
  if (!is_comparison(op) && self.is_floating_point()) record_binary(op, old, other, self);
  return self;
}

// Where clamp lets x through (the gradient passes there and nowhere else).
Tensor clamp_passes(const F& n, const Tensor& x) {
  Tensor pass = ones_like(x, TensorOptions(kBool));
  if (n.ints[0]) pass = pass & (x >= n.scalars[0].toDouble());
  if (n.ints[1]) pass = pass & (x <= n.scalars[1].toDouble());
  return pass;
}

void record_clamp(const Tensor& x, const Tensor& y, std::optional<Scalar> lo,
                  std::optional<Scalar> hi) {
  record(
      "ClampBackward1", {x}, y, {{x}},
      [](const F& n, const Tensor& g) -> tensor_list {
        return {zero_where_not(clamp_passes(n, n.get(0)), g)};
      },
      [](const F& n, const JvpArgs& j) {
        return zero_where_not(clamp_passes(n, j.inputs[0]), j.tangents[0]);
      },
      [&](F& n) {
        n.ints = {lo.has_value(), hi.has_value()};
        n.scalars = {lo.value_or(0), hi.value_or(0)};
      });
}

Tensor clamp_autograd(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  Tensor y = ops::clamp.redispatch(K, x, lo, hi);
  record_clamp(x, y, lo, hi);
  return y;
}

Tensor& clamp_inplace_autograd(Tensor& self, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  Tensor old = prepare_inplace(self, "clamp_", /*keep_old_value=*/true);
  ops::clamp_.redispatch(K, self, lo, hi);
  record_clamp(old, self, lo, hi);
  return self;
}

Tensor where_autograd(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor y = ops::where.redispatch(K, cond, a, b);
  record(
      "WhereBackward0", {cond, a, b}, y, {{cond}},
      [](const F& n, const Tensor& g) -> tensor_list {
        Tensor c = n.get(0);
        return {Tensor(), where(c, g, 0.0), where(c, 0.0, g)};
      },
      [](const F&, const JvpArgs& j) {
        const Tensor &ta = j.tangents[1], &tb = j.tangents[2];
        if (!ta.defined() && !tb.defined()) return Tensor();
        return where(j.inputs[0], ta.defined() ? ta : zeros_like(j.out),
                     tb.defined() ? tb : zeros_like(j.out));
      });
  return y;
}

// [SECTION] reductions and matmul ------------------------------------------------------------

// The reduced dims of a reduction over `dim` of a tensor with `ndim` dims, ascending.
Shape reduced_dim_list(IntArrayRef dim, int64_t ndim) {
  Shape out;
  if (dim.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
  } else {
    for (int64_t d : dim) out.push_back(wrap_dim(d, ndim, "sum"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A reduction's gradient (or result) with the reduced dims put back as size 1, so that it
// broadcasts against the input. ints = {keepdim, reduced dims...}.
Tensor unsqueeze_reduced(const Tensor& g, const F& n) {
  if (n.ints[0]) return g;
  Tensor r = g;
  for (size_t i = 1; i < n.ints.size(); ++i) r = r.unsqueeze(n.ints[i]);
  return r;
}
Shape reduced_dims(const F& n) { return Shape(n.ints.begin() + 1, n.ints.end()); }
// Linear reductions' tangent: the same reduction of the input's tangent.
Tensor sum_like(const F& n, const Tensor& t) { return t.sum(reduced_dims(n), n.ints[0] != 0); }

// amax / amin: the gradient is shared evenly by all elements equal to the extreme.
Tensor extreme_share(const F& n, const Tensor& x, const Tensor& y) {
  Tensor hit = (x == unsqueeze_reduced(y, n)).to(x.dtype());
  return hit / hit.sum(reduced_dims(n), true);
}

// d/dx_i prod(x) = prod_{j != i} x_j. Where the slice holds no zero that is y / x_i; with
// exactly one zero, only the zero's entry is nonzero (the product of the others); with
// two or more zeros every entry is 0.
Tensor prod_grad(const F& n, const Tensor& x, const Tensor& y) {
  Shape dims = reduced_dims(n);
  Tensor is_zero = x == 0;
  Tensor zeros_in_slice = is_zero.to(kInt64).sum(dims, true);
  Tensor others = ops::reduce(ReduceOp::Prod, where(is_zero, 1.0, x), dims, true, std::nullopt);
  Tensor no_zero = unsqueeze_reduced(y, n) / where(is_zero, 1.0, x);
  return where(zeros_in_slice == 0, no_zero, where((zeros_in_slice == 1) & is_zero, others, 0.0));
}

Tensor reduce_autograd(ReduceOp op, const Tensor& x, IntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype) {
  Tensor y = ops::reduce.redispatch(K, op, x, dim, keepdim, dtype);
  if (!y.is_floating_point()) return y;
  auto configure = [&](F& n) {
    n.ints.push_back(keepdim);
    for (int64_t d : reduced_dim_list(dim, x.dim())) n.ints.push_back(d);
  };
  switch (op) {
    case ReduceOp::Sum:  // PyTorch: SumBackward0 for a full sum, SumBackward1 over dims
      record(
          dim.empty() ? "SumBackward0" : "SumBackward1", {x}, y, {},
          [](const F& n, const Tensor& g) -> tensor_list {
            return {unsqueeze_reduced(g, n).expand(n.shapes[0])};
          },
          [](const F& n, const JvpArgs& j) { return sum_like(n, j.tangents[0]); }, configure);
      break;
    case ReduceOp::Max:
    case ReduceOp::Min:
      record(
          op == ReduceOp::Max ? "AmaxBackward0" : "AminBackward0", {x}, y, {{x}, {y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list {
            return {unsqueeze_reduced(g, n) * extreme_share(n, n.get(0), n.get(1))};
          },
          [](const F& n, const JvpArgs& j) {
            return sum_like(n, j.tangents[0] * extreme_share(n, j.inputs[0], j.out));
          },
          configure);
      break;
    case ReduceOp::Prod:
      record(
          "ProdBackward1", {x}, y, {{x}, {y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list {
            return {unsqueeze_reduced(g, n) * prod_grad(n, n.get(0), n.get(1))};
          },
          [](const F& n, const JvpArgs& j) {
            return sum_like(n, j.tangents[0] * prod_grad(n, j.inputs[0], j.out));
          },
          configure);
      break;
  }
  return y;
}

Tensor softmax_autograd(const Tensor& x, int64_t dim, bool log) {
  Tensor y = ops::softmax.redispatch(K, x, dim, log);
  record(
      log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {x}, y, {{y, kOutput}},
      [](const F& n, const Tensor& g) -> tensor_list {
        Tensor y = n.get(0);
        int64_t d = n.ints[0];
        if (n.ints[1]) return {g - y.exp() * g.sum(d, true)};  // log_softmax
        return {y * (g - (g * y).sum(d, true))};
      },
      [](const F& n, const JvpArgs& j) {  // J is symmetric for softmax; log: t - <p, t>
        const Tensor &y = j.out, &t = j.tangents[0];
        int64_t d = n.ints[0];
        if (n.ints[1]) return t - (y.exp() * t).sum(d, true);
        return y * (t - (t * y).sum(d, true));
      },
      [&](F& n) {
        n.ints = {wrap_dim(dim, x.dim(), "softmax"), log};
      });
  return y;
}

// d(AB) = dA B + A dB, for mm and bmm alike.
template <Tensor (*Product)(const Tensor&, const Tensor&)>
Tensor product_jvp(const F&, const JvpArgs& j) {
  const Tensor &ta = j.tangents[0], &tb = j.tangents[1];
  return plus(ta.defined() ? Product(ta, j.inputs[1]) : Tensor(),
              tb.defined() ? Product(j.inputs[0], tb) : Tensor());
}

// The gradients of a @ b, computed in the layout of the input they belong to. Linear
// multiplies by weight.t(): computing that gradient as (gᵀ a)ᵀ instead of aᵀ g costs the
// same FLOPs but comes back, through TBackward0, as a contiguous weight gradient
// that AccumulateGrad can keep without a copy (PyTorch's mm_mat2_backward does the same).
bool is_transposed_layout(const Tensor& m) {
  return m.dim() == 2 && !m.is_contiguous() && m.stride(0) == 1 && m.stride(1) >= m.size(0);
}
Tensor mm_grad_a(const Tensor& g, const Tensor& a, const Tensor& b) {
  return is_transposed_layout(a) ? b.mm(g.t()).t() : g.mm(b.t());
}
Tensor mm_grad_b(const Tensor& g, const Tensor& a, const Tensor& b) {
  return is_transposed_layout(b) ? g.t().mm(a).t() : a.t().mm(g);
}

Tensor mm_autograd(const Tensor& a, const Tensor& b) {
  Tensor y = ops::mm.redispatch(K, a, b);
  record(
      "MmBackward0", {a, b}, y, {{a}, {b}},
      [](const F& n, const Tensor& g) -> tensor_list {
        return {n.needs(0) ? mm_grad_a(g, n.get(0), n.get(1)) : Tensor(),
                n.needs(1) ? mm_grad_b(g, n.get(0), n.get(1)) : Tensor()};
      },
      product_jvp<glass::mm>);
  return y;
}

Tensor bmm_autograd(const Tensor& a, const Tensor& b) {
  Tensor y = ops::bmm.redispatch(K, a, b);
  record(
      "BmmBackward0", {a, b}, y, {{a}, {b}},
      [](const F& n, const Tensor& g) -> tensor_list {
        return {n.needs(0) ? g.bmm(n.get(1).transpose(1, 2)) : Tensor(),
                n.needs(1) ? n.get(0).transpose(1, 2).bmm(g) : Tensor()};
      },
      product_jvp<glass::bmm>);
  return y;
}

Tensor addmm_autograd(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
                      const Scalar& alpha) {
  Tensor y = ops::addmm.redispatch(K, self, m1, m2, beta, alpha);
  record(
      "AddmmBackward0", {self, m1, m2}, y, {{m1}, {m2}},
      [](const F& n, const Tensor& g) -> tensor_list {
        const Scalar &beta = n.scalars[0], &alpha = n.scalars[1];
        // beta = alpha = 1 in every Linear layer: skip the multiplies, a pass each.
        auto scaled = [](const Tensor& t, const Scalar& s) {
          return s.toDouble() == 1 ? t : t * s;
        };
        return {n.needs(0) ? scaled(g, beta) : Tensor(),
                n.needs(1) ? scaled(mm_grad_a(g, n.get(0), n.get(1)), alpha) : Tensor(),
                n.needs(2) ? scaled(mm_grad_b(g, n.get(0), n.get(1)), alpha) : Tensor()};
      },
      [](const F& n, const JvpArgs& j) {  // beta dS + alpha (dA B + A dB)
        const Tensor &ts = j.tangents[0], &ta = j.tangents[1], &tb = j.tangents[2];
        Tensor prod = plus(ta.defined() ? ta.mm(j.inputs[2]) : Tensor(),
                           tb.defined() ? j.inputs[1].mm(tb) : Tensor());
        return plus(ts.defined() ? ts * n.scalars[0] : Tensor(),
                    prod.defined() ? prod * n.scalars[1] : Tensor());
      },
      [&](F& n) {
        n.scalars = {beta, alpha};
      });
  return y;
}

}  // namespace

// [SECTION] registration --------------------------------------------------------------------

void register_elementwise_handlers() {
  ops::unary.register_handler(K, &unary_autograd);
  ops::unary_.register_handler(K, &unary_inplace_autograd);
  ops::binary.register_handler(K, &binary_autograd);
  ops::binary_.register_handler(K, &binary_inplace_autograd);
  ops::clamp.register_handler(K, &clamp_autograd);
  ops::clamp_.register_handler(K, &clamp_inplace_autograd);
  ops::where.register_handler(K, &where_autograd);
}

void register_reduction_handlers() {
  ops::reduce.register_handler(K, &reduce_autograd);
  ops::softmax.register_handler(K, &softmax_autograd);
  ops::mm.register_handler(K, &mm_autograd);
  ops::bmm.register_handler(K, &bmm_autograd);
  ops::addmm.register_handler(K, &addmm_autograd);
}

static std::string grad_fn_name(const Tensor& t) {
  AutogradMeta* m = get_meta(t);
  return m && m->grad_fn ? m->grad_fn->name() : std::string();
}

void register_autograd_handlers() {
  static bool done = false;  // runs during static initialization: single-threaded
  if (done) return;
  done = true;
  set_grad_fn_name_hook(&grad_fn_name);
  register_elementwise_handlers();
  register_reduction_handlers();
  register_view_handlers();
  register_inplace_handlers();
}

}  // namespace glass::autograd
