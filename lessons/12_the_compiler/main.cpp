// lessons/12_the_compiler/main.cpp — lesson 12 as a program: glass::compile, the seed's
// §VII, from what one eager op costs to the C++ a fused group becomes.
//
// Sections: 1. what an op costs (the ops and new tensors of a small chain, eager and
// compiled); 2. a trace records what ran; 3. what a trace cannot see: sizes read in C++
// (guards, a retrace), a branch on a value (a graph break), and the same branch without the
// break; 4. the passes (dead code, a common subexpression, constant folding); 5. fusion and
// the generated loop; 6. the seed's "30–200%" against this machine; 7. the same group as a
// CUDA kernel on the simulated GPU, and what it moves against eager's kernels; 8. the
// backward traced with the forward it recomputes (the joint graph), fused, and what it moves.
//
// stdout is deterministic and lesson_12_output compares it with README.md. Timings are
// not: they go to stderr, each line starting with "[time]".
//
// [SECTION] helpers   [SECTION] 1-8   [SECTION] main
#include <glass/glass.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/tracer.h"
#include "cuda/sim/kernel_stats.h"

namespace {

using glass::Tensor;
using Clock = std::chrono::steady_clock;

// [SECTION] helpers ----------------------------------------------------------------------

void section(const char* title) { std::cout << "== " << title << " ==\n"; }

std::string fixed(double v, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << v;
  return os.str();
}

// The ops dispatched at the Backend key, and the tensors allocated, while `fn` runs.
struct OpLog {
  std::vector<std::string> ops;
  int allocations = 0;
};
OpLog log_ops(const std::function<void()>& fn) {
  OpLog log;
  int handle = glass::events::subscribe([&](const glass::events::Event& e) {
    if (e.kind == glass::events::Kind::OpDispatched && std::string(e.detail) == "Backend")
      log.ops.emplace_back(e.name);
    if (e.kind == glass::events::Kind::Allocation) ++log.allocations;
  });
  fn();
  glass::events::unsubscribe(handle);
  return log;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

// Seconds per call of `fn`, the best of 5 rounds of `reps` calls.
double seconds_per_call(const std::function<void()>& fn, int reps) {
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / reps);
  }
  return best;
}

void indented(const std::string& text, const std::string& pad = "  ") {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) std::cout << pad << line << "\n";
}

Tensor tiny_chain(const Tensor& a, const Tensor& b) { return ((a * b + a) * 0.5).relu(); }

Tensor seed_chain(const Tensor& a, const Tensor& b) {
  return ((a * b + a) * 0.5 - b).relu().sigmoid();
}

// [SECTION] 1. what an op costs ------------------------------------------------------------

void what_an_op_costs() {
  section("1. what an op costs");
  Tensor a = glass::randn({16}), b = glass::randn({16});
  OpLog eager = log_ops([&] { tiny_chain(a, b); });
  // The chain's own ops, and what they dispatch inside (counted by name, first seen first).
  std::vector<std::string> chain, inside;
  std::vector<int> times;
  for (const std::string& op : eager.ops) {
    if (op == "mul" || op == "add" || op == "relu") {
      chain.push_back(op);
      continue;
    }
    auto it = std::find(inside.begin(), inside.end(), op);
    if (it == inside.end()) {
      inside.push_back(op);
      times.push_back(1);
    } else {
      ++times[it - inside.begin()];
    }
  }
  for (size_t i = 0; i < inside.size(); ++i)
    if (times[i] > 1) inside[i] += " x" + std::to_string(times[i]);
  std::cout << "eager ((a*b + a) * 0.5).relu() on 16 floats\n"
            << "  the chain's ops: " << joined(chain) << "\n"
            << "  ops they dispatch inside: " << joined(inside) << "\n"
            << "  new tensors: " << eager.allocations << "\n";
  auto f = glass::compile(tiny_chain);
  f(a, b);  // the first call traces and compiles
  OpLog compiled = log_ops([&] { f(a, b); });
  std::cout << "compiled, a later call\n"
            << "  ops dispatched: " << joined(compiled.ops) << "\n"
            << "  new tensors: " << compiled.allocations << "\n";
  const double t_small = seconds_per_call([&] { tiny_chain(a, b); }, 20000);
  const double t_fused = seconds_per_call([&] { f(a, b); }, 20000);
  Tensor big_a = glass::randn({1 << 22}), big_b = glass::randn({1 << 22});
  const double t_big = seconds_per_call([&] { big_a + big_b; }, 20);
  std::cerr << "[time] eager tiny chain (4 ops on 16 floats): " << fixed(t_small * 1e9, 0)
            << " ns, " << fixed(t_small * 1e9 / 4, 0) << " ns per op\n"
            << "[time] compiled tiny chain: " << fixed(t_fused * 1e9, 0) << " ns\n"
            << "[time] one add on 4M floats: " << fixed(t_big * 1e6, 0) << " us, "
            << fixed(t_big * 1e9 / (1 << 22), 2) << " ns per element\n";
}

// [SECTION] 2. a trace records what ran ----------------------------------------------------

void a_trace_records_what_ran() {
  section("2. a trace records what ran");
  Tensor a = glass::randn({4, 3}), b = glass::randn({4, 3});
  glass::compiler::TraceResult r =
      glass::compiler::trace({a, b}, [&] { return std::vector<Tensor>{seed_chain(a, b)}; });
  std::cout << "trace of ((a*b + a) * 0.5 - b).relu().sigmoid():\n";
  indented(r.graph.to_string());
  std::cout << "the trace ran the function: its result equals eager's: "
            << (glass::equal(r.outputs[0], seed_chain(a, b)) ? "yes" : "no") << "\n";
}

// [SECTION] 3. what a trace cannot see ------------------------------------------------------

Tensor flatten(const Tensor& x) { return x.view({x.size(0) * x.size(1)}) * 2; }

Tensor branchy(const Tensor& x) {
  if (x.sum().item<double>() > 0) return x * 2;
  return x * -0.5;
}

Tensor branch_free(const Tensor& x) { return glass::where(x.sum() > 0, x * 2, x * -0.5); }

void what_a_trace_cannot_see() {
  section("3. what a trace cannot see");
  auto f = glass::compile(flatten);
  f(glass::ones({2, 3}));
  std::cout << "flatten reads x.size(0) in C++; the trace holds the product as a number:\n";
  indented(f.variants()[0].traced);
  f(glass::ones({2, 3}));
  f(glass::ones({3, 4}));
  glass::compiler::CompileStats s = f.stats();
  std::cout << "calls " << s.calls << ", traces " << s.traces
            << "; the retrace: " << s.last_guard_failure << "\n";

  auto g = glass::compile(branchy);
  Tensor pos = glass::ones({3}), neg = -glass::ones({3});
  bool right = glass::equal(g(pos), pos * 2) && glass::equal(g(neg), neg * -0.5);
  const glass::compiler::VariantInfo v = g.variants()[0];
  std::cout << "branchy: graph break at " << v.graph_break->op << "(); it runs eagerly, so "
            << "both branches are right: " << (right ? "yes" : "no") << "\n";
  auto strict = glass::compile(branchy, glass::CompileOptions().set_fullgraph(true));
  try {
    strict(pos);
  } catch (const glass::Error& e) {
    std::string what = e.what();
    std::cout << "with fullgraph:\n  " << what.substr(0, what.find(". Remove")) << "\n";
  }
  auto h = glass::compile(branch_free, glass::CompileOptions().set_fullgraph(true));
  h(pos);
  right = glass::equal(h(pos), pos * 2) && glass::equal(h(neg), neg * -0.5);
  std::cout << "branch_free (where instead of if): traces " << h.stats().traces
            << ", both branches right: " << (right ? "yes" : "no") << "\n";
}

// [SECTION] 4. the passes ------------------------------------------------------------------

Tensor wasteful(const Tensor& x) {
  Tensor unused = x.cos();               // dead: nothing reads it
  Tensor k = glass::full({4}, 2.0) * 3;  // made inside from numbers: folded
  return x.exp() * k + x.exp();          // exp twice: one is enough
}

void the_passes() {
  section("4. the passes");
  auto f = glass::compile(wasteful, glass::CompileOptions().set_fuse(false));
  f(glass::randn({4}));
  const glass::compiler::VariantInfo v = f.variants()[0];
  std::cout << "traced:\n";
  indented(v.traced);
  std::cout << "after the passes (" << v.dead << " dead, " << v.merged << " merged, " << v.folded
            << " folded):\n";
  indented(v.optimized);
}

// [SECTION] 5. fusion and the generated loop -----------------------------------------------

void fusion_and_codegen() {
  section("5. fusion and the generated loop");
  auto f = glass::compile(seed_chain);
  Tensor a = glass::randn({64}), b = glass::randn({64});
  f(a, b);
  const glass::compiler::VariantInfo v = f.variants()[0];
  std::cout << "fused groups: " << v.fused_groups << ", of " << v.groups[0].size() << " ops\n";
  const std::string& source = v.sources[0];
  // The group's IR heads the kernel as a comment; then the contiguous loop's body.
  size_t begin = source.find("// glass_kernel");
  size_t loop = source.find("for (int64_t i = 0; i < n; ++i) {", begin);
  size_t end = source.find("out[i] =", loop);
  indented(source.substr(begin, source.find('\n', end) - begin), "  ");
  std::cout << "  ...\n";
}

// [SECTION] 6. the seed's "30-200%" ----------------------------------------------------------

struct MLPImpl : glass::nn::Module {
  MLPImpl() : Module("MLP") {
    fc1 = register_module("fc1", glass::nn::Linear(784, 512));
    fc2 = register_module("fc2", glass::nn::Linear(512, 512));
    fc3 = register_module("fc3", glass::nn::Linear(512, 10));
  }
  Tensor forward(const Tensor& x) { return fc3(fc2(fc1(x).relu()).relu()); }
  glass::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

void the_seeds_claim() {
  section("6. the seed's \"30-200%\"");
  Tensor a = glass::empty({4096, 4096}).uniform_(-1, 1),
         b = glass::empty({4096, 4096}).uniform_(-1, 1);
  auto chain = glass::compile(seed_chain);
  chain(a, b);
  const double eager = seconds_per_call([&] { seed_chain(a, b); }, 3);
  const double fused = seconds_per_call([&] { chain(a, b); }, 3);
  glass::manual_seed(0);
  auto model = std::make_shared<MLPImpl>();
  auto compiled = glass::compile(model);
  Tensor x = glass::randn({64, 784});
  glass::NoGradGuard no_grad;
  compiled(x);
  const double mlp_eager = seconds_per_call([&] { model->forward(x); }, 20);
  const double mlp_compiled = seconds_per_call([&] { compiled(x); }, 20);
  std::cout << "timed on stderr: the seed chain on 16M floats, and lesson 06's MLP forward\n";
  std::cerr << "[time] seed chain, 16M floats: eager " << fixed(eager * 1e3, 1) << " ms, compiled "
            << fixed(fused * 1e3, 1) << " ms: " << fixed(eager / fused, 2) << "x ("
            << fixed((eager / fused - 1) * 100, 0) << "% faster)\n"
            << "[time] MLP forward, batch 64: eager " << fixed(mlp_eager * 1e6, 0)
            << " us, compiled " << fixed(mlp_compiled * 1e6, 0)
            << " us: " << fixed(mlp_eager / mlp_compiled, 2) << "x\n";
}

// [SECTION] 7. the same group on a GPU ----------------------------------------------------

// Counts what the kernels launched by fn moved through global memory (the simulator's
// counters, cuda/sim/kernel_stats.h), and how many were launched. Launches return before
// their kernels run: whatever was queued earlier must finish first, or it is counted too.
glass::cuda::sim::KernelStats traffic(const std::function<void()>& fn) {
  glass::cuda::synchronize();
  glass::cuda::sim::ScopedKernelStats stats;
  fn();
  glass::cuda::synchronize();
  return stats.total();
}

// "9 floats read and 6 written per element": what the kernels counted in `s` moved, over n
// floats.
std::string moved(const glass::cuda::sim::KernelStats& s, int64_t n, int decimals) {
  const auto floats = [&](uint64_t bytes) { return fixed(double(bytes) / (4.0 * n), decimals); };
  return floats(s.global_load_bytes) + " floats read and " + floats(s.global_store_bytes) +
         " written per element";
}

void on_a_gpu() {
  section("7. the same group on a GPU");
  // The counts come from the simulated GPU, the one GPU whose every access can be counted.
  glass::cuda::use_simulator();
  const int64_t n = 1 << 16;
  Tensor a = glass::randn({n}).to(glass::kCUDA), b = glass::randn({n}).to(glass::kCUDA);
  auto f = glass::compile(seed_chain);
  glass::NoGradGuard no_grad;
  Tensor fused = f(a, b);  // traces, fuses, writes CUDA C++, builds it, runs it
  const auto eager_stats = traffic([&] { seed_chain(a, b); });
  const auto fused_stats = traffic([&] { f(a, b); });
  std::cout << "seed chain on " << n << " floats of cuda:0\n"
            << "  eager:    " << eager_stats.launches << " kernels, " << moved(eager_stats, n, 0)
            << "\n"
            << "  compiled: " << fused_stats.launches << " kernel,  " << moved(fused_stats, n, 0)
            << "\n"
            << "same values as eager: "
            << (glass::allclose(fused.cpu(), seed_chain(a, b).cpu(), 1e-6, 1e-7) ? "yes" : "no")
            << "\n";
  // The group's kernel: 16 elements a thread, 128 apart, with eager's device functors.
  const std::string source = f.variants()[0].sources[0];
  const size_t begin = source.find("__global__ void glass_cuda_kernel_0_flat");
  const size_t end = source.find("out[i] =", begin);
  indented(source.substr(begin, source.find('\n', end) - begin), "  ");
  std::cout << "  ...\n";
}

// [SECTION] 8. the backward, traced and fused ---------------------------------------------

// The IR a generated kernel starts with, as a comment: "// glass_kernel..." up to its output.
std::string kernel_ir(const std::string& source) {
  const size_t begin = source.find("// glass_");
  const size_t end = source.find("<- output", begin);
  return source.substr(begin, source.find('\n', end) - begin);
}

void the_backward() {
  section("8. the backward, traced and fused");
  auto f = glass::compile(seed_chain);
  Tensor a = glass::randn({64}).requires_grad_(), b = glass::randn({64}).requires_grad_();
  const Tensor g = glass::randn({64});
  f(a, b);              // traces the forward
  f(a, b).backward(g);  // the first backward traces the joint graph
  const glass::compiler::BackwardInfo bw = f.variants()[0].backwards.at(0);
  std::cout << "the joint graph, as traced (inputs: a, b, the output's gradient):\n";
  indented(bw.traced);
  std::cout << "after the passes: " << bw.fused_groups
            << " fused groups, each computing the chain again; the first, a's gradient:\n";
  indented(kernel_ir(bw.sources.at(0)));
  Tensor a2 = a.detach().requires_grad_(), b2 = b.detach().requires_grad_();
  seed_chain(a2, b2).backward(g);
  const Tensor ga = a.grad().clone(), gb = b.grad().clone();
  a.mutable_grad() = Tensor();
  b.mutable_grad() = Tensor();
  f(a, b).backward(g);  // now the compiled joint graph runs
  std::cout << "gradients equal eager's: "
            << (glass::allclose(a.grad(), a2.grad(), 1e-5, 1e-6) &&
                        glass::allclose(b.grad(), b2.grad(), 1e-5, 1e-6) &&
                        glass::allclose(a.grad(), ga, 1e-5, 1e-6) &&
                        glass::allclose(b.grad(), gb, 1e-5, 1e-6)
                    ? "yes"
                    : "no")
            << "\n";

  // What the backward moves on the simulated GPU (section 7 switched to it).
  const int64_t n = 1 << 16;
  const Tensor a0 = glass::randn({n}), b0 = glass::randn({n}), g0 = glass::randn({n});
  auto backward_stats = [&](bool compiled) {
    Tensor x = a0.to(glass::kCUDA).requires_grad_(), y = b0.to(glass::kCUDA).requires_grad_();
    Tensor out = compiled ? f(x, y) : seed_chain(x, y), grad = g0.to(glass::kCUDA);
    glass::cuda::synchronize();
    return traffic([&] { out.backward(grad); });
  };
  backward_stats(true);  // a new variant (CUDA tensors): its forward and backward are traced
  backward_stats(true);
  const auto eager_stats = backward_stats(false);
  const auto joint_stats = backward_stats(true);
  std::cout << "backward of the seed chain on " << n << " floats of cuda:0\n"
            << "  eager:    " << eager_stats.launches << " kernels, " << moved(eager_stats, n, 1)
            << "\n"
            << "  compiled: " << joint_stats.launches << " kernels,  " << moved(joint_stats, n, 1)
            << "\n";

  // Two layers: a matrix product is kept from the forward, not recomputed.
  auto layers = [](const Tensor& x, const Tensor& w1, const Tensor& w2) {
    Tensor h = x.mm(w1);
    return (h * h.sigmoid()).mm(w2);
  };
  auto fl = glass::compile(layers);
  const std::vector<Tensor> host = {glass::randn({32, 48}), glass::randn({48, 64}),
                                    glass::randn({64, 16}), glass::randn({32, 16})};
  auto layers_backward = [&](bool compiled, std::vector<Tensor>* grads) {
    std::vector<Tensor> in;
    for (int i = 0; i < 3; ++i) in.push_back(host[i].to(glass::kCUDA).requires_grad_());
    Tensor out = compiled ? fl(in[0], in[1], in[2]) : layers(in[0], in[1], in[2]);
    const Tensor grad = host[3].to(glass::kCUDA);
    glass::cuda::synchronize();
    const auto stats = traffic([&] { out.backward(grad); });
    for (const Tensor& t : in) grads->push_back(t.grad().cpu());
    return stats;
  };
  std::vector<Tensor> want, got;
  for (int i = 0; i < 2; ++i) layers_backward(true, &got);  // the forward's trace, the joint's
  got.clear();
  const auto layers_eager = layers_backward(false, &want);
  const auto layers_joint = layers_backward(true, &got);
  bool equal = true;
  for (size_t i = 0; i < got.size(); ++i)
    equal = equal && glass::allclose(got[i], want[i], 1e-5, 1e-5);
  const glass::compiler::BackwardInfo lw = fl.variants()[0].backwards.at(0);
  std::cout << "two layers, h = x.mm(w1), then (h * h.sigmoid()).mm(w2), on cuda:0 (inputs x, w1,\n"
            << "w2, then h kept by the forward, then the output's gradient): the joint graph\n"
            << "reads h (" << lw.saved << " product kept) instead of multiplying again:\n";
  indented(lw.optimized);
  std::cout << "backward of the two layers\n"
            << "  eager:    " << layers_eager.launches << " kernels, " << layers_eager.flops
            << " flops in matrix products\n"
            << "  compiled: " << layers_joint.launches << " kernels, " << layers_joint.flops
            << " flops in matrix products\n"
            << "gradients equal eager's: " << (equal ? "yes" : "no") << "\n";

  // A training step's time on the CPU: the forward and the backward, 4M floats.
  Tensor x = glass::randn({2048, 2048}).requires_grad_(),
         y = glass::randn({2048, 2048}).requires_grad_();
  auto replayed = glass::compile(seed_chain, glass::CompileOptions().set_joint_backward(false));
  auto step = [&](const std::function<Tensor(const Tensor&, const Tensor&)>& fn) {
    return [&, fn] { fn(x, y).sum().backward(); };
  };
  auto eager_step = step(seed_chain);
  auto joint_step = step([&](const Tensor& p, const Tensor& q) { return f(p, q); });
  auto replay_step = step([&](const Tensor& p, const Tensor& q) { return replayed(p, q); });
  for (int i = 0; i < 2; ++i) joint_step(), replay_step();  // the traces
  const double eager = seconds_per_call(eager_step, 2);
  const double joint = seconds_per_call(joint_step, 2);
  const double replay = seconds_per_call(replay_step, 2);
  std::cout << "timed on stderr: a training step (forward and backward) on 4M floats\n";
  std::cerr << "[time] seed chain step, 4M floats: eager " << fixed(eager * 1e3, 1)
            << " ms, compiled with the backward replayed " << fixed(replay * 1e3, 1) << " ms ("
            << fixed(eager / replay, 2) << "x), with the joint graph " << fixed(joint * 1e3, 1)
            << " ms (" << fixed(eager / joint, 2) << "x)\n";
}

}  // namespace

// [SECTION] main ---------------------------------------------------------------------------

int main() {
  glass::manual_seed(12);
  what_an_op_costs();
  a_trace_records_what_ran();
  what_a_trace_cannot_see();
  the_passes();
  fusion_and_codegen();
  the_seeds_claim();
  on_a_gpu();
  the_backward();
  return 0;
}
