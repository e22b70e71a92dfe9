// tests/nn/modules_test.cpp — the layers and containers of nn/modules/.
//
// References: Linear against a hand-written triple loop over the address formula
// (testing::ref_at), LayerNorm against hand-worked numbers, Embedding and Dropout against
// their definitions (rows picked, gradients counted, survivors scaled by 1/(1 - p)),
// Sequential against calling its layers by hand. A small MLP learning XOR shows the
// pieces compose into something that trains.
#include <cmath>
#include <sstream>

#include "core/events.h"
#include "core/test_util.h"
#include "nn/functional.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/dropout.h"
#include "nn/modules/embedding.h"
#include "nn/modules/layer_norm.h"
#include "nn/modules/linear.h"

namespace glass::nn {
namespace {

namespace F = functional;
using testing::close;
using testing::random_tensor;
using testing::ref_at;
using testing::values;

std::string printed(const Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

std::vector<std::string> names(const NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& entry : named) out.push_back(entry.first);
  return out;
}

// ---- Linear ------------------------------------------------------------------------------

TEST(Linear, ForwardIsXWTransposedPlusB) {
  manual_seed(1);
  Linear fc(3, 2);
  Tensor x = random_tensor({4, 3}, kFloat, 2);
  Tensor y = fc(x);
  ASSERT_EQ(y.sizes(), IntArrayRef({4, 2}));
  for (int64_t n = 0; n < 4; ++n) {
    for (int64_t o = 0; o < 2; ++o) {
      double expected = ref_at(fc->bias, {o});
      for (int64_t i = 0; i < 3; ++i) expected += ref_at(x, {n, i}) * ref_at(fc->weight, {o, i});
      EXPECT_NEAR(ref_at(y, {n, o}), expected, 1e-5) << "y[" << n << ", " << o << "]";
    }
  }
  // Leading dims are a batch: (2, 2, 3) → (2, 2, 2), the same rows.
  Tensor y3 = fc(x.view({2, 2, 3}));
  EXPECT_EQ(y3.sizes(), IntArrayRef({2, 2, 2}));
  EXPECT_TRUE(close(y3.reshape({4, 2}), y));
}

TEST(Linear, ParametersShapesAndNames) {
  Linear fc(5, 3);
  EXPECT_EQ(names(fc->named_parameters()), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(fc->weight.sizes(), IntArrayRef({3, 5}));
  EXPECT_EQ(fc->bias.sizes(), IntArrayRef({3}));
  EXPECT_TRUE(fc->weight.requires_grad());

  Linear no_bias(LinearOptions(5, 3).bias(false));
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(names(no_bias->named_parameters()), (std::vector<std::string>{"weight"}));
  Tensor x = random_tensor({2, 5}, kFloat, 3);
  EXPECT_TRUE(close(no_bias(x), x.matmul(no_bias->weight.t())));
  EXPECT_EQ(printed(*no_bias), "Linear(in_features=5, out_features=3, bias=false)");
  EXPECT_EQ(printed(*Linear(784, 512)), "Linear(in_features=784, out_features=512, bias=true)");
}

TEST(Linear, DefaultInitIsPyTorchs) {
  // kaiming_uniform_(a = sqrt(5)) and the bias rule both give U(-1/sqrt(fan_in), +): here
  // fan_in = 1024, bound 1/32; the uniform's std is bound / sqrt(3).
  Linear fc(1024, 256);
  std::vector<double> w = values(fc->weight), b = values(fc->bias);
  double sq = 0;
  for (double v : w) {
    EXPECT_LE(std::abs(v), 1.0 / 32);
    sq += v * v;
  }
  for (double v : b) EXPECT_LE(std::abs(v), 1.0 / 32);
  double std = std::sqrt(sq / static_cast<double>(w.size()));
  EXPECT_NEAR(std, 1.0 / 32 / std::sqrt(3.0), 0.015 / 32 / std::sqrt(3.0));
  // reset_parameters redraws from the current seed: reproducible.
  manual_seed(3);
  fc->reset_parameters();
  std::vector<double> first = values(fc->weight);
  manual_seed(3);
  fc->reset_parameters();
  EXPECT_EQ(values(fc->weight), first);
}

TEST(Linear, GradientsByHand) {
  // y = sum(x Wᵀ + b): dy/dW[o, i] = Σ_n x[n, i], dy/db[o] = N.
  Linear fc(2, 3);
  Tensor x = tensor({{1., 2.}, {3., 4.}});
  fc(x).sum().backward();
  EXPECT_TRUE(close(fc->weight.grad(), {4, 6, 4, 6, 4, 6}));
  EXPECT_TRUE(close(fc->bias.grad(), {2, 2, 2}));
}

TEST(Linear, Errors) {
  Linear fc(3, 2);
  EXPECT_GLASS_ERROR(fc(zeros({4, 5})), "[4, 5]", "in_features = 3");
  EXPECT_GLASS_ERROR(Linear(-1, 2), "in_features", "-1");
}

// ---- activations ---------------------------------------------------------------------------

TEST(Activations, ForwardAndPrint) {
  Tensor x = tensor({-1., 0., 1.});
  EXPECT_TRUE(close(ReLU()(x), {0, 0, 1}));
  EXPECT_TRUE(close(Tanh()(x), {std::tanh(-1.0), 0, std::tanh(1.0)}));
  EXPECT_TRUE(close(Sigmoid()(x), {1 / (1 + std::exp(1.0)), 0.5, 1 / (1 + std::exp(-1.0))}));
  EXPECT_TRUE(close(GELU()(x), F::gelu(x)));
  EXPECT_TRUE(close(GELU("tanh")(x), F::gelu(x, "tanh")));
  EXPECT_EQ(printed(*ReLU()), "ReLU()");
  EXPECT_EQ(printed(*GELU("tanh")), "GELU(approximate='tanh')");
  EXPECT_EQ(printed(*Tanh()), "Tanh()");
  EXPECT_EQ(printed(*Sigmoid()), "Sigmoid()");
  EXPECT_TRUE(ReLU()->parameters().empty());
  EXPECT_GLASS_ERROR(GELU("fast"), "GELU", "\"none\" or \"tanh\"", "fast");
}

// ---- LayerNorm -----------------------------------------------------------------------------

TEST(LayerNorm, KnownValuesAndParameters) {
  // [1, 2, 3, 4]: mean 2.5, biased variance 1.25 → (x - 2.5) / sqrt(1.25 + 1e-5).
  LayerNorm ln(4);
  EXPECT_EQ(names(ln->named_parameters()), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_TRUE(close(ln->weight, {1, 1, 1, 1}));
  EXPECT_TRUE(close(ln->bias, {0, 0, 0, 0}));
  Tensor x = tensor({{1., 2., 3., 4.}});
  double s = std::sqrt(1.25 + 1e-5);
  EXPECT_TRUE(close(ln(x), {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}));
  // The affine is per element: weight 2, bias 1 → 2·y + 1.
  {
    NoGradGuard no_grad;
    ln->weight.fill_(2);
    ln->bias.fill_(1);
  }
  EXPECT_TRUE(close(ln(x), {-3 / s + 1, -1 / s + 1, 1 / s + 1, 3 / s + 1}));
  EXPECT_EQ(printed(*ln), "LayerNorm([4], eps=1e-05, elementwise_affine=true)");

  LayerNorm plain(LayerNormOptions({2, 2}).elementwise_affine(false).eps(0));
  EXPECT_TRUE(plain->parameters().empty());
  EXPECT_TRUE(close(plain(x.view({1, 2, 2})), {-1.5 / std::sqrt(1.25), -0.5 / std::sqrt(1.25),
                                               0.5 / std::sqrt(1.25), 1.5 / std::sqrt(1.25)}));
  EXPECT_GLASS_ERROR(ln(zeros({2, 3})), "normalized_shape [4]", "[2, 3]");
  EXPECT_GLASS_ERROR(LayerNorm(LayerNormOptions({})), "at least one dim");
  EXPECT_GLASS_ERROR(LayerNorm(LayerNormOptions({3, 0})), "positive", "[3, 0]");
}

// ---- Embedding -----------------------------------------------------------------------------

TEST(Embedding, ForwardPicksRows) {
  Embedding emb(5, 3);
  EXPECT_EQ(names(emb->named_parameters()), (std::vector<std::string>{"weight"}));
  Tensor idx = tensor(std::vector<int64_t>{1, 4, 0, 1}).view({2, 2});
  Tensor out = emb(idx);
  ASSERT_EQ(out.sizes(), IntArrayRef({2, 2, 3}));
  const int64_t picked[2][2] = {{1, 4}, {0, 1}};
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 3; ++k)
        EXPECT_EQ(ref_at(out, {i, j, k}), ref_at(emb->weight, {picked[i][j], k}));
  EXPECT_EQ(printed(*emb), "Embedding(num_embeddings=5, embedding_dim=3)");
}

TEST(Embedding, RepeatedIndicesAccumulateGradient) {
  // Index [1, 1]: row 1 is used twice, so d(sum)/d(row 1) = 2; the other rows get 0.
  Embedding emb(3, 2);
  emb(tensor(std::vector<int64_t>{1, 1})).sum().backward();
  EXPECT_TRUE(close(emb->weight.grad(), {0, 0, 2, 2, 0, 0}));
}

TEST(Embedding, PaddingRowStartsZeroAndStaysWithoutGradient) {
  Embedding emb(EmbeddingOptions(4, 2).padding_idx(-4));  // -4 is row 0
  EXPECT_EQ(emb->options.padding_idx(), 0);
  EXPECT_TRUE(close(emb->weight.narrow(0, 0, 1), {0, 0}));
  emb(tensor(std::vector<int64_t>{0, 2, 0})).sum().backward();
  EXPECT_TRUE(close(emb->weight.grad(), {0, 0, 0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(printed(*emb), "Embedding(num_embeddings=4, embedding_dim=2, padding_idx=0)");
  EXPECT_GLASS_ERROR(Embedding(EmbeddingOptions(4, 2).padding_idx(4)), "padding_idx 4", "-4 .. 3");
}

TEST(Embedding, InitIsStandardNormal) {
  Embedding emb(1000, 64);
  std::vector<double> w = values(emb->weight);
  double mean = 0, sq = 0;
  for (double v : w) mean += v;
  mean /= static_cast<double>(w.size());
  for (double v : w) sq += (v - mean) * (v - mean);
  EXPECT_NEAR(mean, 0, 0.01);
  EXPECT_NEAR(std::sqrt(sq / static_cast<double>(w.size())), 1, 0.015);
}

// ---- Dropout -------------------------------------------------------------------------------

TEST(Dropout, TrainingZeroesAboutPAndScalesSurvivors) {
  Dropout drop(0.25);
  Tensor x = ones({100000}).requires_grad_();
  Tensor y = drop(x);
  std::vector<double> v = values(y);
  int64_t zeros_seen = 0;
  for (double e : v) {
    if (e == 0) {
      ++zeros_seen;
    } else {
      EXPECT_FLOAT_EQ(e, 1 / 0.75);  // inverted dropout keeps E[y] = x
    }
  }
  // Binomial(1e5, 0.25) has std 137 ≈ 0.0014 · n: a 0.01 window is > 7 standard deviations.
  EXPECT_NEAR(static_cast<double>(zeros_seen) / 1e5, 0.25, 0.01);
  // The gradient is the same mask and scale.
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), v);
}

TEST(Dropout, EvalIsIdentityAndSeedReproduces) {
  Dropout drop;  // p = 0.5
  EXPECT_EQ(printed(*drop), "Dropout(p=0.5)");
  Tensor x = random_tensor({8, 8}, kFloat, 4);
  manual_seed(11);
  std::vector<double> first = values(drop(x));
  manual_seed(11);
  EXPECT_EQ(values(drop(x)), first);
  manual_seed(12);
  EXPECT_NE(values(drop(x)), first);
  drop->eval();
  EXPECT_TRUE(drop(x).is_same(x));
  EXPECT_GLASS_ERROR(Dropout(1.5), "between 0 and 1", "1.5");
}

TEST(Dropout, TrainingModeReachesNestedModules) {
  // Net → Sequential → Dropout(p = 1): training zeroes everything, eval passes x through.
  struct NetImpl : Module {
    NetImpl() : Module("Net") {
      body = register_module("body", Sequential(Linear(2, 2), Dropout(1.0)));
    }
    Tensor forward(const Tensor& x) { return body(x); }
    Sequential body{nullptr};
  };
  auto net = std::make_shared<NetImpl>();
  Tensor x = ones({1, 2});
  EXPECT_TRUE(close(net->forward(x), {0, 0}));
  net->eval();
  EXPECT_FALSE(net->body->at<DropoutImpl>(1).is_training());
  Tensor expected = net->body->at<LinearImpl>(0).forward(x);
  EXPECT_TRUE(close(net->forward(x), expected));
  net->train();
  EXPECT_TRUE(net->body->ptr(1)->is_training());
  EXPECT_TRUE(close(net->forward(x), {0, 0}));
}

// ---- Sequential ----------------------------------------------------------------------------

TEST(Sequential, ForwardEqualsCallingTheLayersByHand) {
  Sequential seq(Linear(3, 4), ReLU(), Linear(4, 2));
  ASSERT_EQ(seq->size(), 3u);
  Tensor x = random_tensor({5, 3}, kFloat, 5);
  LinearImpl& fc1 = seq->at<LinearImpl>(0);
  LinearImpl& fc2 = seq->at<LinearImpl>(2);
  Tensor by_hand = fc2.forward(F::relu(fc1.forward(x)));
  EXPECT_TRUE(close(seq(x), by_hand));
  EXPECT_EQ(names(seq->named_parameters()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ((*seq)[1]->name(), "ReLU");
  EXPECT_EQ(seq->ptr<LinearImpl>(2)->options.out_features(), 2);
}

TEST(Sequential, NamedPushBackAndNesting) {
  Sequential seq;
  EXPECT_EQ(printed(*seq), "Sequential()");
  seq->push_back("fc", Linear(2, 2));
  seq->push_back(std::make_shared<TanhImpl>());  // named by position: "1"
  seq->push_back("head", Sequential(Linear(2, 1), Sigmoid()));
  EXPECT_EQ(names(seq->named_parameters()),
            (std::vector<std::string>{"fc.weight", "fc.bias", "head.0.weight", "head.0.bias"}));
  EXPECT_EQ(printed(*seq),
            "Sequential(\n"
            "  (fc): Linear(in_features=2, out_features=2, bias=true)\n"
            "  (1): Tanh()\n"
            "  (head): Sequential(\n"
            "    (0): Linear(in_features=2, out_features=1, bias=true)\n"
            "    (1): Sigmoid()\n"
            "  )\n"
            ")");
  EXPECT_EQ(seq(zeros({3, 2})).sizes(), IntArrayRef({3, 1}));
  // Copying the holder shares the container.
  Sequential alias = seq;
  alias->push_back(ReLU());
  EXPECT_EQ(seq->size(), 4u);
}

TEST(Sequential, Errors) {
  Sequential seq(Linear(2, 2), ReLU());
  EXPECT_GLASS_ERROR(seq->at<LinearImpl>(1), "module 1 is a ReLU");
  EXPECT_GLASS_ERROR(seq->ptr(2), "index 2 is out of range", "2 modules");
  EXPECT_GLASS_ERROR(seq->push_back("0", ReLU()), "named '0'", "already");
  EXPECT_GLASS_ERROR(seq->push_back("a.b", ReLU()), "'a.b'", "'.'");
  EXPECT_GLASS_ERROR(seq->push_back(Linear(nullptr)), "empty module holder");
  EXPECT_GLASS_ERROR(Sequential()(ones({1})), "empty Sequential");
  EXPECT_EQ(seq->size(), 2u);  // failed push_backs changed nothing
}

// Each step runs inside a ModuleScope: Enter/Exit pairs nest, in order, one per layer (the
// holder announces the Sequential itself), and no layer is announced twice.
TEST(Sequential, AnnouncesEachLayersForwardOnce) {
  Sequential seq(Linear(3, 4), ReLU(), Linear(4, 2));
  Tensor x = random_tensor({5, 3}, kFloat, 6);
  std::vector<std::pair<events::Kind, const void*>> seen;
  {
    events::Subscription sub([&](const events::Event& e) {
      if (e.kind == events::Kind::ModuleEnter || e.kind == events::Kind::ModuleExit)
        seen.emplace_back(e.kind, e.ptr);
    });
    seq(x);
  }
  const void* s = static_cast<const Module*>(seq.get());
  const void* l0 = seq->ptr(0).get();
  const void* l1 = seq->ptr(1).get();
  const void* l2 = seq->ptr(2).get();
  using K = events::Kind;
  std::vector<std::pair<events::Kind, const void*>> expected = {
      {K::ModuleEnter, s}, {K::ModuleEnter, l0}, {K::ModuleExit, l0}, {K::ModuleEnter, l1},
      {K::ModuleExit, l1}, {K::ModuleEnter, l2}, {K::ModuleExit, l2}, {K::ModuleExit, s}};
  EXPECT_EQ(seen, expected);

  // Called as impl->forward(), the Sequential itself is not announced; its steps still are.
  seen.clear();
  {
    events::Subscription sub([&](const events::Event& e) {
      if (e.kind == events::Kind::ModuleEnter) seen.emplace_back(e.kind, e.ptr);
    });
    seq->forward(x);
  }
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].second, l0);
  EXPECT_EQ(seen[2].second, l2);
}

// A layer that throws still closes its scope, and every scope around it.
TEST(Sequential, AThrowingLayerStillClosesItsScope) {
  Sequential seq(Linear(3, 4), ReLU(), Linear(5, 2));  // the last layer's shape is wrong
  std::vector<std::pair<events::Kind, const void*>> seen;
  {
    events::Subscription sub([&](const events::Event& e) {
      if (e.kind == events::Kind::ModuleEnter || e.kind == events::Kind::ModuleExit)
        seen.emplace_back(e.kind, e.ptr);
    });
    EXPECT_THROW(seq(ones({2, 3})), Error);
  }
  ASSERT_EQ(seen.size(), 8u);
  int depth = 0;
  for (const auto& [kind, ptr] : seen) {
    depth += kind == events::Kind::ModuleEnter ? 1 : -1;
    EXPECT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
  EXPECT_EQ(seen[5],
            std::make_pair(events::Kind::ModuleEnter, static_cast<const void*>(seq->ptr(2).get())));
  EXPECT_EQ(seen[6],
            std::make_pair(events::Kind::ModuleExit, static_cast<const void*>(seq->ptr(2).get())));
}

// ---- ModuleList ----------------------------------------------------------------------------

TEST(ModuleList, HoldsIndexesAndIterates) {
  ModuleList list(Linear(2, 3), ReLU());
  list->push_back(Linear(3, 1));
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ(names(list->named_parameters()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(list->at<LinearImpl>(2).options.in_features(), 3);
  std::vector<std::string> kinds;
  for (const std::shared_ptr<Module>& m : *list) kinds.push_back(m->name());
  EXPECT_EQ(kinds, (std::vector<std::string>{"Linear", "ReLU", "Linear"}));
  // The owner decides how to call the layers: here, in order.
  Tensor x = ones({1, 2}), h = x;
  h = list->at<LinearImpl>(0).forward(h);
  h = list->at<ReLUImpl>(1).forward(h);
  h = list->at<LinearImpl>(2).forward(h);
  EXPECT_EQ(h.sizes(), IntArrayRef({1, 1}));
  // Inside another module the names gain its prefix.
  Module owner("Owner");
  owner.register_module("layers", list);
  EXPECT_EQ(names(owner.named_parameters())[0], "layers.0.weight");
  EXPECT_EQ(printed(*ModuleList()), "ModuleList()");
  EXPECT_EQ(printed(*ModuleList(ReLU())), "ModuleList(\n  (0): ReLU()\n)");
  EXPECT_GLASS_ERROR(list->at<ReLUImpl>(0), "ModuleList", "module 0 is a Linear");
  EXPECT_GLASS_ERROR(list->ptr(3), "index 3 is out of range", "3 modules");
}

// ---- composition ---------------------------------------------------------------------------

TEST(Composition, TinyMlpLearnsXor) {
  // XOR is not linearly separable: the hidden layer is needed. Plain full-batch gradient
  // descent, written out: zero_grad, forward, loss, backward, p -= lr · p.grad.
  manual_seed(0);
  Sequential mlp(Linear(2, 8), Tanh(), Linear(8, 1));
  Tensor x = tensor({{0., 0.}, {0., 1.}, {1., 0.}, {1., 1.}});
  Tensor y = tensor({{0.}, {1.}, {1.}, {0.}});
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 1500; ++step) {
    mlp->zero_grad();
    Tensor loss = F::binary_cross_entropy_with_logits(mlp(x), y);
    loss.backward();
    {
      NoGradGuard no_grad;
      for (Tensor& p : mlp->parameters()) p.sub_(p.grad(), 0.5);
    }
    (step == 0 ? first_loss : last_loss) = loss.item<double>();
  }
  EXPECT_LT(last_loss, 0.05) << "started at " << first_loss;
  std::vector<double> logits = values(mlp(x));
  EXPECT_LT(logits[0], 0);
  EXPECT_GT(logits[1], 0);
  EXPECT_GT(logits[2], 0);
  EXPECT_LT(logits[3], 0);
}

}  // namespace
}  // namespace glass::nn
