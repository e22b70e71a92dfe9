// lessons/01_imperative_model/main.cpp — lesson 01 as a program: autograd's graph is
// recorded while ordinary C++ runs. Every statement computes its values at once; the ops
// it runs on tensors that require grad leave grad_fn nodes behind; C++'s own `while` and
// `if` therefore decide the graph's shape, input by input; a fresh graph is built on every
// call and freed after backward(); detach() and NoGradGuard keep parts of it out.
//
// The lesson_01_output test runs this program and compares its stdout with the blocks
// quoted in README.md, so the text cannot drift from the code: change one, re-run, and
// update the other (`check_lesson_output --update` rewrites the README's blocks).
#include <glass/glass.h>

#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using glass::Tensor;
using glass::autograd::AccumulateGrad;
using glass::autograd::Node;

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

// Runs one statement and lists what the library did while it ran, as reported on the
// events channel (core/events.h): each dispatch of an op with the key that handled it,
// and each grad_fn node recorded. Everything happens inside the call, before it returns.
Tensor run_and_watch(const char* code, const std::function<Tensor()>& statement) {
  std::vector<std::string> log;
  Tensor result;
  {
    glass::events::Subscription watch([&log](const glass::events::Event& e) {
      if (e.kind == glass::events::Kind::OpDispatched)
        log.push_back(std::string("dispatch: ") + e.name + " (entry " + e.entry + "), " + e.detail +
                      " key");
      else if (e.kind == glass::events::Kind::GraphNodeCreated)
        log.push_back(std::string("record:   ") + e.name);
    });
    result = statement();
  }
  std::cout << code << "\n";
  for (const std::string& line : log) std::cout << "   " << line << "\n";
  return result;
}

// Prints the graph behind a tensor, one node per line: its grad_fn first, then, indented
// below each node, the nodes its next_edges() lead to, down to the AccumulateGrad nodes
// that write the leaves' .grad(). This is the walk backward() makes, without the
// arithmetic. An invalid edge (an input that needs no gradient, like a constant) prints
// as None. A node reached a second time is a shared subexpression: it is named again
// but not expanded twice. `names` labels the grad_fns of named tensors and the
// AccumulateGrad nodes of named leaves.
class GraphPrinter {
 public:
  explicit GraphPrinter(std::vector<std::pair<std::string, Tensor>> names)
      : names_(std::move(names)) {}

  void print(const Tensor& root) {
    seen_.clear();
    if (!root.grad_fn()) {
      std::cout << "(no grad_fn: "
                << (root.requires_grad() ? "a leaf that requires grad" : "no graph at all")
                << ")\n";
      return;
    }
    visit(root.grad_fn().get(), "", "");
  }

 private:
  // `lead` goes before this node's name; `indent` before the lines of its children.
  void visit(const Node* node, const std::string& lead, const std::string& indent) {
    std::string line = lead + node->name();
    std::string note = label(node);
    bool first_visit = seen_.insert(node).second;
    if (!first_visit) note += note.empty() ? "(seen above)" : " (seen above)";
    if (!note.empty()) line += std::string(line.size() < 36 ? 36 - line.size() : 1, ' ') + note;
    std::cout << line << "\n";
    if (!first_visit) return;
    const std::vector<glass::autograd::Edge>& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      bool last = i + 1 == edges.size();
      std::string branch = indent + (last ? "`-- " : "|-- ");  // this child's line
      std::string below = indent + (last ? "    " : "|   ");   // its children's lines
      if (edges[i].is_valid())
        visit(edges[i].function.get(), branch, below);
      else
        std::cout << branch << "None\n";  // an input that needs no gradient
    }
  }

  std::string label(const Node* node) const {
    const auto* acc = dynamic_cast<const AccumulateGrad*>(node);  // null for other nodes
    for (const auto& [name, t] : names_) {
      if (t.grad_fn().get() == node) return name + ".grad_fn()";
      if (acc != nullptr && acc->variable().is_same(t)) return "into " + name + ".grad()";
    }
    return "";
  }

  std::vector<std::pair<std::string, Tensor>> names_;
  std::set<const Node*> seen_;
};

std::string grad_fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : "-"; }

// Doubles y until its norm reaches `limit`. How many times the loop body runs, and so
// how many MulBackward0 nodes the result's graph gets, depends on the values in y.
Tensor double_until(Tensor y, double limit, int& steps) {
  steps = 0;
  while (y.norm().item<double>() < limit) {
    y = y * 2;
    ++steps;
  }
  return y;
}

// Newton's method for sqrt(a), from y = 1: y <- (y + a / y) / 2 until y*y is within
// 1e-12 * a of a. An algorithm with a data-dependent stopping test, differentiated as is.
Tensor newton_sqrt(const Tensor& a, int& steps) {
  Tensor y = glass::ones_like(a);
  steps = 0;
  while ((y * y - a).abs().item<double>() > 1e-12 * a.item<double>()) {
    y = (y + a / y) * 0.5;
    ++steps;
  }
  return y;
}

// A branch on a value: which ops run, and so which nodes are recorded, depends on x.
Tensor branchy(const Tensor& x) {
  if (x.sum().item<double>() > 0) return (x * x).sum();
  return x.exp().sum();
}

}  // namespace

int main() {
  std::cout << std::fixed << std::setprecision(4);

  section("1. eager execution: each statement runs when it is reached");
  Tensor x = glass::tensor({1., 2., 3.}).requires_grad_();
  std::cout << "x = tensor({1., 2., 3.}).requires_grad_()\n";
  Tensor a = run_and_watch("a = x * x", [&] { return x * x; });
  std::cout << "a already holds its values: " << a << "\n";
  Tensor s = a.sum();
  std::cout << "s = a.sum(): " << s << "\n";
  double value = s.item<double>();  // a plain C++ double, available right now
  std::cout << "s.item<double>() = " << value << "\n";
  if (value > 10)
    std::cout << "if (s.item<double>() > 10): true, this run took the first branch\n";
  else
    std::cout << "if (s.item<double>() > 10): false, this run took the second branch\n";

  section("2. requires_grad spreads forward from the leaves");
  Tensor c = glass::tensor({4., 5., 6.});
  Tensor cc = run_and_watch("cc = c * c        (c does not require grad)", [&] { return c * c; });
  std::vector<std::pair<std::string, Tensor>> rows = {
      {"x", x}, {"c", c}, {"cc = c * c", cc}, {"x * c", x * c}, {"(x * c).sum()", (x * c).sum()},
  };
  std::cout << std::left << std::setw(16) << "tensor" << std::setw(15) << "requires_grad"
            << std::setw(9) << "is_leaf"
            << "grad_fn\n";
  for (const auto& [name, t] : rows) {
    std::cout << std::setw(16) << name << std::setw(15) << yes_no(t.requires_grad()) << std::setw(9)
              << yes_no(t.is_leaf()) << grad_fn_name(t) << "\n";
  }

  section("3. the graph behind a tensor, and backward()");
  {
    Tensor x3 = glass::tensor({1., 2., 3.}).requires_grad_();
    Tensor w = glass::tensor({4., 5., 6.}).requires_grad_();
    Tensor h = x3 * w;
    Tensor y = (h * h).sum();
    std::cout << "x = tensor({1., 2., 3.}), w = tensor({4., 5., 6.}), both requires_grad_()\n";
    std::cout << "h = x * w; y = (h * h).sum() = " << y.item<double>() << "\n";
    GraphPrinter({{"y", y}, {"h", h}, {"x", x3}, {"w", w}}).print(y);
    y.backward();
    std::cout << "y.backward()\n";
    std::cout << "x.grad() = " << x3.grad() << "   (2 * h * w)\n";
    std::cout << "w.grad() = " << w.grad() << "   (2 * h * x)\n";
  }

  section("4. a loop: the data decides how deep the graph is");
  for (const auto& values : {std::vector<double>{1., 1.}, {3., 4.}, {6., 8.}}) {
    Tensor x4 = glass::tensor(values, glass::kFloat).requires_grad_();
    int steps = 0;
    Tensor y = double_until(x4, 10, steps);
    std::cout << "x = " << x4.detach() << ": the loop ran " << steps
              << (steps == 1 ? " time" : " times") << ", y = " << y.detach() << "\n";
    GraphPrinter({{"x", x4}, {"y", y}}).print(y);
    y.sum().backward();
    std::cout << "after y.sum().backward(): x.grad() = " << x4.grad() << "\n";
  }
  std::cout << "Newton's method for sqrt(a), differentiated through its iterations:\n";
  std::cout << std::setprecision(10);
  for (double av : {0.25, 2.0, 100.0}) {
    Tensor a4 = glass::scalar_tensor(av, glass::kDouble).requires_grad_();
    int steps = 0;
    Tensor r = newton_sqrt(a4, steps);
    r.backward();
    std::cout << "   a = " << std::setw(6) << std::defaultfloat << av << std::fixed << "  steps "
              << steps << "  sqrt " << std::setw(14) << r.item<double>() << "  d/da "
              << a4.grad().item<double>() << "  1/(2 sqrt(a)) " << 0.5 / r.item<double>() << "\n";
  }
  std::cout << std::setprecision(4);

  section("5. an if: only the branch that ran is in the graph");
  for (const auto& values : {std::vector<double>{1., 2.}, {-1., -2.}}) {
    Tensor x5 = glass::tensor(values, glass::kFloat).requires_grad_();
    Tensor y = branchy(x5);
    std::cout << "x = " << x5.detach() << ": x.sum() "
              << (x5.sum().item<double>() > 0 ? "> 0, y = (x * x).sum()"
                                              : "<= 0, y = x.exp().sum()")
              << "\n";
    GraphPrinter({{"x", x5}, {"y", y}}).print(y);
    y.backward();
    std::cout << "x.grad() = " << x5.grad() << "\n";
  }

  section("6. cutting the graph: detach() and NoGradGuard");
  {
    Tensor x6 = glass::tensor({1., 2., 3.}).requires_grad_();
    Tensor d = x6.detach();
    std::cout << "d = x.detach(): requires_grad " << yes_no(d.requires_grad()) << ", is_leaf "
              << yes_no(d.is_leaf()) << ", same storage as x (is_alias_of) "
              << yes_no(d.is_alias_of(x6)) << "\n";
    Tensor y = (x6 * d).sum();
    std::cout << "y = (x * d).sum():\n";
    GraphPrinter({{"x", x6}, {"y", y}}).print(y);
    y.backward();
    std::cout << "x.grad() = " << x6.grad() << "   (d's path is cut: not 2 * x)\n";
    std::cout << "x -= 0.1 * x.grad(), outside NoGradGuard:\n";
    print_error([&] { x6 -= 0.1 * x6.grad(); });
    Tensor z;
    {
      glass::NoGradGuard no_grad;
      std::cout << "inside NoGradGuard: GradMode::is_enabled() "
                << yes_no(glass::GradMode::is_enabled()) << "\n";
      z = x6 * x6;
    }
    std::cout << "after it: GradMode::is_enabled() " << yes_no(glass::GradMode::is_enabled())
              << "; z = x * x computed inside: " << z << ", requires_grad "
              << yes_no(z.requires_grad()) << ", grad_fn " << grad_fn_name(z) << "\n";
  }

  section("7. a new graph on every iteration");
  {
    Tensor w = glass::tensor({0.5}).requires_grad_();
    Tensor xs = glass::tensor({1., 2., 3.});
    Tensor ts = glass::tensor({2., 4., 6.});
    std::cout << "fit w in w * x = t, x = [1, 2, 3], t = [2, 4, 6], from w = 0.5, lr = 0.03\n";
    std::weak_ptr<Node> previous;
    for (int step = 0; step < 3; ++step) {
      Tensor r = w * xs - ts;
      Tensor loss = (r * r).sum();
      if (step == 0) GraphPrinter({{"loss", loss}, {"r", r}, {"w", w}}).print(loss);
      bool previous_freed = step > 0 && previous.expired();
      previous = loss.grad_fn();
      loss.backward();
      double g = w.grad().item<double>();
      {
        glass::NoGradGuard no_grad;  // the update is not part of any graph
        w -= 0.03 * w.grad();
      }
      w.mutable_grad() = Tensor();  // start the next step's gradient from zero
      std::cout << "step " << step << ": loss " << loss.item<double>() << ", dloss/dw " << g
                << ", w -> " << w.item<double>();
      if (step > 0)
        std::cout << "; step " << step - 1 << "'s graph freed: " << yes_no(previous_freed);
      std::cout << "\n";
      if (step == 2) {
        std::cout << "loss.backward() a second time on step 2's graph:\n";
        print_error([&] { loss.backward(); });
      }
    }
    std::cout << "after the loop, step 2's graph freed: " << yes_no(previous.expired()) << "\n";
  }
  return 0;
}
