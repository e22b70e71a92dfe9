// tests/nn/module_test.cpp — the Module base: registration, dotted names, train/eval,
// zero_grad, printing, and ModuleHolder. The reference is PyTorch's documented behaviour
// of nn.Module (own members first, then children depth-first, names joined by dots).
#include "nn/module.h"

#include <sstream>

#include "core/events.h"
#include "core/fake_cuda.h"
#include "core/test_util.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/dropout.h"
#include "nn/modules/linear.h"

namespace glass::nn {
namespace {

using testing::close;

std::vector<std::string> names(const NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& entry : named) out.push_back(entry.first);
  return out;
}

// A parameter and a buffer, no children.
struct LeafImpl : Module {
  LeafImpl() : Module("Leaf") {
    w = register_parameter("w", ones({2}));
    running = register_buffer("running", zeros({2}));
  }
  Tensor w, running;
};
GLASS_MODULE(Leaf);

// Own parameters registered around two children, to show own members come first.
struct TreeImpl : Module {
  TreeImpl() : Module("Tree") {
    a = register_parameter("a", ones({1}));
    left = register_module("left", Leaf());
    right = register_module("right", Linear(2, 3));
    c = register_parameter("c", ones({1}));
  }
  Tensor a, c;
  Leaf left{nullptr};
  Linear right{nullptr};
};
GLASS_MODULE(Tree);

TEST(Module, NamedParametersAreDottedDepthFirst) {
  Tree tree;
  EXPECT_EQ(names(tree->named_parameters()),
            (std::vector<std::string>{"a", "c", "left.w", "right.weight", "right.bias"}));
  EXPECT_EQ(names(tree->named_parameters(/*recurse=*/false)), (std::vector<std::string>{"a", "c"}));
  // parameters() hands out the very tensors the members hold (same TensorImpl).
  std::vector<Tensor> params = tree->parameters();
  ASSERT_EQ(params.size(), 5u);
  EXPECT_TRUE(params[0].is_same(tree->a));
  EXPECT_TRUE(params[2].is_same(tree->left->w));
  EXPECT_TRUE(params[3].is_same(tree->right->weight));
  for (const Tensor& p : params) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
}

TEST(Module, DeepNestingJoinsEveryLevel) {
  struct OuterImpl : Module {
    OuterImpl() : Module("Outer") { inner = register_module("inner", Tree()); }
    Tree inner{nullptr};
  };
  auto outer = std::make_shared<OuterImpl>();
  EXPECT_EQ(names(outer->named_parameters()),
            (std::vector<std::string>{"inner.a", "inner.c", "inner.left.w", "inner.right.weight",
                                      "inner.right.bias"}));
  std::vector<std::string> modules;
  for (const auto& [name, module] : outer->named_modules()) modules.push_back(name);
  EXPECT_EQ(modules, (std::vector<std::string>{"", "inner", "inner.left", "inner.right"}));
}

TEST(Module, BuffersAreNotParameters) {
  Tree tree;
  EXPECT_EQ(names(tree->named_buffers()), (std::vector<std::string>{"left.running"}));
  for (const auto& [name, p] : tree->named_parameters()) EXPECT_NE(name, "left.running");
  EXPECT_FALSE(tree->left->running.requires_grad());
  // A checkpoint holds both: parameters first, then buffers.
  EXPECT_EQ(names(tree->state_dict()), (std::vector<std::string>{"a", "c", "left.w", "right.weight",
                                                                 "right.bias", "left.running"}));
}

TEST(Module, ChildrenInRegistrationOrder) {
  Tree tree;
  auto children = tree->named_children();
  ASSERT_EQ(children.size(), 2u);
  EXPECT_EQ(children[0].first, "left");
  EXPECT_EQ(children[1].first, "right");
  EXPECT_EQ(children[0].second.get(), tree->left.get());
  EXPECT_EQ(tree->children().size(), 2u);
  EXPECT_EQ(tree->children()[1]->name(), "Linear");
}

TEST(Module, ParameterBuiltFromOtherTensorsBecomesALeaf) {
  Module m;
  Tensor x = ones({2}).requires_grad_();
  Tensor p = m.register_parameter("p", x * 2);  // has a grad_fn before registration
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
  Tensor frozen = m.register_parameter("frozen", ones({2}), /*requires_grad=*/false);
  EXPECT_FALSE(frozen.requires_grad());
  // An integer tensor can be a parameter only if it does not require grad.
  m.register_parameter("steps", zeros({1}, kLong), /*requires_grad=*/false);
  EXPECT_EQ(m.parameters().size(), 3u);
}

TEST(Module, RegistrationErrors) {
  Module m("Net");
  m.register_parameter("w", ones({2}));
  EXPECT_GLASS_ERROR(m.register_buffer("w", ones({2})), "Net", "'w'", "already used");
  EXPECT_GLASS_ERROR(m.register_module("w", ReLU()), "'w'", "already used");
  EXPECT_GLASS_ERROR(m.register_parameter("fc.weight", ones({2})), "'fc.weight'",
                     "must not contain '.'");
  EXPECT_GLASS_ERROR(m.register_parameter("", ones({2})), "non-empty name");
  EXPECT_GLASS_ERROR(m.register_buffer("", ones({2})), "non-empty name");
  EXPECT_GLASS_ERROR(m.register_parameter("count", arange(3)), "'count'", "Long",
                     "only floating-point");
  EXPECT_GLASS_ERROR(m.register_parameter("u", Tensor()), "'u'", "undefined");
  EXPECT_GLASS_ERROR(m.register_module("empty", Linear(nullptr)), "'empty'", "null");
  // Re-registering within the same kind replaces the old tensor (documented in module.h).
  Tensor w2 = m.register_parameter("w", zeros({3}));
  ASSERT_EQ(m.parameters().size(), 1u);
  EXPECT_TRUE(m.parameters()[0].is_same(w2));
}

TEST(Module, TrainAndEvalReachEveryDescendant) {
  Tree tree;
  EXPECT_TRUE(tree->is_training());
  tree->eval();
  for (const auto& [name, module] : tree->named_modules())
    EXPECT_FALSE(module->is_training()) << "module '" << name << "'";
  tree->train();
  for (const auto& [name, module] : tree->named_modules())
    EXPECT_TRUE(module->is_training()) << "module '" << name << "'";
  tree->train(false);
  EXPECT_FALSE(tree->right->is_training());
}

TEST(Module, ZeroGradToNoneAndToZeros) {
  Linear fc(3, 2);
  fc(ones({4, 3})).sum().backward();
  ASSERT_TRUE(fc->weight.grad().defined());
  ASSERT_TRUE(fc->bias.grad().defined());
  EXPECT_TRUE(close(fc->bias.grad(), {4, 4}));  // d(sum)/db = N = 4 per output

  fc->zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(fc->weight.grad().defined());
  EXPECT_TRUE(close(fc->weight.grad(), std::vector<double>(6, 0.0)));
  EXPECT_TRUE(close(fc->bias.grad(), {0, 0}));
  // The zeroed tensors are reused: the next backward accumulates into them.
  fc(ones({1, 3})).sum().backward();
  EXPECT_TRUE(close(fc->bias.grad(), {1, 1}));

  fc->zero_grad();  // PyTorch's default: set_to_none
  EXPECT_FALSE(fc->weight.grad().defined());
  EXPECT_FALSE(fc->bias.grad().defined());
  fc->zero_grad();  // nothing to clear is fine
}

TEST(Module, PrintsTheTreeLikePyTorch) {
  Tree tree;
  std::ostringstream os;
  os << *tree;
  EXPECT_EQ(os.str(),
            "Tree(\n"
            "  (left): Leaf\n"
            "  (right): Linear(in_features=2, out_features=3, bias=true)\n"
            ")");
}

TEST(ModuleHolder, SharesOneModuleAndRejectsEmptyUse) {
  Linear a(2, 2);
  Linear b = a;  // a copy of the handle, not of the module
  EXPECT_EQ(a.get(), b.get());
  EXPECT_TRUE(b->weight.is_same(a->weight));

  Linear empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  EXPECT_GLASS_ERROR(empty->reset_parameters(), "empty ModuleHolder", "register_module");
  EXPECT_GLASS_ERROR(empty(ones({1, 2})), "empty ModuleHolder");
}

TEST(ModuleHolder, RegisterModuleReturnsTheHolderType) {
  Module m;
  Linear fc = m.register_module("fc", Linear(4, 2));
  EXPECT_EQ(names(m.named_parameters()), (std::vector<std::string>{"fc.weight", "fc.bias"}));
  EXPECT_TRUE(m.named_parameters()[0].second.is_same(fc->weight));
  // The shared_ptr form works too.
  auto relu = m.register_module("act", std::make_shared<ReLUImpl>());
  EXPECT_EQ(m.children()[1].get(), relu.get());
}

// ModuleHolder::operator() runs forward inside a ModuleScope: Enter, the forward's own ops,
// Exit — and Exit also when forward throws. With nobody listening nothing is published,
// and a subscriber that arrives mid-forward sees no Exit without its Enter.
TEST(ModuleHolder, CallAnnouncesTheModuleScope) {
  Linear fc(2, 3);
  const void* m = static_cast<const Module*>(fc.get());
  std::vector<std::string> seen;
  auto record = [&](const events::Event& e) {
    if (e.kind == events::Kind::ModuleEnter || e.kind == events::Kind::ModuleExit)
      seen.push_back(std::string(events::to_string(e.kind)) + (e.ptr == m ? " fc" : " ?"));
    else if (e.kind == events::Kind::OpDispatched && seen.size() == 1)
      seen.push_back("op");
  };
  {
    events::Subscription sub(record);
    fc(ones({4, 2}));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"module_enter fc", "op", "module_exit fc"}));

  seen.clear();
  {
    events::Subscription sub(record);
    EXPECT_THROW(fc(ones({4, 5})), Error);  // in_features is 2
  }
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), "module_enter fc");
  EXPECT_EQ(seen.back(), "module_exit fc");
}

TEST(ModuleScope, PublishesNothingWithoutSubscribers) {
  EXPECT_FALSE(events::enabled());
  int seen = 0;
  Linear fc(2, 2);
  {
    ModuleScope outer(*fc);  // nobody listens: no Enter, so no Exit either
    events::Subscription sub([&](const events::Event& e) {
      if (e.kind == events::Kind::ModuleEnter || e.kind == events::Kind::ModuleExit) ++seen;
    });
    { ModuleScope inner(*fc); }
    EXPECT_EQ(seen, 2);  // the inner pair only
  }                      // outer published no Enter, so its destructor publishes no Exit
  EXPECT_EQ(seen, 2);
  fc(ones({1, 2}));
  EXPECT_EQ(seen, 2);
}

// Module::to, on the fake CUDA backend (tests/core/fake_cuda.h).
struct TwoLayerImpl : Module {
  TwoLayerImpl() : Module("TwoLayer") {
    fc = register_module("fc", Linear(2, 2));
    steps = register_buffer("steps", scalar_tensor(3, kInt64));
    scale = register_buffer("scale", ones({2}));
  }
  Linear fc{nullptr};
  Tensor steps, scale;
};

TEST(ModuleTo, MovesParametersBuffersAndGradsInPlace) {
  testing::FakeCuda cuda;
  auto m = std::make_shared<TwoLayerImpl>();
  Tensor weight = m->fc->weight;  // a handle taken before the move
  Tensor expected = weight.detach().clone();
  (m->fc(ones({1, 2})).sum()).backward();
  ASSERT_TRUE(m->fc->weight.grad().defined());
  m->to(kCUDA);
  for (const Tensor& t : m->parameters()) EXPECT_EQ(t.device(), Device(kCUDA, 0));
  for (const Tensor& t : m->buffers()) EXPECT_EQ(t.device(), Device(kCUDA, 0));
  EXPECT_TRUE(weight.is_same(m->fc->weight));  // identity kept: every handle sees the move
  EXPECT_TRUE(weight.is_same(m->parameters()[0]));
  EXPECT_EQ(weight.device(), Device(kCUDA, 0));
  EXPECT_TRUE(weight.requires_grad());
  EXPECT_TRUE(weight.is_leaf());
  EXPECT_TRUE(close(weight.detach().cpu(), expected));
  EXPECT_EQ(weight.grad().device(), Device(kCUDA, 0));
  EXPECT_TRUE(close(weight.grad().cpu(), {1, 1, 1, 1}));  // d sum(W x + b) / dW = x^T = 1
  EXPECT_EQ(m->steps.dtype(), kInt64);
  // A forward and backward on the device keep everything there.
  m->zero_grad();
  Tensor y = m->fc(ones({1, 2}, kCUDA));
  EXPECT_EQ(y.device(), Device(kCUDA, 0));
  y.sum().backward();
  EXPECT_EQ(m->fc->bias.grad().device(), Device(kCUDA, 0));
  EXPECT_TRUE(close(m->fc->bias.grad().cpu(), {1, 1}));
  m->to(Device(kCUDA, 1));
  EXPECT_EQ(m->fc->bias.device(), Device(kCUDA, 1));
  m->to(kCPU);
  EXPECT_TRUE(m->fc->weight.is_cpu());
  EXPECT_TRUE(close(m->fc->weight.detach(), expected));
}

TEST(ModuleTo, DtypesApplyToFloatingPointTensorsOnly) {
  testing::FakeCuda cuda;
  auto m = std::make_shared<TwoLayerImpl>();
  m->to(kFloat64);
  EXPECT_EQ(m->fc->weight.dtype(), kFloat64);
  EXPECT_EQ(m->scale.dtype(), kFloat64);
  EXPECT_EQ(m->steps.dtype(), kInt64);  // an integer buffer keeps its dtype
  EXPECT_EQ(m->steps.item<int64_t>(), 3);
  m->to(Device(kCUDA, 1), kFloat32);
  EXPECT_EQ(m->fc->weight.dtype(), kFloat32);
  EXPECT_EQ(m->steps.device(), Device(kCUDA, 1));
  EXPECT_EQ(m->steps.dtype(), kInt64);
  EXPECT_GLASS_ERROR(m->to(kInt64), "TwoLayer::to()", "floating-point dtype", "Long");
  EXPECT_EQ(m->fc->weight.dtype(), kFloat32);
}

TEST(ModuleTo, WithoutACudaRuntimeNothingMoves) {
  testing::WithoutCuda none;
  Linear fc(2, 2);
  EXPECT_GLASS_ERROR(fc->to(kCUDA), "no allocator registered for device type cuda");
  EXPECT_TRUE(fc->weight.is_cpu());
}

}  // namespace
}  // namespace glass::nn
