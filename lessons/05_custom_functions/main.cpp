// lessons/05_custom_functions/main.cpp — lesson 05 as a program: writing your own
// differentiable function (the seed's MyReLU as a glass::autograd::Function, with its
// AutogradContext), and checking its backward against finite differences with
// glass::autograd::gradcheck: a pass, a wrong backward caught, a kink, float32 versus
// float64, then saved_data, needs_input_grad and mark_non_differentiable.
//
// The lesson_05_output test runs this program and compares its stdout with the blocks
// quoted in README.md, so the text cannot drift from the code: change one, re-run, and
// update the other (`check_lesson_output --update` rewrites the README's blocks).
#include <glass/glass.h>

#include <any>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

namespace {

using glass::Tensor;
using glass::autograd::AutogradContext;
using glass::autograd::tensor_list;

const char* yes_no(bool b) { return b ? "yes" : "no"; }

void section(const char* title) { std::cout << "== " << title << " ==\n"; }

void print_error(const std::function<void()>& f) {
  try {
    f();
    std::cout << "   (no error)\n";
  } catch (const glass::Error& e) {
    std::cout << "   glass::Error: " << e.what() << "\n";
  }
}

// gradcheck's verdict in one line: "passed", or the first line of its report.
std::string summary(const glass::autograd::GradcheckResult& r) {
  if (r.ok) return "passed";
  return "FAILED: " + r.report.substr(0, r.report.find('\n'));
}

// [SECTION] the seed's MyReLU, line for line ----------------------------------------------

struct MyReLU : glass::autograd::Function<MyReLU> {
  static Tensor forward(AutogradContext* ctx, Tensor input) {
    ctx->save_for_backward({input});  // Save tensor for backward phase
    return input.clamp(0);            // input.clamp(min=0)
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output) {
    Tensor input = ctx->get_saved_variables()[0];  // input, = ctx.saved_tensors
    Tensor grad_input = grad_output[0].clone();
    grad_input.index_put_({input < 0}, 0);  // Mask gradient for negative inputs
    return {grad_input};
  }
};

// The same function with a bug in backward: it forgets the mask.
struct ForgetfulReLU : glass::autograd::Function<ForgetfulReLU> {
  static Tensor forward(AutogradContext* ctx, Tensor input) {
    ctx->save_for_backward({input});
    return input.clamp(0);
  }
  static tensor_list backward(AutogradContext*, tensor_list grad_output) {
    return {grad_output[0].clone()};  // BUG: negative inputs should get 0
  }
};

tensor_list my_relu(const tensor_list& in) { return {MyReLU::apply(in[0])}; }
tensor_list forgetful_relu(const tensor_list& in) { return {ForgetfulReLU::apply(in[0])}; }

// [SECTION] gradcheck's two Jacobians, by hand ---------------------------------------------

// J[i][j] = d f(x)_i / d x_j by central differences, one column per input element:
// column j = (f(x + eps e_j) - f(x - eps e_j)) / (2 eps). No backward is involved.
Tensor numerical_jacobian(const std::function<Tensor(const Tensor&)>& f, const Tensor& x,
                          double eps) {
  glass::NoGradGuard no_grad;
  int64_t n = x.numel(), m = f(x).numel();
  Tensor jac = glass::zeros({m, n}, glass::kDouble);
  for (int64_t j = 0; j < n; ++j) {
    Tensor plus = x.detach().clone(), minus = x.detach().clone();
    plus.view({-1}).select(0, j).add_(eps);
    minus.view({-1}).select(0, j).sub_(eps);
    Tensor column = (f(plus) - f(minus)) / (2 * eps);
    jac.select(1, j).copy_(column.reshape({-1}).to(glass::kDouble));
  }
  return jac;
}

// The same Jacobian from backward, one row per output element: row i is the
// vector-Jacobian product e_i^T J, which is what backward computes for the gradient e_i.
Tensor analytical_jacobian(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  Tensor leaf = x.detach().clone().requires_grad_();
  Tensor y = f(leaf);
  Tensor jac = glass::zeros({y.numel(), x.numel()}, glass::kDouble);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Tensor e = glass::zeros_like(y);
    e.view({-1}).select(0, i).fill_(1);
    Tensor g = glass::autograd::grad({y}, {leaf}, {e}, /*retain_graph=*/true)[0];
    jac.select(0, i).copy_(g.reshape({-1}).to(glass::kDouble));
  }
  return jac;
}

// The central difference of x^3 at x = 1 (exact derivative 3) in one dtype.
double cube_slope(glass::ScalarType dtype, double eps) {
  Tensor x = glass::ones({1}, dtype);
  Tensor plus = x + eps, minus = x - eps;
  Tensor slope = (plus * plus * plus - minus * minus * minus) / (2 * eps);
  return slope.item<double>();
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

// [SECTION] the context's other tools ------------------------------------------------------

// A non-tensor argument, kept for backward in ctx->saved_data.
struct LeakyReLU : glass::autograd::Function<LeakyReLU> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double slope) {
    ctx->save_for_backward({x});
    ctx->saved_data["slope"] = slope;
    return glass::where(x >= 0, x, x * slope);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output) {
    Tensor x = ctx->get_saved_variables()[0];
    double slope = std::any_cast<double>(ctx->saved_data["slope"]);
    Tensor grad_x = glass::where(x >= 0, grad_output[0], grad_output[0] * slope);
    return {grad_x, Tensor()};  // one entry per forward argument; the double gets none
  }
};

// Two tensor arguments; backward computes only the gradients somebody needs.
int g_backward_products = 0;  // matrix products run by MatMul::backward, for the printout

struct MatMul : glass::autograd::Function<MatMul> {
  static Tensor forward(AutogradContext* ctx, Tensor x, Tensor w) {  // x: (B, K), w: (K, N)
    ctx->save_for_backward({x, w});
    return x.mm(w);  // (B, N)
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output) {
    tensor_list saved = ctx->get_saved_variables();
    const Tensor &x = saved[0], &w = saved[1], &g = grad_output[0];  // g: (B, N)
    Tensor grad_x, grad_w;
    if (ctx->needs_input_grad(0)) {
      grad_x = g.mm(w.t());  // (B, K)
      ++g_backward_products;
    }
    if (ctx->needs_input_grad(1)) {
      grad_w = x.t().mm(g);  // (K, N)
      ++g_backward_products;
    }
    return {grad_x, grad_w};
  }
};

// A second output with no gradient: the mask of where the input was positive.
struct ReLUWithMask : glass::autograd::Function<ReLUWithMask> {
  static tensor_list forward(AutogradContext* ctx, Tensor x, bool mark) {
    Tensor mask = (x > 0).to(x.dtype());  // 1. where x > 0, else 0.: a float tensor
    Tensor y = x * mask;
    if (mark) ctx->mark_non_differentiable({mask});
    ctx->save_for_backward({mask});
    return {y, mask};
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output) {
    Tensor mask = ctx->get_saved_variables()[0];
    return {grad_output[0] * mask, Tensor()};  // grad_output[1], the mask's, is not used
  }
};

std::string grad_fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : "-"; }

// Same shape and exactly the same values.
bool same(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && (a.detach() != b.detach()).sum().item<int64_t>() == 0;
}

}  // namespace

int main() {
  section("1. MyReLU, the seed's custom function in C++");
  Tensor x = glass::tensor({-1.5, -0.5, 0.5, 2.0}, glass::kDouble).requires_grad_();
  Tensor y = MyReLU::apply(x);
  std::cout << "x = " << x.detach() << "\n";
  std::cout << "y = MyReLU::apply(x):\n   " << y << "\n";
  std::cout << "y.grad_fn(): " << y.grad_fn()->name() << ", one edge, to "
            << y.grad_fn()->next_edges()[0].function->name() << " (x)\n";
  Tensor v = glass::tensor({1., 2., 3., 4.}, glass::kDouble);
  (y * v).sum().backward();
  std::cout << "(y * " << v << ").sum().backward()\n";
  std::cout << "x.grad() = " << x.grad() << "\n";
  Tensor x2 = x.detach().clone().requires_grad_();
  Tensor y2 = x2.relu();
  (y2 * v).sum().backward();
  std::cout << "built-in x.relu(): " << y2.grad_fn()->name() << ", same values "
            << yes_no(same(y2, y)) << ", same gradient " << yes_no(same(x2.grad(), x.grad()))
            << "\n";
  Tensor x3 = x.detach().clone().requires_grad_();
  Tensor y3 = MyReLU::apply(x3);
  x3.detach().mul_(2);  // overwrites the input that forward saved (detach() shares storage)
  std::cout << "x.detach().mul_(2) between forward and backward, then backward:\n";
  print_error([&] { y3.sum().backward(); });

  section("2. gradcheck: the two Jacobians it compares");
  std::function<Tensor(const Tensor&)> relu_fn = [](const Tensor& t) { return MyReLU::apply(t); };
  Tensor x0 = x.detach();
  std::cout << "numerical, by central differences (eps 1e-6), column j = (f(x + eps e_j) - f(x - "
               "eps e_j)) / 2 eps:\n"
            << numerical_jacobian(relu_fn, x0, 1e-6) << "\n";
  std::cout << "analytical, by backward, row i = the gradient of x for the output gradient e_i:\n"
            << analytical_jacobian(relu_fn, x0) << "\n";
  std::cout << "gradcheck(MyReLU, x) with eps 1e-6, atol 1e-5, rtol 1e-3: "
            << summary(glass::autograd::gradcheck(my_relu, {x0})) << "\n";

  section("3. a wrong backward does not pass");
  glass::autograd::GradcheckResult wrong = glass::autograd::gradcheck(forgetful_relu, {x0});
  std::cout << "gradcheck(ForgetfulReLU, x): " << (wrong.ok ? "passed" : "failed") << "\n"
            << wrong.report;

  section("4. where gradcheck must not look: the kink at 0");
  Tensor at_kink = glass::tensor({0.0, 1.0}, glass::kDouble);
  glass::autograd::GradcheckResult kink = glass::autograd::gradcheck(my_relu, {at_kink});
  std::cout << "gradcheck(MyReLU, " << at_kink << "): " << (kink.ok ? "passed" : "failed") << "\n"
            << kink.report;

  section("5. why float64");
  std::cout << "d/dx x^3 at x = 1 is 3; central differences in each dtype:\n";
  std::cout << "   eps        float32 estimate   error     float64 estimate   error\n";
  for (double eps : {1e-2, 1e-4, 1e-6, 1e-8, 1e-10}) {
    double f32 = cube_slope(glass::kFloat, eps), f64 = cube_slope(glass::kDouble, eps);
    std::cout << "   " << std::left << std::setw(10) << sci(eps) << " " << std::setw(18)
              << std::fixed << std::setprecision(10) << f32 << " " << std::setw(9)
              << sci(std::abs(f32 - 3)) << " " << std::setw(18) << f64 << " "
              << sci(std::abs(f64 - 3)) << "\n";
  }
  Tensor x32 = x0.to(glass::kFloat);
  glass::autograd::GradcheckResult single = glass::autograd::gradcheck(my_relu, {x32});
  std::cout << "gradcheck(MyReLU, x in float32): " << (single.ok ? "passed" : "failed") << "\n"
            << single.report;
  std::cout << "gradcheck(MyReLU, x in float64): "
            << summary(glass::autograd::gradcheck(my_relu, {x0})) << "\n";

  section("6. a non-tensor argument and ctx->saved_data");
  {
    Tensor xl = x0.clone().requires_grad_();
    Tensor yl = LeakyReLU::apply(xl, 0.1);
    yl.sum().backward();
    std::cout << "LeakyReLU::apply(x, 0.1) = " << yl.detach() << "\n";
    std::cout << "after .sum().backward(): x.grad() = " << xl.grad() << "\n";
    std::cout << "gradcheck(LeakyReLU(., 0.1), x): "
              << summary(glass::autograd::gradcheck(
                     [](const tensor_list& in) -> tensor_list {
                       return {LeakyReLU::apply(in[0], 0.1)};
                     },
                     {x0}))
              << "\n";
  }

  section("7. ctx->needs_input_grad: compute only what is needed");
  {
    glass::manual_seed(0);
    Tensor data = glass::randn({2, 3}, glass::kDouble);    // (B, K): inputs, no gradient
    Tensor weight = glass::randn({3, 2}, glass::kDouble);  // (K, N): a parameter
    Tensor w1 = weight.clone().requires_grad_(), x1 = data.clone().requires_grad_();
    g_backward_products = 0;
    MatMul::apply(x1, w1).sum().backward();
    std::cout << "x and w both require grad: backward ran " << g_backward_products
              << " matrix products; x.grad() defined " << yes_no(x1.grad().defined())
              << ", w.grad() defined " << yes_no(w1.grad().defined()) << "\n";
    Tensor w2 = weight.clone().requires_grad_();
    g_backward_products = 0;
    MatMul::apply(data, w2).sum().backward();
    std::cout << "only w requires grad:        backward ran " << g_backward_products
              << " matrix product;  w.grad() equal to the first run's "
              << yes_no(same(w2.grad(), w1.grad())) << "\n";
    std::cout << "gradcheck(MatMul, {x, w}) checks both Jacobians: "
              << summary(glass::autograd::gradcheck(
                     [](const tensor_list& in) -> tensor_list {
                       return {MatMul::apply(in[0], in[1])};
                     },
                     {data, weight}))
              << "\n";
  }

  section("8. ctx->mark_non_differentiable: an output without a gradient");
  for (bool mark : {true, false}) {
    Tensor xm = x0.clone().requires_grad_();
    tensor_list out = ReLUWithMask::apply(xm, mark);
    std::cout << (mark ? "marked:     " : "not marked: ") << "y requires_grad "
              << yes_no(out[0].requires_grad()) << " (grad_fn " << grad_fn_name(out[0])
              << "), mask = " << out[1].detach() << " requires_grad "
              << yes_no(out[1].requires_grad()) << " (grad_fn " << grad_fn_name(out[1]) << ")\n";
  }
  std::cout << "gradcheck(ReLUWithMask, x), marked: "
            << summary(glass::autograd::gradcheck(
                   [](const tensor_list& in) { return ReLUWithMask::apply(in[0], true); }, {x0}))
            << "\n";
  return 0;
}
