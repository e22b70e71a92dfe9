// tests/viewer/modules_test.cpp — which module a node belongs to, and folding modules.
//
// The reference is the model's own structure: a Linear computes x Wᵀ + b as one addmm of
// b, x and Wᵀ (nn/functional/linear.h), so its ops are exactly TBackward0 and
// AddmmBackward0 plus its two parameter leaves; a ReLU between Linears owns no parameter
// and stays outside at the top level, but joins a Sequential it sits inside (Note [Which
// module a node belongs to], viewer/modules.cpp). A forward recording is checked against
// the model's forward itself: each op in the module whose forward ran it.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/ops/random.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/layer_norm.h"
#include "nn/modules/linear.h"
#include "viewer/demos.h"
#include "viewer/modules.h"
#include "viewer/recorders.h"
#include "viewer/snapshot.h"
#include "viewer/viewer_test_util.h"

namespace glass::viz {
namespace {

using testing::only;

std::map<std::string, std::multiset<std::string>> members_by_module(const Snapshot& s) {
  std::map<std::string, std::multiset<std::string>> out;
  for (const GraphNode& n : s.nodes) out[n.module].insert(n.label.empty() ? n.name : n.label);
  return out;
}

struct SmallNet {
  nn::Sequential seq{nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)};
  Tensor x;
  Tensor loss;
  explicit SmallNet(bool input_requires_grad) {
    manual_seed(0);
    x = randn({5, 4});
    if (input_requires_grad) x.requires_grad_();
    loss = seq->forward(x).sum();
  }
  SnapshotOptions options() { return {.module = seq.ptr().get(), .names = {{"x", x}}}; }
};

TEST(Modules, ParametersNameLeavesAndClaimTheOpsThatReadThem) {
  for (bool input_requires_grad : {false, true}) {
    SmallNet net(input_requires_grad);
    Snapshot s = snapshot(net.loss, net.options());
    ASSERT_EQ(s.modules.size(), 3u);
    EXPECT_EQ(s.modules[0].path, "0");
    EXPECT_EQ(s.modules[0].type, "Linear");
    EXPECT_EQ(s.modules[1].type, "ReLU");
    auto by = members_by_module(s);
    using M = std::multiset<std::string>;
    EXPECT_EQ(by["0"], (M{"0.weight", "0.bias", "TBackward0", "AddmmBackward0"}));
    EXPECT_EQ(by["2"], (M{"2.weight", "2.bias", "TBackward0", "AddmmBackward0"}));
    M outside = {"SumBackward0", "ReluBackward0"};
    if (input_requires_grad) outside.insert("x");
    EXPECT_EQ(by[""], outside) << "input_requires_grad " << input_requires_grad;
    EXPECT_EQ(by.size(), 3u);
  }
}

TEST(Modules, CollapsingFoldsEachLinearIntoOneBox) {
  SmallNet net(false);
  Snapshot s = snapshot_with_gradients(net.loss, net.options());
  Snapshot c = collapse_modules(s);
  ASSERT_EQ(c.nodes.size(), 4u);  // Sum, Linear "2", ReLU, Linear "0"
  EXPECT_EQ(c.count(NodeKind::Module), 2);
  EXPECT_EQ(c.count(NodeKind::Leaf), 0);
  const GraphNode* first = c.find("0");
  const GraphNode* last = c.find("2");
  const GraphNode* relu = c.find("ReluBackward0");
  const GraphNode* sum = c.find("SumBackward0");
  ASSERT_TRUE(first && last && relu && sum);
  EXPECT_EQ(first->kind, NodeKind::Module);
  EXPECT_EQ(first->name, "Linear");
  EXPECT_EQ(first->members.size(), 4u);
  EXPECT_EQ(first->output.sizes, (std::vector<int64_t>{5, 3}));  // the addmm's output
  // The folded module's gradient is its output's: what its addmm received.
  const GraphNode* addmm0 = nullptr;
  for (int id : first->members)
    if (s.nodes[id].name == "AddmmBackward0") addmm0 = &s.nodes[id];
  ASSERT_NE(addmm0, nullptr);
  ASSERT_TRUE(first->grad.has_value());
  EXPECT_DOUBLE_EQ(first->grad->norm, addmm0->grad->norm);
  // Edges: Linear0 -> ReLU -> Linear2 -> Sum, nothing else.
  ASSERT_EQ(c.edges.size(), 3u);
  std::set<std::pair<int, int>> edges;
  for (const GraphEdge& e : c.edges) edges.insert({e.from, e.to});
  EXPECT_EQ(edges, (std::set<std::pair<int, int>>{
                       {first->id, relu->id}, {relu->id, last->id}, {last->id, sum->id}}));
  for (size_t i = 0; i < c.nodes.size(); ++i) EXPECT_EQ(c.nodes[i].id, static_cast<int>(i));
}

TEST(Modules, ExpandedModulesStayOpen) {
  SmallNet net(false);
  Snapshot s = snapshot(net.loss, net.options());
  Snapshot c = collapse_modules(s, {"0"});
  EXPECT_EQ(c.nodes.size(), 7u);  // "0"'s four nodes, Linear "2", ReLU, Sum
  EXPECT_EQ(c.count(NodeKind::Module), 1);
  EXPECT_EQ(members_by_module(c)["0"].size(), 4u);
  // Folding nothing changes nothing.
  Snapshot all = collapse_modules(s, {"0", "2"});
  EXPECT_EQ(all.nodes.size(), s.nodes.size());
  EXPECT_EQ(all.edges.size(), s.edges.size());
}

// A module inside a module: folding happens at the outermost level not expanded.
struct TowerImpl : nn::Module {
  TowerImpl() : Module("Tower") {
    body = register_module("body", nn::Sequential(nn::Linear(4, 4), nn::ReLU(), nn::Linear(4, 2)));
    head = register_module("head", nn::Linear(2, 1));
  }
  Tensor forward(const Tensor& x) const { return head(body(x)); }
  nn::Sequential body{nullptr};
  nn::Linear head{nullptr};
};
GLASS_MODULE(Tower);

TEST(Modules, NestedModulesFoldOutermostFirst) {
  manual_seed(0);
  Tower tower;
  Tensor loss = tower(randn({3, 4})).sum();
  Snapshot s = snapshot(loss, {.module = tower.ptr().get()});
  auto by = members_by_module(s);
  EXPECT_EQ(by["body.0"].size(), 4u);
  EXPECT_EQ(by["body.2"].size(), 4u);
  EXPECT_EQ(by["head"].size(), 4u);
  // The ReLU owns no parameter, but it lies between body's two Linears: body's (rule 4).
  EXPECT_EQ(by["body"], (std::multiset<std::string>{"ReluBackward0"}));
  EXPECT_EQ(by[""], (std::multiset<std::string>{"SumBackward0"}));
  // Folded at the top: the whole body is one box, then head, then the sum; no cycle.
  Snapshot top = collapse_modules(s);
  const GraphNode* body = top.find("body");
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(body->name, "Sequential");
  EXPECT_EQ(body->members.size(), 9u);
  EXPECT_EQ(top.count(NodeKind::Module), 2);  // body, head
  EXPECT_EQ(top.nodes.size(), 3u);
  EXPECT_EQ(top.edges.size(), 2u);
  // body open: its Linears fold one level down, inside body's cluster.
  Snapshot open = collapse_modules(s, {"body"});
  EXPECT_EQ(open.count(NodeKind::Module), 3);
  ASSERT_NE(open.find("body.0"), nullptr);
  EXPECT_EQ(open.find("body.0")->module, "body");
  EXPECT_EQ(open.find("body.0")->name, "Linear");
  EXPECT_EQ(open.find("head")->module, "");
  EXPECT_EQ(open.find("ReluBackward0")->module, "body");
}

// A model called through its holder whose forward calls a child as impl->forward(): the
// child announces no scope, and the model's own scope says nothing about which of its
// children ran an op, so those nodes are inferred (fc's), never pinned to the model.
struct DirectCallImpl : nn::Module {
  DirectCallImpl() : Module("DirectCall") { fc = register_module("fc", nn::Linear(4, 2)); }
  Tensor forward(const Tensor& x) const { return fc->forward(x).relu(); }
  nn::Linear fc{nullptr};
};
GLASS_MODULE(DirectCall);

TEST(Modules, AChildCalledAsImplForwardIsInferredNotPinnedToTheModel) {
  manual_seed(0);
  DirectCall net;
  ForwardRecorder recorder;
  Tensor y = net(randn({3, 4}));
  recorder.stop();
  Snapshot s = recorder.snapshot(y, {.module = net.ptr().get()});
  EXPECT_EQ(only(s, "AddmmBackward0").module, "fc");
  EXPECT_EQ(only(s, "TBackward0").module, "fc");
  EXPECT_EQ(only(s, "ReluBackward0").module, "");
}

// A forward recording knows each node's module from nn's scopes (ModuleEnter/ModuleExit),
// so it places exactly what inference from parameters cannot: LayerNorm's mean and
// variance (they read no parameter), the ReLU step of a Sequential (its own module, not
// only "between body's Linears") and the model's own ReLU (the model, so no submodule).
struct NormNetImpl : nn::Module {
  NormNetImpl() : Module("NormNet") {
    fc = register_module("fc", nn::Linear(4, 4));
    norm = register_module("norm", nn::LayerNorm(4));
    body = register_module("body", nn::Sequential(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)));
  }
  Tensor forward(const Tensor& x) const { return body(norm(fc(x).relu())); }
  nn::Linear fc{nullptr};
  nn::LayerNorm norm{nullptr};
  nn::Sequential body{nullptr};
};
GLASS_MODULE(NormNet);

TEST(Modules, ForwardRecordingPlacesEveryNodeByItsScope) {
  manual_seed(0);
  NormNet net;
  Tensor x = randn({3, 4});
  ForwardRecorder recorder;
  Tensor loss = net(x).sum();  // the sum runs outside the model: no scope, inferred
  recorder.stop();
  Snapshot s = recorder.snapshot(loss, {.module = net.ptr().get()});
  // Every op node, in creation order, with its module.
  std::vector<std::pair<std::string, std::string>> ops;
  for (const GraphNode& n : s.nodes)
    if (n.kind == NodeKind::Op) ops.emplace_back(n.name, n.module);
  std::vector<std::pair<std::string, std::string>> expected = {
      {"TBackward0", "fc"},         {"AddmmBackward0", "fc"},    {"ReluBackward0", ""},
      {"SumBackward1", "norm"},     {"DivBackward0", "norm"},    {"SubBackward0", "norm"},
      {"MulBackward0", "norm"},     {"SumBackward1", "norm"},    {"DivBackward0", "norm"},
      {"AddBackward0", "norm"},     {"RsqrtBackward0", "norm"},  {"MulBackward0", "norm"},
      {"MulBackward0", "norm"},     {"AddBackward0", "norm"},    {"TBackward0", "body.0"},
      {"AddmmBackward0", "body.0"}, {"ReluBackward0", "body.1"}, {"TBackward0", "body.2"},
      {"AddmmBackward0", "body.2"}, {"SumBackward0", ""}};
  EXPECT_EQ(ops, expected);
  EXPECT_EQ(only(s, "norm.weight").module, "norm");  // leaves: their parameter's module
  EXPECT_EQ(only(s, "body.2.bias").module, "body.2");

  // Inference from parameters, on the backward graph of the same loss, leaves LayerNorm's
  // statistics outside and puts the ReLU step in body (rule 4): true, but less.
  Snapshot b = snapshot(loss, {.module = net.ptr().get()});
  EXPECT_EQ(only(b, "RsqrtBackward0").module, "");
  auto relus = members_by_module(b);
  EXPECT_EQ(relus["body"], (std::multiset<std::string>{"ReluBackward0"}));

  // Folding: one box per top-level module, with the model's ReLU and the loss outside.
  Snapshot top = collapse_modules(s);
  ASSERT_EQ(top.nodes.size(), 5u);  // fc, ReLU, norm, body, sum
  EXPECT_EQ(top.edges.size(), 4u);  // a chain: folding drew no cycle
  ASSERT_NE(top.find("norm"), nullptr);
  EXPECT_EQ(top.find("norm")->name, "LayerNorm");
  EXPECT_EQ(top.find("norm")->members.size(), 13u);  // 11 ops and 2 parameter leaves
  EXPECT_EQ(top.find("body")->members.size(), 9u);
  EXPECT_EQ(top.find("norm")->output.sizes, (std::vector<int64_t>{3, 4}));
  // body open: its steps fold one level down, the ReLU step as its own box.
  Snapshot open = collapse_modules(s, {"body"});
  EXPECT_EQ(open.count(NodeKind::Module), 5);  // fc, norm, body.0, body.1, body.2
  ASSERT_NE(open.find("body.1"), nullptr);
  EXPECT_EQ(open.find("body.1")->name, "ReLU");
  EXPECT_EQ(open.find("body.1")->module, "body");
  EXPECT_EQ(open.find("body.1")->members.size(), 1u);
}

TEST(Modules, TheMlpDemoFoldsIntoThreeLinears) {
  Snapshot s = capture(find_demo("mlp"));
  auto by = members_by_module(s);
  for (const char* fc : {"fc1", "fc2", "fc3"})
    EXPECT_EQ(by[fc],
              (std::multiset<std::string>{std::string(fc) + ".weight", std::string(fc) + ".bias",
                                          "TBackward0", "AddmmBackward0"}))
        << fc;
  Snapshot c = collapse_modules(s);
  EXPECT_EQ(c.count(NodeKind::Module), 3);
  EXPECT_EQ(c.find("fc1")->output.sizes, (std::vector<int64_t>{128, 512}));
  EXPECT_EQ(c.find("fc3")->output.sizes, (std::vector<int64_t>{128, 10}));
  EXPECT_EQ(c.find("fc1.weight"), nullptr);  // folded away
  EXPECT_EQ(s.find("fc1.weight")->output.sizes, (std::vector<int64_t>{512, 784}));
}

}  // namespace
}  // namespace glass::viz
