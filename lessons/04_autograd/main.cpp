// lessons/04_autograd/main.cpp — lesson 04 as a program: reverse-mode autograd taken apart.
// It prints the graph of a small function and checks its gradients against a hand
// computation; replays the engine's two phases (dependency counts, then a ready queue
// ordered by sequence number) next to the real engine, watched through its events and
// tensor hooks; shows gradients that meet being summed (the `a + a` case); writes the chain
// rule as a product of vector-Jacobian products; runs forward mode (dual tensors, J·v);
// builds one Jacobian row by row and column by column and counts the passes each way;
// and ends with retain_graph, create_graph (second derivatives), NoGradGuard and detach().
//
// The lesson_04_output test runs this program and compares its stdout with the blocks
// quoted in README.md, so the text cannot drift from the code: change one, re-run, and
// update the other (`check_lesson_output --update` rewrites the README's blocks).
//
// [SECTION] helpers   [SECTION] graph and engine replay   [SECTION] the lesson's sections
#include <glass/glass.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <queue>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using glass::Tensor;
using glass::autograd::Edge;
using glass::autograd::Node;
namespace fwd = glass::autograd::forward_ad;

// [SECTION] helpers ----------------------------------------------------------------------

const char* yes_no(bool b) { return b ? "yes" : "no"; }

void section(const char* title) { std::cout << "== " << title << " ==\n"; }

// The values of a float tensor with 4 decimals: "1.0000" for one element, "[a, b, c]"
// otherwise. (A value that rounds to zero prints as 0.0000, never -0.0000.)
std::string vec(const Tensor& t) {
  Tensor c = t.detach().to(glass::kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  std::ostringstream os;
  os << std::fixed << std::setprecision(4);
  auto one = [&](double v) { os << (std::abs(v) < 5e-5 ? 0.0 : v); };
  if (c.dim() == 0) {
    one(p[0]);
    return os.str();
  }
  os << "[";
  for (int64_t i = 0; i < c.numel(); ++i) {
    if (i > 0) os << ", ";
    one(p[i]);
  }
  os << "]";
  return os.str();
}

// The values of a tensor that holds whole numbers, without decimals: "[2, 1, 0]".
std::string ints(const Tensor& t) {
  std::ostringstream os;
  os << "[";
  for (int64_t i = 0; i < t.numel(); ++i)
    os << (i ? ", " : "") << std::lround(t.reshape({-1}).select(0, i).item<double>());
  os << "]";
  return os.str();
}

// Same shape and every element within `tol`: the comparisons below are of float results
// with hand formulas, which agree to rounding, not bit for bit.
bool close(const Tensor& a, const Tensor& b, double tol = 1e-6) {
  if (a.sizes() != b.sizes()) return false;
  return (a.detach().to(glass::kDouble) - b.detach().to(glass::kDouble))
             .abs()
             .max()
             .item<double>() <= tol;
}

// A Float tensor made of plain C++ doubles (the hand computations are done in doubles).
Tensor from(const std::vector<double>& values) { return glass::tensor(values, glass::kFloat); }

// The unit vector e_i of length n.
Tensor unit(int64_t n, int64_t i) {
  Tensor e = glass::zeros({n});
  e.select(0, i).fill_(1.0);
  return e;
}

void print_error(const std::function<void()>& f) {
  try {
    f();
    std::cout << "   (no error)\n";
  } catch (const glass::Error& e) {
    std::cout << "   glass::Error: " << e.what() << "\n";
  }
}

// Counting work instead of timing it (counts are deterministic, timings are not): the
// events channel (core/events.h) reports every node recorded and every node run.
int count_events(glass::events::Kind kind, const std::function<void()>& work) {
  int count = 0;
  glass::events::Subscription watch(
      [&](const glass::events::Event& e) { count += e.kind == kind; });
  work();
  return count;
}
int nodes_recorded(const std::function<void()>& forward) {
  return count_events(glass::events::Kind::GraphNodeCreated, forward);
}
int nodes_run_by_backward(const Tensor& loss) {
  return count_events(glass::events::Kind::BackwardNodeRun, [&] { loss.backward(); });
}

// [SECTION] graph and engine replay ------------------------------------------------------

// Names for the nodes of one graph: the grad_fn of each named non-leaf tensor, and the
// AccumulateGrad node of each named leaf (the node that writes its .grad()).
class Names {
 public:
  void add(const std::string& name, const Tensor& t) {
    const Node* node = t.grad_fn() ? t.grad_fn().get() : leaf_node(t);
    tensor_[node] = name;
    if (!t.grad_fn()) accumulators_[node] = name;
  }
  // "TanhBackward0", or "AccumulateGrad(x)" for the accumulator of leaf x.
  std::string node(const Node* n) const {
    auto it = accumulators_.find(n);
    return it == accumulators_.end() ? n->name() : n->name() + "(" + it->second + ")";
  }
  // The tensor whose gradient the node receives ("" if unnamed).
  std::string tensor(const Node* n) const {
    auto it = tensor_.find(n);
    return it == tensor_.end() ? "" : it->second;
  }
  // The leaf's AccumulateGrad, which exists while a graph that uses the leaf is alive.
  static const Node* leaf_node(const Tensor& leaf) {
    return glass::autograd::gradient_edge(leaf).function.get();
  }

 private:
  std::map<const Node*, std::string> tensor_, accumulators_;
};

// Every node reachable from `root` through next_edges(), each once, depth first.
std::vector<const Node*> reachable(const Node* root) {
  std::vector<const Node*> order, stack = {root};
  std::set<const Node*> seen = {root};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    const std::vector<Edge>& edges = n->next_edges();
    for (auto e = edges.rbegin(); e != edges.rend(); ++e)  // so the first edge is visited first
      if (e->is_valid() && seen.insert(e->function.get()).second)
        stack.push_back(e->function.get());
  }
  return order;
}

// Sequence numbers are global creation counters; the lesson prints them relative to the
// oldest node of the graph, which keeps the numbers small and the output stable.
uint64_t oldest(const Node* root) {
  uint64_t s = root->sequence_nr();
  for (const Node* n : reachable(root)) s = std::min(s, n->sequence_nr());
  return s;
}

// Prints a graph as a table: each node, the tensor whose gradient it receives, its
// relative sequence number, and its next_edges as (node, input_nr) pairs.
void print_graph(const Tensor& root, const Names& names) {
  const Node* top = root.grad_fn().get();
  uint64_t base = oldest(top);
  std::cout << std::left << std::setw(19) << "node" << std::setw(8) << "tensor" << std::setw(5)
            << "seq"
            << "next_edges: (node, input_nr), one per input of the forward op\n";
  for (const Node* n : reachable(top)) {
    std::cout << std::setw(19) << names.node(n) << std::setw(8) << names.tensor(n) << "+"
              << std::setw(4) << n->sequence_nr() - base;
    if (n->next_edges().empty()) std::cout << "none: adds what arrives into the leaf's .grad()";
    for (size_t i = 0; i < n->next_edges().size(); ++i) {
      const Edge& e = n->next_edges()[i];
      std::cout << (i ? ", " : "")
                << (e.is_valid() ? "(" + names.node(e.function.get()) + ", " +
                                       std::to_string(e.input_nr) + ")"
                                 : std::string("None"));
    }
    std::cout << "\n";
  }
}

// Phase 1 of the engine (autograd/engine.cpp), without the arithmetic: for every node
// reachable from the root, how many edges of reachable nodes point at it.
std::map<const Node*, int> count_dependencies(const Node* root) {
  std::map<const Node*, int> deps = {{root, 0}};
  for (const Node* n : reachable(root))
    for (const Edge& e : n->next_edges())
      if (e.is_valid()) ++deps[e.function.get()];
  return deps;
}

// Phase 2, without the arithmetic: pop the ready node with the highest sequence number,
// count its edges down, and queue every node whose count reaches zero. Returns the order
// in which nodes run and, for each step, the queue after it.
struct Replay {
  std::vector<const Node*> order;
  std::vector<std::vector<const Node*>> queue_after;
};

Replay replay_engine(const Node* root) {
  std::map<const Node*, int> deps = count_dependencies(root);
  auto later_first = [](const Node* a, const Node* b) {
    return a->sequence_nr() < b->sequence_nr();
  };
  std::priority_queue<const Node*, std::vector<const Node*>, decltype(later_first)> ready(
      later_first);
  ready.push(root);
  Replay r;
  while (!ready.empty()) {
    const Node* n = ready.top();
    ready.pop();
    r.order.push_back(n);
    for (const Edge& e : n->next_edges())
      if (e.is_valid() && --deps[e.function.get()] == 0) ready.push(e.function.get());
    std::vector<const Node*> snapshot;
    for (auto copy = ready; !copy.empty(); copy.pop()) snapshot.push_back(copy.top());
    r.queue_after.push_back(snapshot);
  }
  return r;
}

// Runs root.backward() while watching the real engine: the events channel reports each
// node it runs (BackwardNodeRun), and a hook on each named tensor reports the gradient that
// tensor receives (the sum of everything that arrived at its node), just before its node
// runs. Then prints the run as a table beside the replay's dependency counts and queue.
void run_and_trace(const Tensor& root, const std::vector<std::pair<std::string, Tensor>>& named) {
  Names names;
  for (const auto& [name, t] : named) names.add(name, t);
  const Node* top = root.grad_fn().get();
  uint64_t base = oldest(top);
  std::map<const Node*, int> deps = count_dependencies(top);
  Replay replay = replay_engine(top);

  // Shared with the hooks, which stay on the tensors after this function returns.
  auto received = std::make_shared<std::map<const Node*, std::string>>();
  for (const auto& [name, t] : named) {
    const Node* node = t.grad_fn() ? t.grad_fn().get() : Names::leaf_node(t);
    t.register_hook([node, received](const Tensor& g) {
      (*received)[node] = vec(g);
      return Tensor();  // keep the gradient as it is
    });
  }
  std::vector<const Node*> ran;
  {
    glass::events::Subscription watch([&ran](const glass::events::Event& e) {
      if (e.kind == glass::events::Kind::BackwardNodeRun)
        ran.push_back(static_cast<const Node*>(e.ptr));
    });
    root.backward();
  }
  std::cout << std::left << std::setw(19) << "node run" << std::setw(7) << "tensor" << std::setw(5)
            << "seq" << std::setw(5) << "deps" << std::setw(28) << "gradient it received"
            << "ready queue after it (seq)\n";
  for (size_t i = 0; i < ran.size(); ++i) {
    std::string queue;
    for (const Node* q :
         i < replay.queue_after.size() ? replay.queue_after[i] : std::vector<const Node*>{})
      queue += (queue.empty() ? "" : ", ") + names.node(q) + " +" +
               std::to_string(q->sequence_nr() - base);
    std::cout << std::setw(19) << names.node(ran[i]) << std::setw(7) << names.tensor(ran[i]) << "+"
              << std::setw(4) << ran[i]->sequence_nr() - base << std::setw(5) << deps[ran[i]]
              << std::setw(28) << (*received)[ran[i]] << (queue.empty() ? "(empty)" : queue)
              << "\n";
  }
  std::cout << "the replay of engine.cpp's two phases pops the same nodes in the same order: "
            << yes_no(replay.order == ran) << "\n";
}

// [SECTION] the lesson's sections -----------------------------------------------------------

// Section 1's function, L = sum(tanh(x * w + b)), with the values the README works by hand.
struct Example {
  Tensor x = glass::tensor({1., 2., -1.}).requires_grad_();
  Tensor w = glass::tensor({0.5, -0.25, 1.}).requires_grad_();
  Tensor b = glass::tensor({0.5}).requires_grad_();  // [1]: broadcast over the 3 elements
  Tensor xw, z, y, L;
  Example() {
    xw = x * w;
    z = xw + b;
    y = z.tanh();
    L = y.sum();
  }
  std::vector<std::pair<std::string, Tensor>> named() const {
    return {{"L", L}, {"y", y}, {"z", z}, {"x*w", xw}, {"x", x}, {"w", w}, {"b", b}};
  }
};

// The hand computation of section 1, in plain doubles (no tensors, no autograd).
struct ByHand {
  std::vector<double> x = {1., 2., -1.}, w = {0.5, -0.25, 1.};
  double b = 0.5;
  std::vector<double> dz, dx, dw, hv;  // hv: the Hessian of L w.r.t. x times [1, 1, 1]
  double db = 0;
  ByHand() {
    for (size_t i = 0; i < 3; ++i) {
      double t = std::tanh(x[i] * w[i] + b);  // y_i
      dz.push_back(1 - t * t);                // d tanh(z)/dz = 1 - tanh(z)^2
      dx.push_back(dz[i] * w[i]);
      dw.push_back(dz[i] * x[i]);
      db += dz[i];  // b was broadcast: its copies' gradients add
      hv.push_back(-2 * t * (1 - t * t) * w[i] * w[i]);  // d/dx_i of (1 - y_i^2) w_i
    }
  }
};

void graph_and_gradients() {
  section("1. a small function, its graph, and its gradients by hand");
  Example ex;
  ByHand hand;
  std::cout << "x = tensor({1., 2., -1.}), w = tensor({0.5, -0.25, 1.}), b = tensor({0.5}), "
               "all requires_grad_()\n";
  std::cout << "z = x * w + b = " << vec(ex.z) << "\n";
  std::cout << "y = z.tanh()  = " << vec(ex.y) << "\n";
  std::cout << "L = y.sum()   = " << vec(ex.L) << "\n";
  Names names;
  for (const auto& [name, t] : ex.named()) names.add(name, t);
  print_graph(ex.L, names);
  ex.L.backward();
  std::cout << "L.backward(), then autograd's gradients beside the hand formulas:\n";
  std::cout << "dL/dz = 1 - y^2          " << vec(from(hand.dz)) << "\n";
  std::cout << "x.grad() " << std::setw(27) << vec(ex.x.grad()) << "hand (1 - y^2) * w    "
            << vec(from(hand.dx)) << "\n";
  std::cout << "w.grad() " << std::setw(27) << vec(ex.w.grad()) << "hand (1 - y^2) * x    "
            << vec(from(hand.dw)) << "\n";
  std::cout << "b.grad() " << std::setw(27) << vec(ex.b.grad()) << "hand sum(1 - y^2)     "
            << vec(from({hand.db})) << "\n";
  bool agree = close(ex.x.grad(), from(hand.dx)) && close(ex.w.grad(), from(hand.dw)) &&
               close(ex.b.grad(), from({hand.db}));
  std::cout << "autograd and the hand computation agree to 1e-6: " << yes_no(agree) << "\n";
}

void engine() {
  section("2. the engine: count dependencies, then run a ready queue");
  Example ex;
  run_and_trace(ex.L, ex.named());
}

void paths_meet() {
  section("3. where paths meet, gradients are summed");
  {
    Tensor x = glass::tensor({1., 2., 3.}).requires_grad_();
    Tensor a = x * 2;
    Tensor c = a + a;
    Tensor s = c.sum();
    std::cout << "a = x * 2; s = (a + a).sum(), x = [1, 2, 3]\n";
    run_and_trace(s, {{"s", s}, {"a+a", c}, {"a", a}, {"x", x}});
    std::cout << "x.grad() = " << vec(x.grad()) << " (s = 4 * sum(x))\n";
  }
  {
    Tensor x = glass::tensor({1., 2., 3.}).requires_grad_();
    Tensor w = glass::tensor({0.5, -0.25, 1.}).requires_grad_();
    Tensor h = x * w;
    Tensor t = h.tanh();
    Tensor u = t + h;
    Tensor L = u.sum();
    std::cout << "h = x * w; L = (h.tanh() + h).sum(), x = [1, 2, 3], w = [0.5, -0.25, 1]\n"
                 "two paths from L to h, of different lengths\n";
    run_and_trace(L, {{"L", L}, {"t+h", u}, {"t", t}, {"h", h}, {"x", x}, {"w", w}});
    Tensor th = h.detach().tanh();
    std::cout << "h received 1 + (1 - tanh(h)^2) = " << vec(2 - th * th) << "\n";
  }
}

void vector_jacobian_products() {
  section("4. every node is a vector-Jacobian product, v^T J");
  Example ex;
  ex.L.backward();
  Tensor y = ex.y.detach(), w = ex.w.detach();
  // The Jacobians along the path from L to x, written out as matrices.
  Tensor J_sum = glass::ones({1, 3});           // dL/dy: [1, 3]
  Tensor J_tanh = glass::eye(3) * (1 - y * y);  // dy/dz: diagonal
  Tensor J_add = glass::eye(3);                 // dz/d(x*w): identity
  Tensor J_mul = glass::eye(3) * w;             // d(x*w)/dx: diag(w)
  Tensor J_b = glass::ones({3, 1});             // dz/db: b was broadcast
  Tensor v_L = glass::ones({1, 1});
  Tensor v_y = v_L.mm(J_sum), v_z = v_y.mm(J_tanh), v_xw = v_z.mm(J_add), v_x = v_xw.mm(J_mul);
  std::cout << "J_tanh = dy/dz = diag(1 - y^2), a [3, 3] matrix that is zero off the diagonal:\n"
            << J_tanh << "\n";
  Tensor v_b = v_z.mm(J_b);
  std::cout << "v_L  = dL/dL                        = " << vec(v_L) << "\n";
  std::cout << "v_y  = v_L  @ J_sum   (ones [1, 3]) = " << vec(v_y) << "\n";
  std::cout << "v_z  = v_y  @ J_tanh                = " << vec(v_z) << "\n";
  std::cout << "v_xw = v_z  @ J_add   (identity)    = " << vec(v_xw) << "\n";
  std::cout << "v_x  = v_xw @ J_mul   (diag(w))     = " << vec(v_x)
            << "   equals x.grad(): " << yes_no(close(v_x.view({3}), ex.x.grad())) << "\n";
  std::cout << "v_b  = v_z  @ J_b     (ones [3, 1]) = " << vec(v_b) << std::string(20, ' ')
            << "equals b.grad(): " << yes_no(close(v_b.view({1}), ex.b.grad())) << "\n";
  std::cout << "TanhBackward0 gets v_z with no matrix at all: g * (1 - y * y) = "
            << vec(v_y.view({3}) * (1 - y * y)) << "\n";
}

void forward_mode() {
  section("5. forward mode: a dual tensor carries a Jacobian-vector product, J v");
  ByHand hand;
  Tensor x = glass::tensor({1., 2., -1.});
  Tensor w = glass::tensor({0.5, -0.25, 1.});
  Tensor b = glass::tensor({0.5});
  {
    fwd::DualLevel level;  // tangents exist while this object does
    Tensor v = glass::tensor({1., 0., 0.});
    Tensor xd = fwd::make_dual(x, v);
    Tensor z = xd * w + b;
    Tensor y = z.tanh();
    Tensor L = y.sum();
    std::cout << "inside a DualLevel: xd = make_dual(x, v), v = [1, 0, 0]; w and b are plain\n";
    std::cout << "z = xd * w + b   primal " << std::setw(27) << vec(fwd::unpack_dual(z).primal)
              << "tangent " << vec(fwd::unpack_dual(z).tangent) << "   (v * w)\n";
    std::cout << "y = z.tanh()     primal " << std::setw(27) << vec(fwd::unpack_dual(y).primal)
              << "tangent " << vec(fwd::unpack_dual(y).tangent)
              << "   ((1 - y^2) * tangent of z)\n";
    std::cout << "L = y.sum()      primal " << std::setw(27) << vec(fwd::unpack_dual(L).primal)
              << "tangent " << vec(fwd::unpack_dual(L).tangent) << "   (sum of tangents)\n";
    std::cout << "tangent of L = dL/dx0 = " << vec(fwd::unpack_dual(L).tangent)
              << ", section 1's x.grad()[0] by hand: " << vec(from({hand.dx[0]}).view({})) << "\n";
    std::cout << "L.requires_grad(): " << yes_no(L.requires_grad())
              << ", L.grad_fn(): " << (L.grad_fn() ? L.grad_fn()->name() : "none")
              << " (forward mode records no graph)\n";
    Tensor xd2 = fwd::make_dual(x, glass::ones({3}));  // another direction, another pass
    Tensor L_tangent = fwd::unpack_dual((xd2 * w + b).tanh().sum()).tangent;
    std::cout << "with v = [1, 1, 1]: tangent of L = " << vec(L_tangent)
              << " = sum of x.grad() (the derivative along v): "
              << yes_no(close(L_tangent, from({hand.dx[0] + hand.dx[1] + hand.dx[2]}).sum()))
              << "\n";
  }
  std::cout << "after the level ends, DualLevel::active(): " << yes_no(fwd::DualLevel::active())
            << "\n";
}

// f: R^3 -> R^2, f(x) = (x0 x1, x0^2 + x1 x2): small enough to differentiate by hand.
Tensor f(const Tensor& x) {
  Tensor x0 = x.select(0, 0), x1 = x.select(0, 1), x2 = x.select(0, 2);
  return glass::stack({x0 * x1, x0 * x0 + x1 * x2});
}

void jacobian_two_ways() {
  section("6. a whole Jacobian: m VJPs give its rows, n JVPs its columns");
  const int64_t n = 3, m = 2;
  Tensor x0 = glass::tensor({1., 2., 3.});
  Tensor hand = glass::tensor({{2., 1., 0.}, {2., 3., 2.}});  // [[x1, x0, 0], [2 x0, x2, x1]]
  std::cout << "f(x) = stack({x0 * x1, x0 * x0 + x1 * x2}) at x = [1, 2, 3] = " << ints(f(x0))
            << "\n";
  std::cout << "by hand, J = [[x1, x0, 0], [2 x0, x2, x1]] = [[2, 1, 0], [2, 3, 2]]\n";

  int forward_passes = 0, backward_passes = 0;
  Tensor x = x0.detach().requires_grad_();
  Tensor y = f(x);
  ++forward_passes;
  std::vector<Tensor> rows;
  std::cout << "rows, reverse mode: y = f(x) once, then for each output i\n"
               "   autograd::grad({y}, {x}, {e_i}, /*retain_graph=*/true)\n";
  for (int64_t i = 0; i < m; ++i) {
    rows.push_back(glass::autograd::grad({y}, {x}, {unit(m, i)}, /*retain_graph=*/true)[0]);
    ++backward_passes;
    std::cout << "   e_" << i << " = " << ints(unit(m, i)) << " -> row " << i << " = "
              << ints(rows.back()) << "\n";
  }
  std::vector<Tensor> columns;
  std::cout << "columns, forward mode: for each input j, one pass of f on make_dual(x, e_j)\n";
  {
    fwd::DualLevel level;
    for (int64_t j = 0; j < n; ++j) {
      Tensor yd = f(fwd::make_dual(x0, unit(n, j)));
      ++forward_passes;
      columns.push_back(fwd::unpack_dual(yd).tangent);
      std::cout << "   e_" << j << " = " << ints(unit(n, j)) << " -> column " << j << " = "
                << ints(columns.back()) << "\n";
    }
  }
  Tensor J_rows = glass::stack(rows), J_columns = glass::stack(columns, 1);
  std::cout << "stacked, both give\n" << J_rows << "\n";
  std::cout << "rows == columns: " << yes_no(close(J_rows, J_columns))
            << ", == the hand Jacobian: " << yes_no(close(J_rows, hand)) << "\n";
  std::cout << "passes: reverse mode 1 forward + " << backward_passes
            << " backward, one per output (m = " << m << ")\n";
  std::cout << "        forward mode " << forward_passes - 1
            << " forward passes with tangents, one per input (n = " << n << ")\n";
}

void cost() {
  section("7. the cost: a scalar loss needs 1 VJP but n JVPs");
  const int64_t n = 1000;
  Tensor theta0 = glass::linspace(-2, 2, n, glass::kFloat);
  Tensor c = glass::linspace(1, 2, n, glass::kFloat);
  auto loss = [&](const Tensor& theta) { return (theta.tanh() * c).sum(); };  // R^n -> R

  Tensor theta = theta0.detach().requires_grad_();
  int nodes_run = nodes_run_by_backward(loss(theta));
  std::cout << "L(theta) = sum(tanh(theta) * c), theta with n = " << n << " elements\n";
  std::cout << "reverse mode: 1 forward pass + 1 backward pass (" << nodes_run
            << " nodes run) -> all " << n << " partial derivatives\n";
  Tensor by_jvp = glass::empty({n});
  int passes = 0;
  {
    fwd::DualLevel level;
    for (int64_t j = 0; j < n; ++j) {
      Tensor tangent = fwd::unpack_dual(loss(fwd::make_dual(theta0, unit(n, j)))).tangent;
      by_jvp.select(0, j).copy_(tangent);
      ++passes;
    }
  }
  std::cout << "forward mode: " << passes << " forward passes, one per e_j, each giving 1 of the "
            << n << " numbers\n";
  std::cout << "the two gradients agree to 1e-6: " << yes_no(close(theta.grad(), by_jvp)) << "\n";

  // The other way round: one input, n outputs. g(t) = sin(t * k), dg/dt = k cos(t k).
  Tensor k = glass::linspace(0.001, 1, n, glass::kFloat);
  Tensor t0 = glass::tensor({0.5});
  auto curve = [&](const Tensor& t) { return (t * k).sin(); };  // R -> R^n
  Tensor column;
  {
    fwd::DualLevel level;
    column = fwd::unpack_dual(curve(fwd::make_dual(t0, glass::ones({1})))).tangent;
  }
  Tensor t = t0.detach().requires_grad_();
  Tensor g = curve(t);
  Tensor by_vjp = glass::empty({n});
  int vjps = 0;
  for (int64_t i = 0; i < n; ++i) {
    by_vjp.select(0, i).copy_(
        glass::autograd::grad({g}, {t}, {unit(n, i)}, /*retain_graph=*/true)[0].view({}));
    ++vjps;
  }
  std::cout << "g(t) = sin(t * k), t one number, k with n = " << n << " elements: R -> R^" << n
            << "\n";
  std::cout << "forward mode: 1 pass gives all " << n << " derivatives; reverse mode: " << vjps
            << " backward passes, one per output\n";
  std::cout << "the two agree, and equal k * cos(t * k): "
            << yes_no(close(column, by_vjp) && close(column, k * (t0 * k).cos())) << "\n";
}

void higher_order() {
  section("8. retain_graph, create_graph and second derivatives");
  Tensor s = glass::tensor(2.).requires_grad_();
  Tensor c = s * s * s;
  std::cout << "s = tensor(2.).requires_grad_(); c = s * s * s = " << vec(c) << "\n";
  c.backward(Tensor(), /*retain_graph=*/true);
  std::cout << "c.backward(Tensor(), /*retain_graph=*/true): s.grad() = " << vec(s.grad())
            << " (3 s^2)\n";
  c.backward();
  std::cout << "c.backward() on the kept graph:          s.grad() = " << vec(s.grad())
            << " (.grad() accumulates)\n";
  std::cout << "c.backward() once more (the last pass freed the saved tensors):\n";
  print_error([&] { c.backward(); });

  Tensor s2 = glass::tensor(2.).requires_grad_();
  Tensor c2 = s2 * s2 * s2;
  Tensor d1 = glass::autograd::grad({c2}, {s2}, {}, std::nullopt, /*create_graph=*/true)[0];
  std::cout << "d1 = grad({c}, {s}, {}, nullopt, /*create_graph=*/true)[0] = " << vec(d1)
            << ", d1.grad_fn(): " << d1.grad_fn()->name() << "\n";
  Tensor d2 = glass::autograd::grad({d1}, {s2}, {}, std::nullopt, true)[0];
  Tensor d3 = glass::autograd::grad({d2}, {s2})[0];
  std::cout << "d2 = grad({d1}, {s}, {}, nullopt, true)[0] = " << vec(d2) << " (6 s)\n";
  std::cout << "d3 = grad({d2}, {s})[0]                    = " << vec(d3)
            << " (6), d3.requires_grad(): " << yes_no(d3.requires_grad()) << "\n";

  Example ex;
  ByHand hand;
  Tensor v = glass::ones({3});
  Tensor gx = glass::autograd::grad({ex.L}, {ex.x}, {}, std::nullopt, /*create_graph=*/true)[0];
  Tensor hv = glass::autograd::grad({gx}, {ex.x}, {v})[0];
  std::cout << "Hessian-vector product of section 1's L w.r.t. x, v = [1, 1, 1]:\n";
  std::cout << "   gx = grad({L}, {x}, {}, nullopt, true)[0] = " << vec(gx) << "\n";
  std::cout << "   Hv = grad({gx}, {x}, {v})[0]            = " << vec(hv) << "\n";
  std::cout << "   by hand, -2 y (1 - y^2) w^2 * v          = " << vec(from(hand.hv))
            << "   agree: " << yes_no(close(hv, from(hand.hv))) << "\n";
}

void keeping_out() {
  section("9. keeping work out of the graph: NoGradGuard and detach()");
  Tensor x = glass::tensor({1., 2., -1.}).requires_grad_();
  Tensor w = glass::tensor({0.5, -0.25, 1.}).requires_grad_();
  Tensor b = glass::tensor({0.5}).requires_grad_();
  Tensor L, L_eval, L_det;
  int recorded = nodes_recorded([&] { L = (x * w + b).tanh().sum(); });
  std::cout << "L = (x * w + b).tanh().sum():   nodes recorded " << recorded << ", backward runs "
            << nodes_run_by_backward(L) << "\n";
  recorded = nodes_recorded([&] {
    glass::NoGradGuard no_grad;
    L_eval = (x * w + b).tanh().sum();
  });
  std::cout << "the same under NoGradGuard:     nodes recorded " << recorded
            << ", L.requires_grad() " << yes_no(L_eval.requires_grad()) << ", value " << vec(L_eval)
            << "\n";
  x.mutable_grad() = Tensor();  // start the comparison from empty gradients
  w.mutable_grad() = Tensor();
  recorded = nodes_recorded([&] { L_det = (x * w.detach() + b).tanh().sum(); });
  std::cout << "with w.detach() in place of w:  nodes recorded " << recorded << ", backward runs "
            << nodes_run_by_backward(L_det) << "\n";
  Names names;
  names.add("x", x);
  for (const Node* n : reachable(L_det.grad_fn().get())) {
    if (n->name() != "MulBackward0") continue;
    const std::vector<Edge>& edges = n->next_edges();
    std::cout << "   MulBackward0's next_edges: (" << names.node(edges[0].function.get())
              << ", 0), " << (edges[1].is_valid() ? "valid" : "None") << "\n";
  }
  std::cout << "   x.grad() " << vec(x.grad())
            << " as before; w.grad() defined: " << yes_no(w.grad().defined()) << "\n";
}

}  // namespace

int main() {
  graph_and_gradients();
  engine();
  paths_meet();
  vector_jacobian_products();
  forward_mode();
  jacobian_two_ways();
  cost();
  higher_order();
  keeping_out();
  return 0;
}
