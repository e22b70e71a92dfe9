// tests/autograd/forward_ad_test.cpp — forward mode (J·v with dual tensors) against reverse
// mode (vᵀ·J) through full Jacobians: column j from a tangent e_j must equal, entry by
// entry, what the reverse passes with unit output gradients give for row i.
#include "autograd/forward_ad.h"

#include "core/device_test.h"
#include "core/test_util.h"
#include "gradcheck_util.h"

namespace glass {
namespace {

using autograd::forward_ad::DualLevel;
using autograd::forward_ad::make_dual;
using autograd::forward_ad::unpack_dual;
using testing::close;
using testing::r;
using V = std::vector<Tensor>;
using Fn = std::function<Tensor(const V&)>;

class ForwardAD : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(ForwardAD);

// d out / d inputs[k], as an (out.numel, inputs[k].numel) matrix, by forward mode: one
// pass per column, tangent e_j on input k and none on the others.
Tensor jacobian_forward(const Fn& f, const V& inputs, size_t k) {
  int64_t n = inputs[k].numel();
  std::vector<Tensor> columns;
  for (int64_t j = 0; j < n; ++j) {
    DualLevel level;
    V duals = inputs;
    Tensor e = zeros({n}, kFloat64);  // e_j on the CPU, moved to the input's device
    e.index_put_({tensor({j})}, 1.0);
    duals[k] = make_dual(inputs[k], e.view(inputs[k].sizes()).to(inputs[k].device()));
    Tensor t = unpack_dual(f(duals)).tangent;
    EXPECT_TRUE(t.defined());
    columns.push_back(t.reshape({-1}));
  }
  return stack(columns, 1);
}

// The same matrix by reverse mode: one pass per row.
Tensor jacobian_reverse(const Fn& f, const V& inputs, size_t k) {
  V leaves;
  for (const Tensor& t : inputs) leaves.push_back(t.detach().requires_grad_());
  Tensor out = f(leaves);
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < out.numel(); ++i) {
    Tensor e = zeros({out.numel()}, kFloat64);
    e.index_put_({tensor({i})}, 1.0);
    auto g = autograd::grad({out}, {leaves[k]}, {e.view(out.sizes()).to(out.device())}, true, false,
                            true);
    rows.push_back(g[0].defined() ? g[0].reshape({-1})
                                  : zeros({inputs[k].numel()}, inputs[k].options()));
  }
  return stack(rows, 0);
}

void expect_jvp_matches_vjp(const Fn& f, const V& inputs) {
  for (size_t k = 0; k < inputs.size(); ++k) {
    SCOPED_TRACE("input " + std::to_string(k));
    Tensor fwd = jacobian_forward(f, inputs, k), rev = jacobian_reverse(f, inputs, k);
    EXPECT_TRUE(close(fwd, rev, 1e-10, 1e-10));
  }
}

TEST_P(ForwardAD, ElementwiseMatchesReverseMode) {
  std::vector<std::pair<const char*, Fn>> fs = {
      {"exp*sin", [](const V& x) { return x[0].exp() * x[1].sin(); }},
      {"div", [](const V& x) { return x[0] / (x[1] * x[1] + 1); }},
      {"broadcast sub", [](const V& x) { return x[0] - x[1].slice(0, 0, 1); }},
      {"pow", [](const V& x) { return x[0].abs().pow(x[1]); }},
      {"tanh sigmoid gelu",
       [](const V& x) { return x[0].tanh() + x[1].sigmoid() * x[0].gelu("tanh"); }},
      {"max min", [](const V& x) { return maximum(x[0], x[1]) - minimum(x[0], x[1] * 2); }},
      {"where clamp", [](const V& x) { return where(x[0] > 0, x[1], x[0].clamp(-0.5, 0.5)); }},
      {"relu log sqrt", [](const V& x) { return x[0].relu() + (x[1] * x[1] + 1).log().sqrt(); }},
  };
  for (auto& [name, f] : fs) {
    SCOPED_TRACE(name);
    expect_jvp_matches_vjp(f, {on(r({2, 3}, 1)), on(r({2, 3}, 2))});
  }
}

TEST_P(ForwardAD, MatmulReductionsAndViewsMatchReverseMode) {
  std::vector<std::pair<const char*, Fn>> fs = {
      {"mm", [](const V& x) { return x[0].matmul(x[1].t()); }},
      {"addmm", [](const V& x) { return addmm(x[0].sum(1), x[0], x[1].t(), 0.5, 2); }},
      {"bmm",
       [](const V& x) {
         return x[0].view({2, 1, 3}).bmm(x[1].view({2, 3, 1}));
       }},
      {"sum mean", [](const V& x) { return x[0].sum(1) * x[1].mean(0).sum(); }},
      {"amax prod", [](const V& x) { return x[0].amax(0) + x[1].prod(1).sum(); }},
      {"softmax", [](const V& x) { return x[0].softmax(1) + x[1].log_softmax(0); }},
      {"var logsumexp", [](const V& x) { return x[0].var(1) + x[1].logsumexp(1); }},
      {"views",
       [](const V& x) {
         return x[0].t().reshape({3, 2}).slice(0, 0, 3, 2) * x[1].select(1, 1).slice(0, 0, 2);
       }},
      {"permute expand",
       [](const V& x) {
         return x[0].unsqueeze(0).permute({1, 0, 2}).expand({2, 2, 3}) + x[1];
       }},
      {"cat select",
       [](const V& x) {
         return cat({x[0].select(0, 1), x[1].reshape({-1})}, 0);
       }},
      {"gather index max",
       [this](const V& x) {
         return x[0].gather(1, on(tensor({{2, 0}, {1, 1}}))).sum(1) +
                std::get<0>(x[1].max(1)) * x[0].index_select(1, on(tensor({0}))).select(1, 0);
       }},
      {"diagonal unfold",
       [](const V& x) { return x[0].diagonal(1) + x[1].reshape({-1}).unfold(0, 2, 4).sum(1); }},
      {"in-place",
       [](const V& x) {
         Tensor y = x[0] * 1;
         y.mul_(x[1]).masked_fill_(x[1] > 1, 0.0);
         return y.exp_();  // exp_ saves its output: it must come last
       }},
  };
  for (auto& [name, f] : fs) {
    SCOPED_TRACE(name);
    expect_jvp_matches_vjp(f, {on(r({2, 3}, 3)), on(r({2, 3}, 4))});
  }
}

TEST_P(ForwardAD, DualBasicsAndLevels) {
  Tensor primal = on(tensor({1., 2.})), tangent = on(tensor({1., 0.}));
  Tensor y;
  {
    DualLevel level;
    Tensor x = make_dual(primal, tangent);
    EXPECT_FALSE(x.requires_grad());
    {
      NoGradGuard no_grad;  // forward mode does not depend on grad mode
      y = x * x;
      EXPECT_TRUE(close(unpack_dual(y).tangent, {2, 0}));  // d(x²) = 2x dx
    }
    EXPECT_FALSE(unpack_dual(y).tangent.requires_grad());
    EXPECT_FALSE(unpack_dual(y).primal.unsafeGetTensorImpl()->has_forward_grad());
    EXPECT_GLASS_ERROR(DualLevel(), "already active");
  }
  EXPECT_FALSE(unpack_dual(y).tangent.defined());  // the level took its tangents with it
  EXPECT_TRUE(close(y, {1, 4}));
  EXPECT_GLASS_ERROR(make_dual(primal, tangent), "no dual level is active");
  DualLevel level;
  EXPECT_GLASS_ERROR(make_dual(primal, on(tensor({1., 2., 3.}))), "shape [3]", "[2]");
  EXPECT_GLASS_ERROR(make_dual(primal.to(kFloat64), on(tensor({1.f, 2.f}))), "dtype Float",
                     "Double");
  EXPECT_GLASS_ERROR(make_dual(on(tensor({1, 2})), on(tensor({1, 2}))), "floating-point");
  Tensor d = make_dual(primal, tangent);
  EXPECT_GLASS_ERROR(d.as_strided({1}, {1}, 0), "AsStridedBackward0", "no forward-mode");
}

TEST_P(ForwardAD, ForwardOverReverseGivesHessianVectorProducts) {
  // f(x) = sum(x³): ∇f = 3x², H = diag(6x), so H·v = 6 x v. A tangent on x through the
  // reverse-mode gradient computation (create_graph) gives it.
  Tensor x0 = on(tensor({1., -2., 0.5}));
  DualLevel level;
  Tensor x = make_dual(x0.detach().requires_grad_(), on(tensor({1., 1., 2.})));
  Tensor g = autograd::grad({x.pow(3).sum()}, {x}, {}, true, true)[0];
  EXPECT_TRUE(close(g, {3, 12, 0.75}));
  EXPECT_TRUE(close(unpack_dual(g).tangent, {6, -12, 6}));
}

}  // namespace
}  // namespace glass
