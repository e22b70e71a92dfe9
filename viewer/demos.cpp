// viewer/demos.cpp — the lessons' example models, rebuilt as the lessons build them.
//
// Each one follows its lesson's main.cpp (cited beside it); when a lesson changes its
// example, its demo here changes with it, so the figures keep matching the text.
#include "viewer/demos.h"

#include <sstream>

#include "autograd/custom_function.h"
#include "core/error.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "nn/functional/loss.h"
#include "nn/module.h"
#include "nn/modules/linear.h"
#include "viewer/recorders.h"

namespace glass::viz {

namespace {

using autograd::AutogradContext;
using autograd::tensor_list;

// lesson 05: the seed's MyReLU, line for line.
struct MyReLU : autograd::Function<MyReLU> {
  static Tensor forward(AutogradContext* ctx, Tensor input) {
    ctx->save_for_backward({input});
    return input.clamp(0);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_output) {
    Tensor input = ctx->get_saved_variables()[0];
    Tensor grad_input = grad_output[0].clone();
    grad_input.index_put_({input < 0}, 0);
    return {grad_input};
  }
};

// lesson 06: the Fashion-MNIST classifier, 784-512-512-10, as a Module subclass.
struct MLPImpl : nn::Module {
  MLPImpl(int64_t in, int64_t hidden, int64_t classes) : Module("MLP") {
    fc1 = register_module("fc1", nn::Linear(in, hidden));
    fc2 = register_module("fc2", nn::Linear(hidden, hidden));
    fc3 = register_module("fc3", nn::Linear(hidden, classes));
  }
  // x: (B, 784) -> logits (B, 10)
  Tensor forward(const Tensor& x) const {
    Tensor h = fc1(x).relu();
    h = fc2(h).relu();
    return fc3(h);
  }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

DemoRun tanh_mlp() {
  // lesson 04, section 1: L = sum(tanh(x * w + b)), b [1] broadcast over 3 elements.
  Tensor x = tensor({1., 2., -1.}).requires_grad_();
  Tensor w = tensor({0.5, -0.25, 1.}).requires_grad_();
  Tensor b = tensor({0.5}).requires_grad_();
  return {nullptr, {{"x", x}, {"w", w}, {"b", b}}, [=] { return (x * w + b).tanh().sum(); }, "L"};
}

DemoRun myrelu() {
  // lesson 05, section 1: y = MyReLU(x), then (y * v).sum().
  Tensor x = tensor({-2., -0.5, 0.5, 1., 3.}).requires_grad_();
  Tensor v = tensor({1., 2., 3., 4., 5.});
  return {nullptr, {{"x", x}}, [=] { return (MyReLU::apply(x) * v).sum(); }, "L"};
}

DemoRun mlp() {
  // lesson 06: the model with PyTorch's default init and one batch of 128 random images
  // (values in [0, 1), like the dataset's) with random labels; no data is loaded.
  auto model = std::make_shared<MLPImpl>(784, 512, 10);
  Tensor images = rand({128, 784});
  Tensor labels = randint(0, 10, {128});
  return {model, {{"images", images}}, [=] {
            return nn::functional::cross_entropy(model->forward(images), labels);
          }};
}

DemoRun broadcast() {
  // lesson 03: (a + b) * c with a [2, 3], b [3], c [2, 1]: broadcasting copies b down the
  // rows and c across the columns, so their gradients are summed back to [3] and [2, 1].
  Tensor a = tensor({1., 2., 3., 4., 5., 6.}).view({2, 3}).requires_grad_();
  Tensor b = tensor({10., 20., 30.}).requires_grad_();
  Tensor c = tensor({1., -1.}).view({2, 1}).requires_grad_();
  return {nullptr, {{"a", a}, {"b", b}, {"c", c}}, [=] { return ((a + b) * c).sum(); }, "y"};
}

DemoRun if_else() {
  // lesson 01, section 5: which branch runs, and so which nodes exist, depends on x.
  Tensor x = tensor({1., 2.}).requires_grad_();
  return {nullptr,
          {{"x", x}},
          [=] { return x.sum().item<double>() > 0 ? (x * x).sum() : x.exp().sum(); },
          "y"};
}

DemoRun loop() {
  // lesson 01, section 4: y = y * 2 while ||y|| < 10; from [1, 1] the body runs 3 times.
  Tensor x = tensor({1., 1.}).requires_grad_();
  return {nullptr,
          {{"x", x}},
          [=] {
            Tensor y = x;
            while (y.norm().item<double>() < 10) y = y * 2;
            return y.sum();
          },
          "y"};
}

}  // namespace

const std::vector<Demo>& demos() {
  static const std::vector<Demo> all = {
      {"tanh_mlp", "lesson 04: L = sum(tanh(x * w + b)), b broadcast from [1]", tanh_mlp},
      {"myrelu", "lesson 05: the seed's MyReLU custom function, L = sum(MyReLU(x) * v)", myrelu},
      {"mlp",
       "lesson 06: the Fashion-MNIST MLP 784-512-512-10, one random batch of 128, "
       "cross-entropy",
       mlp},
      {"broadcast", "lesson 03: (a + b) * c with a [2, 3], b [3], c [2, 1]", broadcast},
      {"if_else", "lesson 01: an if on a value picks (x * x).sum() or x.exp().sum()", if_else},
      {"loop", "lesson 01: y = y * 2 while ||y|| < 10: the data decides the depth", loop},
  };
  return all;
}

const Demo& find_demo(const std::string& name) {
  std::ostringstream valid;
  for (const Demo& d : demos()) {
    if (d.name == name) return d;
    valid << (valid.tellp() > 0 ? ", " : "") << d.name;
  }
  GLASS_CHECK(false, "unknown demo '", name, "'; valid demos: ", valid.str(),
              " (glass-dot --list describes them)");
  return demos().front();
}

Snapshot capture(const Demo& demo, const CaptureOptions& options) {
  manual_seed(0);  // the same model, inputs and gradients on every run
  DemoRun run = demo.build();
  SnapshotOptions so{.module = run.module.get(), .names = run.names};
  Tensor root;
  Snapshot s;
  if (options.forward) {
    ForwardRecorder recorder;
    root = run.forward();
    recorder.stop();
    so.names.emplace_back(run.root_name, root);
    s = recorder.snapshot(root, so);
  } else {
    root = run.forward();
    so.names.emplace_back(run.root_name, root);
    s = snapshot(root, so);
  }
  if (options.gradients && root.grad_fn()) {
    GradientRecorder recorder(root);
    root.backward();
    recorder.apply_to(s);
  }
  return s;
}

}  // namespace glass::viz
