// autograd/functions.cpp — every backward formula, beside the forward it differentiates.
//
// A handler runs the op below the Autograd key, then record()s a FormulaNode: its
// name (PyTorch's), the inputs' edges, shapes and dtypes, what it saves, and its
// formula: grad_output -> one gradient per input. FormulaNode::apply then reduces each
// gradient to its input's shape (broadcasting in forward is summing in backward,
// Note [sum_to]) and casts it to the input's dtype, so the formulas below stay one line.
//
// [SECTION] FormulaNode      [SECTION] elementwise      [SECTION] reductions and matmul
// [SECTION] views and joins  [SECTION] ops without a formula yet   [SECTION] registration
#include "autograd/functions.h"

#include <algorithm>
#include <string>

#include "autograd/anomaly_mode.h"
#include "autograd/saved_variable.h"
#include "autograd/variable.h"
#include "core/events.h"
#include "core/ops/factories.h"
#include "core/ops/indexing.h"
#include "core/ops/join.h"
#include "core/ops/linalg.h"
#include "core/ops/pointwise.h"
#include "core/ops/random.h"
#include "core/ops/reduce.h"
#include "core/ops/views.h"
#include "core/print.h"
#include "core/shape.h"

namespace glass::autograd {
namespace {

using detail::str_cat;

// [SECTION] FormulaNode ------------------------------------------------------------------

// Note [sum_to]
// If x was broadcast from shape S to the output's shape, every copy of an element of x
// contributed to the output, so its gradient is the sum over the copies: sum over the
// leading dims that broadcasting added, and over the dims where S has size 1.
Tensor sum_to(const Tensor& g, IntArrayRef shape) {
  int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  Shape dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  Tensor r = dims.empty() ? g : g.sum(dims);
  Shape keep;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] == 1 && r.size(static_cast<int64_t>(d)) != 1)
      keep.push_back(static_cast<int64_t>(d));
  if (!keep.empty()) r = r.sum(keep, true);
  return r.sizes() == shape ? r : r.reshape(shape);
}

class FormulaNode : public Node {
 public:
  using Formula = tensor_list (*)(const FormulaNode& n, const Tensor& grad);
  FormulaNode(const char* name, Formula f) : name_(name), formula_(f) {}

  std::string name() const override { return name_; }
  tensor_list apply(tensor_list&& grads) override {
    tensor_list out(next_edges().size());
    if (grads.empty() || !grads[0].defined()) return out;
    tensor_list g = formula_(*this, grads[0]);
    for (size_t i = 0; i < out.size() && i < g.size(); ++i) {
      if (!g[i].defined() || !needs(i)) continue;
      Tensor gi = g[i].sizes() == IntArrayRef(shapes[i]) ? g[i] : sum_to(g[i], shapes[i]);
      out[i] = gi.dtype() == dtypes[i] ? gi : gi.to(dtypes[i]);
    }
    return out;
  }
  void release_variables() override {
    for (SavedVariable& s : saved) s.reset();
  }

  // Saved tensor i, checked against in-place modification (saved_variable.h).
  Tensor get(size_t i) const {
    auto self = std::const_pointer_cast<Node>(shared_from_this());
    return saved[i].unpack(self);
  }
  bool needs(size_t i) const { return next_edges()[i].is_valid(); }

  std::vector<SavedVariable> saved;
  std::vector<DimVector> shapes;   // each input's shape
  std::vector<ScalarType> dtypes;  // each input's dtype
  std::vector<int64_t> ints;       // dims, sizes, ... the formula needs
  std::vector<Scalar> scalars;     // alpha, bounds, ...

 private:
  const char* name_;
  Formula formula_;
};

// A tensor a formula needs later; outputs of the op itself are saved without their
// grad_fn (saved_variable.h).
struct Save {
  Tensor tensor;
  bool is_output = false;
};
constexpr bool kOutput = true;

// Creates the node for `out` = op(inputs), wires its edges, saves what the formula needs
// and makes the node out's grad_fn.
FormulaNode& record(const char* name, TensorList inputs, const Tensor& out,
                    std::initializer_list<Save> saved, FormulaNode::Formula f) {
  auto node = std::make_shared<FormulaNode>(name, f);
  for (const Tensor& t : inputs) {
    node->add_next_edge(gradient_edge(t));
    node->shapes.emplace_back(t.sizes());
    node->dtypes.push_back(t.dtype());
  }
  for (const Save& sv : saved) node->saved.emplace_back(sv.tensor, sv.is_output);
  if (AnomalyMode::is_enabled()) {
    std::string trace = std::string("the forward op that created ") + name + " ran on inputs";
    for (const Tensor& t : inputs)
      trace += str_cat(" [", to_string(t.dtype()), " ", t.sizes(), "]");
    node->set_forward_trace(
        trace + str_cat(" and returned [", to_string(out.dtype()), " ", out.sizes(), "]"));
  }
  set_history(out, node);
  if (events::enabled())
    events::publish({.kind = events::Kind::GraphNodeCreated, .name = name, .ptr = node.get()});
  return *node;
}

using F = FormulaNode;
Tensor zero_where_not(const Tensor& mask, const Tensor& g) { return where(mask, g, 0.0); }

// [SECTION] elementwise ------------------------------------------------------------------

Tensor unary_autograd(UnaryOp op, const Tensor& x) {
  Tensor y = ops::unary.redispatch(DispatchKey::Autograd, op, x);
  if (!y.is_floating_point()) return y;  // logical_not: nothing to differentiate
  switch (op) {
    case UnaryOp::Neg:
      record("NegBackward0", {x}, y, {},
             [](const F&, const Tensor& g) -> tensor_list { return {-g}; });
      break;
    case UnaryOp::Abs:
      record("AbsBackward0", {x}, y, {{x}},
             [](const F& n, const Tensor& g) -> tensor_list { return {g * n.get(0).sign()}; });
      break;
    case UnaryOp::Exp:
      record("ExpBackward0", {x}, y, {{y, kOutput}},
             [](const F& n, const Tensor& g) -> tensor_list { return {g * n.get(0)}; });
      break;
    case UnaryOp::Log:
      record("LogBackward0", {x}, y, {{x}},
             [](const F& n, const Tensor& g) -> tensor_list { return {g / n.get(0)}; });
      break;
    case UnaryOp::Sqrt:
      record("SqrtBackward0", {x}, y, {{y, kOutput}},
             [](const F& n, const Tensor& g) -> tensor_list { return {g / (n.get(0) * 2)}; });
      break;
    case UnaryOp::Rsqrt:  // d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3
      record(
          "RsqrtBackward0", {x}, y, {{y, kOutput}},
          [](const F& n, const Tensor& g) -> tensor_list { return {g * n.get(0).pow(3) * -0.5}; });
      break;
    case UnaryOp::Sin:
      record("SinBackward0", {x}, y, {{x}},
             [](const F& n, const Tensor& g) -> tensor_list { return {g * n.get(0).cos()}; });
      break;
    case UnaryOp::Cos:
      record("CosBackward0", {x}, y, {{x}},
             [](const F& n, const Tensor& g) -> tensor_list { return {-(g * n.get(0).sin())}; });
      break;
    case UnaryOp::Tanh:
      record("TanhBackward0", {x}, y, {{y, kOutput}},
             [](const F& n, const Tensor& g) -> tensor_list {
               Tensor t = n.get(0);
               return {g * (1 - t * t)};
             });
      break;
    case UnaryOp::Sigmoid:
      record("SigmoidBackward0", {x}, y, {{y, kOutput}},
             [](const F& n, const Tensor& g) -> tensor_list {
               Tensor s = n.get(0);
               return {g * s * (1 - s)};
             });
      break;
    case UnaryOp::Relu:  // PyTorch's threshold_backward: the gradient passes where y > 0
      record("ReluBackward0", {x}, y, {{y, kOutput}},
             [](const F& n, const Tensor& g) -> tensor_list {
               return {zero_where_not(n.get(0) > 0, g)};
             });
      break;
    case UnaryOp::Sign:
      record("SignBackward0", {x}, y, {},
             [](const F&, const Tensor& g) -> tensor_list { return {g * 0}; });
      break;
    case UnaryOp::Gelu:  // d/dx x·Φ(x) = Φ(x) + x·φ(x); Φ(x) = y / x from the forward (Φ(0) = 1/2)
      record("GeluBackward0", {x}, y, {{x}, {y, kOutput}},
             [](const F& n, const Tensor& g) -> tensor_list {
               Tensor x = n.get(0), y = n.get(1);
               Tensor cdf = where(x == 0, 0.5, y / x);
               Tensor pdf = (x * x * -0.5).exp() * 0.3989422804014327;  // 1 / sqrt(2 pi)
               return {g * (cdf + x * pdf)};
             });
      break;
    // y = x/2 (1 + tanh u), u = k (x + c x^3): dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3c x^2)
    case UnaryOp::GeluTanh:
      record("GeluBackward0", {x}, y, {{x}}, [](const F& n, const Tensor& g) -> tensor_list {
        const double k = 0.7978845608028654, c = 0.044715;
        Tensor x = n.get(0), x2 = x * x;
        Tensor t = (x * (1 + x2 * c) * k).tanh();
        return {g * ((1 + t) * 0.5 + x * 0.5 * (1 - t * t) * k * (1 + x2 * (3 * c)))};
      });
      break;
    case UnaryOp::LogicalNot: break;
  }
  return y;
}

Tensor binary_autograd(BinaryOp op, const Tensor& a, const Tensor& b) {
  Tensor y = ops::binary.redispatch(DispatchKey::Autograd, op, a, b);
  if (is_comparison(op) || !y.is_floating_point()) return y;  // Bool results: no gradient
  switch (op) {
    case BinaryOp::Add:
      record("AddBackward0", {a, b}, y, {}, [](const F&, const Tensor& g) -> tensor_list {
        return {g, g};
      });
      break;
    case BinaryOp::Sub:
      record("SubBackward0", {a, b}, y, {}, [](const F&, const Tensor& g) -> tensor_list {
        return {g, -g};
      });
      break;
    case BinaryOp::Mul:
      record("MulBackward0", {a, b}, y, {{a}, {b}}, [](const F& n, const Tensor& g) -> tensor_list {
        return {n.needs(0) ? g * n.get(1) : Tensor(), n.needs(1) ? g * n.get(0) : Tensor()};
      });
      break;
    case BinaryOp::Div:
      record("DivBackward0", {a, b}, y, {{a}, {b}}, [](const F& n, const Tensor& g) -> tensor_list {
        Tensor a = n.get(0), b = n.get(1);
        return {g / b, n.needs(1) ? -g * a / (b * b) : Tensor()};
      });
      break;
    case BinaryOp::Pow:  // d/da a^b = b a^(b-1) (0 where b = 0, as PyTorch); d/db a^b = a^b log a
      record("PowBackward0", {a, b}, y, {{a}, {b}, {y, kOutput}},
             [](const F& n, const Tensor& g) -> tensor_list {
               Tensor a = n.get(0), b = n.get(1);
               Tensor ga = where(b == 0, 0.0, g * b * a.pow(b - 1));
               if (!n.needs(1)) return {ga, Tensor()};
               return {ga, where((a == 0) & (b >= 0), 0.0, g * n.get(2) * a.log())};
             });
      break;
    case BinaryOp::Maximum:  // ties split the gradient evenly, as PyTorch does
      record(
          "MaximumBackward0", {a, b}, y, {{a}, {b}},
          [](const F& n, const Tensor& g) -> tensor_list {
            Tensor a = n.get(0), b = n.get(1), tie = a == b, half = g * 0.5;
            return {where(a > b, g, where(tie, half, 0.0)), where(b > a, g, where(tie, half, 0.0))};
          });
      break;
    case BinaryOp::Minimum:
      record(
          "MinimumBackward0", {a, b}, y, {{a}, {b}},
          [](const F& n, const Tensor& g) -> tensor_list {
            Tensor a = n.get(0), b = n.get(1), tie = a == b, half = g * 0.5;
            return {where(a < b, g, where(tie, half, 0.0)), where(b < a, g, where(tie, half, 0.0))};
          });
      break;
    default: break;
  }
  return y;
}

Tensor clamp_autograd(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  Tensor y = ops::clamp.redispatch(DispatchKey::Autograd, x, lo, hi);
  F& n = record("ClampBackward1", {x}, y, {{x}}, [](const F& n, const Tensor& g) -> tensor_list {
    Tensor x = n.get(0);
    Tensor pass = ones_like(x, TensorOptions(kBool));
    if (n.ints[0]) pass = pass & (x >= n.scalars[0].toDouble());
    if (n.ints[1]) pass = pass & (x <= n.scalars[1].toDouble());
    return {zero_where_not(pass, g)};
  });
  n.ints = {lo.has_value(), hi.has_value()};
  n.scalars = {lo.value_or(0), hi.value_or(0)};
  return y;
}

Tensor where_autograd(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor y = ops::where.redispatch(DispatchKey::Autograd, cond, a, b);
  record("WhereBackward0", {cond, a, b}, y, {{cond}},
         [](const F& n, const Tensor& g) -> tensor_list {
           Tensor c = n.get(0);
           return {Tensor(), where(c, g, 0.0), where(c, 0.0, g)};
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

Tensor reduce_autograd(ReduceOp op, const Tensor& x, IntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype) {
  GLASS_CHECK(op != ReduceOp::Prod,
              "prod(): autograd has no derivative for prod yet; compute it "
              "under glass::NoGradGuard, or as exp(log(x).sum()) for positive x");
  Tensor y = ops::reduce.redispatch(DispatchKey::Autograd, op, x, dim, keepdim, dtype);
  if (!y.is_floating_point()) return y;
  F* n;
  if (op == ReduceOp::Sum) {
    n = &record("SumBackward1", {x}, y, {}, [](const F& n, const Tensor& g) -> tensor_list {
      return {unsqueeze_reduced(g, n).expand(n.shapes[0])};
    });
  } else {  // amax / amin: the gradient is shared evenly by all elements equal to the extreme
    n = &record(op == ReduceOp::Max ? "AmaxBackward0" : "AminBackward0", {x}, y,
                {{x}, {y, kOutput}}, [](const F& n, const Tensor& g) -> tensor_list {
                  Tensor x = n.get(0), y = unsqueeze_reduced(n.get(1), n);
                  Tensor hit = (x == y).to(x.dtype());
                  Shape dims(n.ints.begin() + 1, n.ints.end());
                  return {unsqueeze_reduced(g, n) * hit / hit.sum(dims, true)};
                });
  }
  n->ints.push_back(keepdim);
  for (int64_t d : reduced_dim_list(dim, x.dim())) n->ints.push_back(d);
  return y;
}

Tensor softmax_autograd(const Tensor& x, int64_t dim, bool log) {
  Tensor y = ops::softmax.redispatch(DispatchKey::Autograd, x, dim, log);
  F& n = record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {x}, y, {{y, kOutput}},
                [](const F& n, const Tensor& g) -> tensor_list {
                  Tensor y = n.get(0);
                  int64_t d = n.ints[0];
                  if (n.ints[1]) return {g - y.exp() * g.sum(d, true)};  // log_softmax
                  return {y * (g - (g * y).sum(d, true))};
                });
  n.ints = {wrap_dim(dim, x.dim(), "softmax"), log};
  return y;
}

Tensor mm_autograd(const Tensor& a, const Tensor& b) {
  Tensor y = ops::mm.redispatch(DispatchKey::Autograd, a, b);
  record("MmBackward0", {a, b}, y, {{a}, {b}}, [](const F& n, const Tensor& g) -> tensor_list {
    return {n.needs(0) ? g.mm(n.get(1).t()) : Tensor(), n.needs(1) ? n.get(0).t().mm(g) : Tensor()};
  });
  return y;
}

Tensor bmm_autograd(const Tensor& a, const Tensor& b) {
  Tensor y = ops::bmm.redispatch(DispatchKey::Autograd, a, b);
  record("BmmBackward0", {a, b}, y, {{a}, {b}}, [](const F& n, const Tensor& g) -> tensor_list {
    return {n.needs(0) ? g.bmm(n.get(1).transpose(1, 2)) : Tensor(),
            n.needs(1) ? n.get(0).transpose(1, 2).bmm(g) : Tensor()};
  });
  return y;
}

Tensor addmm_autograd(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
                      const Scalar& alpha) {
  Tensor y = ops::addmm.redispatch(DispatchKey::Autograd, self, m1, m2, beta, alpha);
  F& n = record("AddmmBackward0", {self, m1, m2}, y, {{m1}, {m2}},
                [](const F& n, const Tensor& g) -> tensor_list {
                  const Scalar &beta = n.scalars[0], &alpha = n.scalars[1];
                  return {n.needs(0) ? g * beta : Tensor(),
                          n.needs(1) ? g.mm(n.get(1).t()) * alpha : Tensor(),
                          n.needs(2) ? n.get(0).t().mm(g) * alpha : Tensor()};
                });
  n.scalars = {beta, alpha};
  return y;
}

// [SECTION] views and joins ------------------------------------------------------------------

// Shape changes that keep every element once (view, squeeze, unsqueeze): reshape back.
Tensor reshape_back(const char* name, const Tensor& y, const Tensor& x) {
  record(name, {x}, y, {},
         [](const F& n, const Tensor& g) -> tensor_list { return {g.reshape(n.shapes[0])}; });
  return y;
}

// Ops whose gradient is the incoming one: clone, casts, aliases — and expand, whose
// broadcast is summed back by FormulaNode (Note [sum_to]).
Tensor pass_through(const char* name, const Tensor& y, const Tensor& x) {
  record(name, {x}, y, {}, [](const F&, const Tensor& g) -> tensor_list { return {g}; });
  return y;
}

Tensor view_autograd(const Tensor& x, IntArrayRef size) {
  return reshape_back("ViewBackward0", ops::view.redispatch(DispatchKey::Autograd, x, size), x);
}
Tensor squeeze_autograd(const Tensor& x, std::optional<int64_t> dim) {
  return reshape_back("SqueezeBackward0", ops::squeeze.redispatch(DispatchKey::Autograd, x, dim),
                      x);
}
Tensor unsqueeze_autograd(const Tensor& x, int64_t dim) {
  return reshape_back("UnsqueezeBackward0",
                      ops::unsqueeze.redispatch(DispatchKey::Autograd, x, dim), x);
}
Tensor expand_autograd(const Tensor& x, IntArrayRef size) {
  return pass_through("ExpandBackward0", ops::expand.redispatch(DispatchKey::Autograd, x, size), x);
}

Tensor transpose_autograd(const Tensor& x, int64_t d0, int64_t d1) {
  Tensor y = ops::transpose.redispatch(DispatchKey::Autograd, x, d0, d1);
  record("TransposeBackward0", {x}, y, {}, [](const F& n, const Tensor& g) -> tensor_list {
    return {g.transpose(n.ints[0], n.ints[1])};
  }).ints = {d0, d1};
  return y;
}

Tensor permute_autograd(const Tensor& x, IntArrayRef dims) {
  Tensor y = ops::permute.redispatch(DispatchKey::Autograd, x, dims);
  F& n = record("PermuteBackward0", {x}, y, {},
                [](const F& n, const Tensor& g) -> tensor_list { return {g.permute(n.ints)}; });
  n.ints.resize(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)  // the inverse permutation
    n.ints[wrap_dim(dims[i], x.dim(), "permute")] = static_cast<int64_t>(i);
  return y;
}

// Places g (the gradient of x.slice(dim, start, ..., step)) into zeros of x's shape with
// differentiable ops only: interleave with zeros for step > 1, then pad with cat.
Tensor slice_backward(const Tensor& g, IntArrayRef shape, int64_t dim, int64_t start,
                      int64_t step) {
  Tensor core = g;
  int64_t n = shape[dim];
  if (step > 1 && g.size(dim) > 0) {
    std::vector<Tensor> parts{g.unsqueeze(dim + 1)};
    for (int64_t k = 1; k < step; ++k) parts.push_back(zeros_like(g).unsqueeze(dim + 1));
    core = cat(parts, dim + 1).flatten(dim, dim + 1);
    core = core.narrow(dim, 0, std::min(core.size(dim), n - start));
  }
  auto zeros_of_length = [&](int64_t len) {
    Shape s = g.sizes().vec();
    s[dim] = len;
    return zeros(s, g.options());
  };
  std::vector<Tensor> pieces;
  if (start > 0) pieces.push_back(zeros_of_length(start));
  pieces.push_back(core);
  int64_t after = n - start - core.size(dim);
  if (after > 0) pieces.push_back(zeros_of_length(after));
  return pieces.size() == 1 ? core : cat(pieces, dim);
}

Tensor slice_autograd(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Tensor y = ops::slice.redispatch(DispatchKey::Autograd, x, dim, start, end, step);
  F& n = record("SliceBackward0", {x}, y, {}, [](const F& n, const Tensor& g) -> tensor_list {
    return {slice_backward(g, n.shapes[0], n.ints[0], n.ints[1], n.ints[2])};
  });
  int64_t d = wrap_dim(dim, x.dim(), "slice"), size = x.size(d);
  int64_t s = start < 0 ? start + size : start;  // the start slice() actually used
  n.ints = {d, std::clamp<int64_t>(s, 0, size), step};
  return y;
}

Tensor select_autograd(const Tensor& x, int64_t dim, int64_t index) {
  Tensor y = ops::select.redispatch(DispatchKey::Autograd, x, dim, index);
  F& n = record("SelectBackward0", {x}, y, {}, [](const F& n, const Tensor& g) -> tensor_list {
    return {slice_backward(g.unsqueeze(n.ints[0]), n.shapes[0], n.ints[0], n.ints[1], 1)};
  });
  int64_t d = wrap_dim(dim, x.dim(), "select");
  n.ints = {d, index < 0 ? index + x.size(d) : index};
  return y;
}

Tensor cat_autograd(TensorList tensors, int64_t dim) {
  Tensor y = ops::cat.redispatch(DispatchKey::Autograd, tensors, dim);
  F& n = record("CatBackward0", tensors, y, {}, [](const F& n, const Tensor& g) -> tensor_list {
    tensor_list out;
    int64_t d = n.ints[0], offset = 0;
    for (const DimVector& s : n.shapes) {
      bool legacy_empty = s.size() == 1 && s[0] == 0 && g.dim() != 1;  // skipped by cat
      int64_t len = legacy_empty ? 0 : s[d];
      out.push_back(legacy_empty ? Tensor() : g.narrow(d, offset, len));
      offset += len;
    }
    return out;
  });
  n.ints = {wrap_dim(dim, y.dim(), "cat")};
  return y;
}

// [SECTION] ops without a formula yet --------------------------------------------------------
//
// Reaching one of these with inputs that require grad must not silently drop the
// gradient, so each says what is missing and how to get around it.

[[noreturn]] void no_formula(const char* op) {
  detail::throw_error(std::string(op) +
                      "(): autograd has no derivative formula for this op yet, "
                      "and an input requires grad. Run it under glass::NoGradGuard or on "
                      ".detach()ed tensors if no gradient is needed through it.");
}

// In-place ops: a leaf that requires grad may not be overwritten (its .grad() would lose
// meaning); in-place ops inside a graph are not supported by this autograd yet.
[[noreturn]] void no_inplace(const Tensor& self, const char* op) {
  AutogradMeta* m = get_meta(self);
  bool leaf = self.requires_grad() && (!m || !m->grad_fn);
  GLASS_CHECK(
      !leaf, op,
      "(): a leaf tensor that requires grad is being used in an in-place "
      "operation. Wrap the update in glass::NoGradGuard (as optimizers do), or clone() it.");
  detail::throw_error(std::string(op) +
                      "(): in-place operations on tensors that take part in an "
                      "autograd graph are not supported yet; use the out-of-place form (e.g. "
                      "x = x.relu() instead of x.relu_()).");
}

// [SECTION] registration --------------------------------------------------------------------

Tensor alias_autograd(const Tensor& x) {
  return pass_through("AliasBackward0", ops::alias.redispatch(DispatchKey::Autograd, x), x);
}
Tensor clone_autograd(const Tensor& x) {
  return pass_through("CloneBackward0", ops::clone.redispatch(DispatchKey::Autograd, x), x);
}
Tensor to_copy_autograd(const Tensor& x, ScalarType dtype, Device device) {
  Tensor y = ops::to_copy.redispatch(DispatchKey::Autograd, x, dtype, device);
  return y.is_floating_point() ? pass_through("ToCopyBackward0", y, x) : y;
}

}  // namespace

static std::string grad_fn_name(const Tensor& t) {
  AutogradMeta* m = get_meta(t);
  return m && m->grad_fn ? m->grad_fn->name() : std::string();
}

void register_autograd_handlers() {
  static bool done = false;  // runs during static initialization: single-threaded
  if (done) return;
  done = true;
  set_grad_fn_name_hook(&grad_fn_name);
  constexpr DispatchKey K = DispatchKey::Autograd;
  ops::unary.register_handler(K, &unary_autograd);
  ops::binary.register_handler(K, &binary_autograd);
  ops::clamp.register_handler(K, &clamp_autograd);
  ops::where.register_handler(K, &where_autograd);
  ops::to_copy.register_handler(K, &to_copy_autograd);
  ops::reduce.register_handler(K, &reduce_autograd);
  ops::softmax.register_handler(K, &softmax_autograd);
  ops::mm.register_handler(K, &mm_autograd);
  ops::bmm.register_handler(K, &bmm_autograd);
  ops::addmm.register_handler(K, &addmm_autograd);
  ops::view.register_handler(K, &view_autograd);
  ops::transpose.register_handler(K, &transpose_autograd);
  ops::permute.register_handler(K, &permute_autograd);
  ops::expand.register_handler(K, &expand_autograd);
  ops::squeeze.register_handler(K, &squeeze_autograd);
  ops::unsqueeze.register_handler(K, &unsqueeze_autograd);
  ops::slice.register_handler(K, &slice_autograd);
  ops::select.register_handler(K, &select_autograd);
  ops::alias.register_handler(K, &alias_autograd);
  ops::clone.register_handler(K, &clone_autograd);
  ops::cat.register_handler(K, &cat_autograd);

  // Not differentiable (integer results): pass through.
  ops::nonzero.register_handler(K, [](const Tensor& x) { return ops::nonzero.redispatch(K, x); });

  // No formula yet: a clear error instead of a silently missing gradient.
  ops::as_strided.register_handler(
      K,
      [](const Tensor&, IntArrayRef, IntArrayRef, int64_t) -> Tensor { no_formula("as_strided"); });
  ops::diagonal.register_handler(
      K, [](const Tensor&, int64_t, int64_t, int64_t) -> Tensor { no_formula("diagonal"); });
  ops::unfold.register_handler(
      K, [](const Tensor&, int64_t, int64_t, int64_t) -> Tensor { no_formula("unfold"); });
  ops::max_dim.register_handler(
      K,
      [](const Tensor&, int64_t, bool, bool) -> std::tuple<Tensor, Tensor> { no_formula("max"); });
  ops::index.register_handler(K, [](const Tensor&, TensorList) -> Tensor { no_formula("index"); });
  ops::gather.register_handler(
      K, [](const Tensor&, int64_t, const Tensor&) -> Tensor { no_formula("gather"); });

  // In-place ops.
  ops::unary_.register_handler(K, [](UnaryOp, Tensor& s) -> Tensor& { no_inplace(s, "unary_"); });
  ops::binary_.register_handler(
      K, [](BinaryOp, Tensor& s, const Tensor&) -> Tensor& { no_inplace(s, "binary_"); });
  ops::clamp_.register_handler(
      K, [](Tensor& s, std::optional<Scalar>, std::optional<Scalar>) -> Tensor& {
        no_inplace(s, "clamp_");
      });
  ops::masked_fill_.register_handler(
      K, [](Tensor& s, const Tensor&, const Scalar&) -> Tensor& { no_inplace(s, "masked_fill_"); });
  ops::copy_.register_handler(K,
                              [](Tensor& s, const Tensor&) -> Tensor& { no_inplace(s, "copy_"); });
  ops::fill_.register_handler(K,
                              [](Tensor& s, const Scalar&) -> Tensor& { no_inplace(s, "fill_"); });
  ops::index_put_.register_handler(K, [](Tensor& s, TensorList, const Tensor&, bool) -> Tensor& {
    no_inplace(s, "index_put_");
  });
  ops::scatter_add_.register_handler(
      K, [](Tensor& s, int64_t, const Tensor&, const Tensor&) -> Tensor& {
        no_inplace(s, "scatter_add_");
      });
  ops::uniform_.register_handler(
      K, [](Tensor& s, double, double) -> Tensor& { no_inplace(s, "uniform_"); });
  ops::normal_.register_handler(
      K, [](Tensor& s, double, double) -> Tensor& { no_inplace(s, "normal_"); });
}

}  // namespace glass::autograd
