// tests/nn/functional_test.cpp — nn::functional against independent references.
//
// Values: hand-worked numbers (derivations in the comments) and, for the losses, plain
// double loops that implement PyTorch's documented formulas (torch.nn.CrossEntropyLoss,
// BCEWithLogitsLoss) in a different algebraic form from the library's. Gradients: float64
// gradcheck (central differences) for every function. Errors: each bad input once, with
// the substance of its message.
#include "nn/functional.h"

#include <cmath>
#include <limits>
#include <numbers>

#include "autograd/gradcheck_util.h"
#include "core/test_util.h"

namespace glass::nn {
namespace {

namespace F = functional;
using F::Reduction;
using testing::close;
using testing::gradcheck;
using testing::r;
using testing::values;
using V = std::vector<Tensor>;

Tensor longs(const std::vector<int64_t>& v) { return tensor(v); }

// ---- references ---------------------------------------------------------------------------

double softplus(double z) { return std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z))); }

// -w [pw · y · log σ(x) + (1 - y) · log(1 - σ(x))], with log σ(x) = -softplus(-x) and
// log(1 - σ(x)) = -softplus(x).
double ref_bce(double x, double y, double w = 1, double pw = 1) {
  return w * (pw * y * softplus(-x) + (1 - y) * softplus(x));
}

struct RefLoss {
  std::vector<double> none;
  double sum = 0, mean = 0;
};

// torch.nn.CrossEntropyLoss's documented formula: with p = softmax(x_n) and the smoothed
// target q = (1 - ε) · onehot(y_n) + ε / C, loss_n = -Σ_c w_c · q_c · log p_c; ignored
// samples give 0; mean divides by Σ w_{y_n} over the samples that are not ignored.
RefLoss ref_cross_entropy(const Tensor& logits, const std::vector<int64_t>& y,
                          std::vector<double> w, int64_t ignore_index, double eps) {
  const int64_t n = logits.size(0), c = logits.size(1);
  if (w.empty()) w.assign(c, 1.0);
  std::vector<double> x = values(logits);
  RefLoss out;
  double total_weight = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (y[i] == ignore_index) {
      out.none.push_back(0);
      continue;
    }
    double max = -std::numeric_limits<double>::infinity(), z = 0;
    for (int64_t k = 0; k < c; ++k) max = std::max(max, x[i * c + k]);
    for (int64_t k = 0; k < c; ++k) z += std::exp(x[i * c + k] - max);
    double loss = 0;
    for (int64_t k = 0; k < c; ++k) {
      double log_p = x[i * c + k] - max - std::log(z);
      double q = (k == y[i] ? 1 - eps : 0) + eps / static_cast<double>(c);
      loss -= w[k] * q * log_p;
    }
    out.none.push_back(loss);
    out.sum += loss;
    total_weight += w[y[i]];
  }
  out.mean = out.sum / total_weight;
  return out;
}

// ---- linear -----------------------------------------------------------------------------

TEST(Functional, LinearByHand) {
  // x = [[1, 2]], W = [[1, 0], [2, -1], [0, 3]], b = [10, 20, 30]:
  // x Wᵀ = [1·1 + 2·0, 1·2 + 2·(-1), 1·0 + 2·3] = [1, 0, 6]; + b = [11, 20, 36].
  Tensor x = tensor({{1., 2.}});
  Tensor w = tensor({{1., 0.}, {2., -1.}, {0., 3.}});
  Tensor b = tensor({10., 20., 30.});
  EXPECT_TRUE(close(F::linear(x, w, b), {11, 20, 36}));
  EXPECT_TRUE(close(F::linear(x, w), {1, 0, 6}));
  // 1-D x is one sample; (2, 1, 2) is a batch of batches: same rows, shape (2, 1, 3).
  Tensor one = F::linear(tensor({1., 2.}), w, b);
  EXPECT_EQ(one.sizes(), IntArrayRef({3}));
  EXPECT_TRUE(close(one, {11, 20, 36}));
  Tensor nd = F::linear(tensor({{{1., 2.}}, {{0., 1.}}}), w, b);
  EXPECT_EQ(nd.sizes(), IntArrayRef({2, 1, 3}));
  EXPECT_TRUE(close(nd, {11, 20, 36, 10, 19, 33}));
  // A transposed (non-contiguous) input gives the same answer.
  Tensor xt = tensor({{1., 0.}, {2., 1.}}).t();  // rows [1, 2] and [0, 1]
  EXPECT_TRUE(close(F::linear(xt, w, b), {11, 20, 36, 10, 19, 33}));
  // The bias is fused into the product: one AddmmBackward0 node, no separate add.
  Tensor wg = w.clone().requires_grad_();
  EXPECT_EQ(F::linear(x, wg, b).grad_fn()->name(), "AddmmBackward0");
}

TEST(Functional, LinearGradcheck) {
  auto f = [](const V& x) { return F::linear(x[0], x[1], x[2]); };
  EXPECT_TRUE(gradcheck(f, {r({4, 3}, 1), r({2, 3}, 2), r({2}, 3)}));
  EXPECT_TRUE(gradcheck(f, {r({2, 3, 3}, 4), r({2, 3}, 5), r({2}, 6)}));
  EXPECT_TRUE(gradcheck(f, {r({3}, 7), r({2, 3}, 8), r({2}, 9)}));
  EXPECT_TRUE(
      gradcheck([](const V& x) { return F::linear(x[0], x[1]); }, {r({4, 3}, 10), r({5, 3}, 11)}));
}

TEST(Functional, LinearErrors) {
  Tensor w = zeros({4, 5});
  EXPECT_GLASS_ERROR(F::linear(zeros({2, 3}), w), "[2, 3]", "3 features", "[4, 5]",
                     "in_features = 5");
  EXPECT_GLASS_ERROR(F::linear(zeros({2, 5}), zeros({5})), "2-D weight", "[5]");
  EXPECT_GLASS_ERROR(F::linear(zeros({2, 5}), w, zeros({5})), "bias of shape [4]", "[5]");
  EXPECT_GLASS_ERROR(F::linear(scalar_tensor(1.0), w), "0-dim");
  EXPECT_GLASS_ERROR(F::linear(zeros({2, 5}, kFloat64), w), "Double", "Float");
}

// ---- activations ----------------------------------------------------------------------------

TEST(Functional, ActivationValues) {
  EXPECT_TRUE(close(F::relu(tensor({-1., 0., 2.})), {0, 0, 2}));
  EXPECT_TRUE(close(F::tanh(tensor({0.5})), {std::tanh(0.5)}));
  EXPECT_TRUE(close(F::sigmoid(tensor({0., 2.})), {0.5, 1 / (1 + std::exp(-2.0))}));
  // gelu(1) = Φ(1) = 0.5 · (1 + erf(1/√2)); the tanh form is 0.5 · (1 + tanh(√(2/π) · 1.044715)).
  EXPECT_TRUE(close(F::gelu(tensor({1.})), {0.5 * (1 + std::erf(1 / std::sqrt(2.0)))}));
  EXPECT_TRUE(close(F::gelu(tensor({1.}), "tanh"),
                    {0.5 * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * 1.044715))}));
  // softmax([1, 2, 3]) = e^k / (e + e² + e³).
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_TRUE(close(F::softmax(tensor({{1., 2., 3.}}), 1),
                    {std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z}));
  EXPECT_TRUE(close(F::log_softmax(tensor({1., 2., 3.}), 0),
                    {1 - std::log(z), 2 - std::log(z), 3 - std::log(z)}));
  EXPECT_GLASS_ERROR(F::gelu(tensor({1.}), "fast"), "approximate", "fast");
}

TEST(Functional, ActivationGradcheck) {
  EXPECT_TRUE(gradcheck([](const V& x) { return F::relu(x[0]); }, {r({3, 4}, 20)}));
  EXPECT_TRUE(gradcheck([](const V& x) { return F::gelu(x[0]); }, {r({3, 4}, 21)}));
  EXPECT_TRUE(gradcheck([](const V& x) { return F::gelu(x[0], "tanh"); }, {r({3, 4}, 22)}));
  EXPECT_TRUE(gradcheck([](const V& x) { return F::tanh(x[0]); }, {r({3, 4}, 23)}));
  EXPECT_TRUE(gradcheck([](const V& x) { return F::sigmoid(x[0]); }, {r({3, 4}, 24)}));
  EXPECT_TRUE(gradcheck([](const V& x) { return F::softmax(x[0], 1); }, {r({3, 4}, 25)}));
  EXPECT_TRUE(gradcheck([](const V& x) { return F::log_softmax(x[0], 0); }, {r({3, 4}, 26)}));
}

// ---- dropout ---------------------------------------------------------------------------------

TEST(Functional, DropoutIdentityCasesAndErrors) {
  Tensor x = r({3, 4}, 30);
  EXPECT_TRUE(F::dropout(x, 0.5, /*training=*/false).is_same(x));
  EXPECT_TRUE(F::dropout(x, 0.0).is_same(x));
  EXPECT_TRUE(close(F::dropout(x, 1.0), std::vector<double>(12, 0.0)));
  EXPECT_GLASS_ERROR(F::dropout(x, 1.5), "between 0 and 1", "1.5");
  EXPECT_GLASS_ERROR(F::dropout(x, -0.1), "between 0 and 1", "-0.1");
}

TEST(Functional, DropoutGradcheck) {
  // Reseeding inside f draws the same mask at every evaluation, so f is a fixed function.
  EXPECT_TRUE(gradcheck(
      [](const V& x) {
        manual_seed(5);
        return F::dropout(x[0], 0.4);
      },
      {r({4, 5}, 31)}));
  EXPECT_TRUE(gradcheck([](const V& x) { return F::dropout(x[0], 1.0); }, {r({3}, 32)}));
}

// ---- layer_norm ------------------------------------------------------------------------------

TEST(Functional, LayerNormByHand) {
  // [1, 2, 3, 4]: mean 2.5, biased variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25;
  // with eps = 0: (x - 2.5) / sqrt(1.25) = [-1.5, -0.5, 0.5, 1.5] / 1.1180340.
  Tensor x = tensor({{1., 2., 3., 4.}, {2., 2., 2., 2.}}, kFloat64);
  double s = std::sqrt(1.25);
  Tensor y = F::layer_norm(x, {4}, {}, {}, 0.0);
  EXPECT_TRUE(close(y.narrow(0, 0, 1), {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}));
  // A constant row has variance 0: eps keeps it finite, (x - mean) = 0.
  EXPECT_TRUE(close(F::layer_norm(x, {4}).narrow(0, 1, 1), {0, 0, 0, 0}));
  // Affine: y · weight + bias per element.
  Tensor w = tensor({1., 2., 3., 4.}, kFloat64), b = tensor({0., 0., 0., 1.}, kFloat64);
  s = std::sqrt(1.25 + 1e-5);
  EXPECT_TRUE(close(F::layer_norm(x, {4}, w, b).narrow(0, 0, 1),
                    {-1.5 / s, -1.0 / s, 1.5 / s, 6.0 / s + 1}));
  // Over the last two dims, (2, 2) per sample: the same four numbers.
  Tensor y2 = F::layer_norm(x.view({2, 2, 2}), {2, 2}, {}, {}, 0.0);
  EXPECT_TRUE(close(y2.narrow(0, 0, 1), {-1.5 / std::sqrt(1.25), -0.5 / std::sqrt(1.25),
                                         0.5 / std::sqrt(1.25), 1.5 / std::sqrt(1.25)}));
}

TEST(Functional, LayerNormGradcheck) {
  EXPECT_TRUE(gradcheck([](const V& x) { return F::layer_norm(x[0], {4}, x[1], x[2]); },
                        {r({3, 4}, 40), r({4}, 41), r({4}, 42)}));
  EXPECT_TRUE(gradcheck(
      [](const V& x) {
        return F::layer_norm(x[0], {3, 4}, x[1], x[2]);
      },
      {r({2, 3, 4}, 43), r({3, 4}, 44), r({3, 4}, 45)}));
  EXPECT_TRUE(gradcheck([](const V& x) { return F::layer_norm(x[0], {5}); }, {r({2, 5}, 46)}));
}

TEST(Functional, LayerNormErrors) {
  Tensor x = zeros({2, 3});
  EXPECT_GLASS_ERROR(F::layer_norm(x, {4}), "normalized_shape [4]", "last 1 dims", "[2, 3]");
  EXPECT_GLASS_ERROR(F::layer_norm(x, {2, 3, 1}), "[2, 3, 1]", "[2, 3]");
  EXPECT_GLASS_ERROR(F::layer_norm(x, {3}, zeros({4})), "weight", "[3]", "[4]");
  EXPECT_GLASS_ERROR(F::layer_norm(x, {3}, {}, zeros({2, 3})), "bias", "[2, 3]");
  EXPECT_GLASS_ERROR(F::layer_norm(zeros({2, 3}, kLong), {3}), "floating-point", "Long");
  EXPECT_GLASS_ERROR(F::layer_norm(x, {}), "at least one dim");
}

// ---- embedding -------------------------------------------------------------------------------

TEST(Functional, EmbeddingPicksRows) {
  Tensor w = arange(12, kFloat).view({4, 3});  // row k = [3k, 3k + 1, 3k + 2]
  Tensor out = F::embedding(longs({2, 0, 2}).view({1, 3}), w);
  EXPECT_EQ(out.sizes(), IntArrayRef({1, 3, 3}));
  EXPECT_TRUE(close(out, {6, 7, 8, 0, 1, 2, 6, 7, 8}));
  // Int indices and negative padding_idx (-1 is row 3) are accepted.
  EXPECT_TRUE(close(F::embedding(longs({3}).to(kInt), w, -1), {9, 10, 11}));
}

TEST(Functional, EmbeddingGradcheck) {
  Tensor idx = longs({0, 2, 2, 1}).view({2, 2});  // a repeated index accumulates
  EXPECT_TRUE(gradcheck([&](const V& x) { return F::embedding(idx, x[0]); }, {r({3, 4}, 50)}));
  // With a padding_idx the function is deliberately not its own derivative at the padding
  // row (see the next test), so gradcheck looks at indices that avoid it: the masking
  // must leave every other row's gradient intact.
  Tensor no_pad = longs({0, 1, 1, 0}).view({2, 2});
  EXPECT_TRUE(
      gradcheck([&](const V& x) { return F::embedding(no_pad, x[0], 2); }, {r({3, 4}, 51)}));
}

TEST(Functional, EmbeddingPaddingRowGetsNoGradient) {
  Tensor w = ones({3, 2}).requires_grad_();
  F::embedding(longs({0, 1, 1, 2}), w, /*padding_idx=*/1).sum().backward();
  EXPECT_TRUE(close(w.grad(), {1, 1, 0, 0, 1, 1}));
}

TEST(Functional, EmbeddingErrors) {
  Tensor w = zeros({5, 2});
  EXPECT_GLASS_ERROR(F::embedding(longs({1, 5}), w), "index 5 is out of range", "5 embeddings",
                     "0 .. 4");
  EXPECT_GLASS_ERROR(F::embedding(longs({-1}), w), "index -1 is out of range");
  EXPECT_GLASS_ERROR(F::embedding(tensor({1.0}), w), "Long or Int", "Float");
  EXPECT_GLASS_ERROR(F::embedding(longs({1}), zeros({5})), "2-D weight", "[5]");
  EXPECT_GLASS_ERROR(F::embedding(longs({1}), w, 5), "padding_idx 5", "-5 .. 4");
}

// ---- mse_loss --------------------------------------------------------------------------------

TEST(Functional, MseLossByHand) {
  // input - target = [1, 0, -2] → squares [1, 0, 4]: sum 5, mean 5/3.
  Tensor input = tensor({1., 2., 3.}), target = tensor({0., 2., 5.});
  EXPECT_TRUE(close(F::mse_loss(input, target), {5.0 / 3}));
  EXPECT_TRUE(close(F::mse_loss(input, target, Reduction::Sum), {5}));
  EXPECT_TRUE(close(F::mse_loss(input, target, Reduction::None), {1, 0, 4}));
  for (Reduction red : {Reduction::None, Reduction::Mean, Reduction::Sum})
    EXPECT_TRUE(gradcheck([&](const V& x) { return F::mse_loss(x[0], x[1], red); },
                          {r({2, 3}, 60), r({2, 3}, 61)}));
  EXPECT_GLASS_ERROR(F::mse_loss(zeros({3}), zeros({3, 1})), "[3, 1]", "[3]", "reshape");
  EXPECT_GLASS_ERROR(F::mse_loss(zeros({3}, kLong), zeros({3}, kLong)), "floating-point");
}

// ---- nll_loss --------------------------------------------------------------------------------

// Not normalised (nll_loss does not care): rows of "log-probabilities" for 3 classes.
Tensor nll_input() { return tensor({{-1., -2., -3.}, {-0.5, -1.5, -2.5}, {-4., -0.1, -2.}}); }

TEST(Functional, NllLossByHand) {
  Tensor lp = nll_input();
  Tensor y = longs({0, 2, 1});
  // Picked: -(-1), -(-2.5), -(-0.1) = [1, 2.5, 0.1]: sum 3.6, mean 1.2.
  EXPECT_TRUE(close(F::nll_loss(lp, y, {}, -100, Reduction::None), {1, 2.5, 0.1}));
  EXPECT_TRUE(close(F::nll_loss(lp, y, {}, -100, Reduction::Sum), {3.6}));
  EXPECT_TRUE(close(F::nll_loss(lp, y), {1.2}));
  // weight [1, 2, 3]: [1·1, 3·2.5, 2·0.1] = [1, 7.5, 0.2]; sum 8.7; mean 8.7 / (1 + 3 + 2).
  Tensor w = tensor({1., 2., 3.});
  EXPECT_TRUE(close(F::nll_loss(lp, y, w, -100, Reduction::None), {1, 7.5, 0.2}));
  EXPECT_TRUE(close(F::nll_loss(lp, y, w, -100, Reduction::Sum), {8.7}));
  EXPECT_TRUE(close(F::nll_loss(lp, y, w), {8.7 / 6}));
}

TEST(Functional, NllLossIgnoreIndex) {
  Tensor lp = nll_input();
  // ignore_index = 2 drops sample 1: [1, 0, 0.1]; mean over the 2 that count = 0.55.
  Tensor y = longs({0, 2, 1});
  EXPECT_TRUE(close(F::nll_loss(lp, y, {}, 2, Reduction::None), {1, 0, 0.1}));
  EXPECT_TRUE(close(F::nll_loss(lp, y, {}, 2, Reduction::Sum), {1.1}));
  EXPECT_TRUE(close(F::nll_loss(lp, y, {}, 2), {0.55}));
  // With weight [1, 2, 3]: [1, 0, 0.2], mean = 1.2 / (1 + 2) (sample 1's weight 3 left out).
  EXPECT_TRUE(close(F::nll_loss(lp, y, tensor({1., 2., 3.}), 2), {0.4}));
  // The default ignore_index, -100, is outside [0, C): such targets are skipped, not errors.
  Tensor y_pad = longs({0, -100, 1});
  EXPECT_TRUE(close(F::nll_loss(lp, y_pad), {0.55}));
  EXPECT_TRUE(close(F::nll_loss(lp, y_pad, {}, -100, Reduction::None), {1, 0, 0.1}));
  // Every target ignored: the mean is 0/0, as in PyTorch.
  EXPECT_TRUE(std::isnan(F::nll_loss(lp, longs({-100, -100, -100})).item<float>()));
  // An ignored target whose (unused) log-probability is -inf still gives exactly 0.
  Tensor with_inf = tensor({{-INFINITY, -1.}});
  EXPECT_TRUE(close(F::nll_loss(with_inf, longs({0}), {}, 0, Reduction::Sum), {0.0}));
}

TEST(Functional, NllLossUnbatchedAndPerPosition) {
  // (C) input with a 0-dim target: row 1 of nll_input, class 2 → 2.5 whatever the reduction.
  Tensor row = nll_input().select(0, 1);
  Tensor t = longs({2}).squeeze(0);
  EXPECT_TRUE(close(F::nll_loss(row, t), {2.5}));
  Tensor none = F::nll_loss(row, t, {}, -100, Reduction::None);
  EXPECT_EQ(none.dim(), 0);
  EXPECT_TRUE(close(none, {2.5}));
  // (N, C, d) = (1, 2, 3): class 0 has [-1, -2, -3] at the 3 positions, class 1 [-4, -5, -6].
  // Targets [0, 1, 0] pick [1, 5, 3]: mean 3.
  Tensor lp = tensor({{{-1., -2., -3.}, {-4., -5., -6.}}});
  Tensor y = longs({0, 1, 0}).view({1, 3});
  EXPECT_TRUE(close(F::nll_loss(lp, y, {}, -100, Reduction::None), {1, 5, 3}));
  EXPECT_EQ(F::nll_loss(lp, y, {}, -100, Reduction::None).sizes(), IntArrayRef({1, 3}));
  EXPECT_TRUE(close(F::nll_loss(lp, y), {3}));
}

TEST(Functional, NllLossGradcheck) {
  Tensor y = longs({0, 2, 1, -100});
  for (Reduction red : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    EXPECT_TRUE(gradcheck([&](const V& x) { return F::nll_loss(x[0], y, {}, -100, red); },
                          {r({4, 3}, 70)}));
    // The class weights get a gradient too (through the weighted mean's denominator).
    EXPECT_TRUE(gradcheck([&](const V& x) { return F::nll_loss(x[0], y, x[1], -100, red); },
                          {r({4, 3}, 71), r({3}, 72, 0.5, 2)}));
  }
  Tensor y3 = longs({0, 1, 2, 1, 0, 0}).view({2, 3});
  EXPECT_TRUE(gradcheck([&](const V& x) { return F::nll_loss(x[0], y3); }, {r({2, 3, 3}, 73)}));
}

TEST(Functional, NllLossErrors) {
  Tensor lp = zeros({3, 5});
  EXPECT_GLASS_ERROR(F::nll_loss(lp, tensor({0., 1., 2.})), "dtype Long", "Float",
                     "class probabilities");
  EXPECT_GLASS_ERROR(F::nll_loss(lp, longs({0, 1, 2}).to(kInt)), "dtype Long", "Int",
                     "to(glass::kLong)");
  EXPECT_GLASS_ERROR(F::nll_loss(lp, longs({0, 1, 2, 3})), "[3, 5]", "target of shape [3]", "[4]");
  EXPECT_GLASS_ERROR(F::nll_loss(lp, longs({0, 7, 1})), "target 7 is out of bounds", "[0, 5)",
                     "5 classes");
  EXPECT_GLASS_ERROR(F::nll_loss(lp, longs({0, -1, 1})), "target -1 is out of bounds");
  EXPECT_GLASS_ERROR(F::nll_loss(lp, longs({0, 1, 1}), zeros({4})), "weight of shape [5]", "[4]");
  EXPECT_GLASS_ERROR(F::nll_loss(scalar_tensor(1.0), longs({0})), "0-dim");
  EXPECT_GLASS_ERROR(F::nll_loss(zeros({5}), longs({0})), "0-dim class index", "[1]");
  EXPECT_GLASS_ERROR(F::nll_loss(zeros({3, 5}, kLong), longs({0, 1, 2})), "floating-point");
}

// ---- cross_entropy ---------------------------------------------------------------------------

TEST(Functional, CrossEntropyByHand) {
  // logits [1, 2, 3], class 2: -log(e³ / (e + e² + e³)) = log(1 + e⁻¹ + e⁻²) = 0.4076059644.
  Tensor logits = tensor({{1., 2., 3.}});
  EXPECT_TRUE(close(F::cross_entropy(logits, longs({2})), {0.4076059644}));
  // Equal logits over 2 classes: log 2 whatever the smoothing (q sums to 1, log p = -log 2).
  EXPECT_TRUE(close(F::cross_entropy(zeros({1, 2}), longs({0}), {}, -100, Reduction::Mean, 0.2),
                    {std::log(2.0)}));
  // = nll_loss(log_softmax(x)), also for one unbatched sample.
  Tensor x = r({4, 5}, 80).to(kFloat);
  Tensor y = longs({4, 0, 3, 3});
  EXPECT_TRUE(close(F::cross_entropy(x, y), F::nll_loss(F::log_softmax(x, 1), y)));
  EXPECT_TRUE(close(
      F::cross_entropy(x.select(0, 0), longs({4}).squeeze(0)),
      F::nll_loss(F::log_softmax(x, 1), y, {}, -100, Reduction::None).narrow(0, 0, 1).squeeze(0)));
}

TEST(Functional, CrossEntropyMatchesPyTorchFormula) {
  Tensor x = r({5, 4}, 81);
  std::vector<int64_t> y = {1, 3, -100, 0, 3};
  std::vector<double> w = {0.5, 1, 2, 1.5};
  for (double eps : {0.0, 0.1, 1.0}) {
    for (bool weighted : {false, true}) {
      RefLoss ref = ref_cross_entropy(x, y, weighted ? w : std::vector<double>{}, -100, eps);
      Tensor wt = weighted ? tensor(w) : Tensor();
      SCOPED_TRACE(::testing::Message() << "eps " << eps << (weighted ? ", weighted" : ""));
      EXPECT_TRUE(close(F::cross_entropy(x, tensor(y), wt, -100, Reduction::None, eps), ref.none));
      EXPECT_TRUE(close(F::cross_entropy(x, tensor(y), wt, -100, Reduction::Sum, eps), {ref.sum}));
      EXPECT_TRUE(
          close(F::cross_entropy(x, tensor(y), wt, -100, Reduction::Mean, eps), {ref.mean}));
    }
  }
  // ignore_index inside [0, C): class 3 is ignored wherever it is the target.
  RefLoss ref = ref_cross_entropy(x, {1, 3, 2, 0, 3}, w, 3, 0.1);
  EXPECT_TRUE(close(F::cross_entropy(x, longs({1, 3, 2, 0, 3}), tensor(w), 3, Reduction::Mean, 0.1),
                    {ref.mean}));
}

TEST(Functional, CrossEntropyPerPositionEqualsFlattened) {
  // (N, C, T) = (2, 3, 4) against (N·T, C): the same samples, the same mean.
  Tensor x = r({2, 3, 4}, 82);
  Tensor y = longs({0, 1, 2, 1, 2, 2, 0, -100}).view({2, 4});
  Tensor flat_x = x.movedim(1, 2).reshape({8, 3});
  EXPECT_TRUE(close(F::cross_entropy(x, y, {}, -100, Reduction::Mean, 0.1),
                    F::cross_entropy(flat_x, y.reshape({8}), {}, -100, Reduction::Mean, 0.1)));
  EXPECT_TRUE(close(F::cross_entropy(x, y, {}, -100, Reduction::None).reshape({8}),
                    F::cross_entropy(flat_x, y.reshape({8}), {}, -100, Reduction::None)));
}

TEST(Functional, CrossEntropyIsStableForHugeLogits) {
  // Row 0: logsumexp = 1000 (e⁻²⁰⁰⁰ and e⁻¹⁰⁰⁰ vanish), class 0 → 0. Row 1: logsumexp = 1000,
  // class 2 (logit 500) → 500. Naive softmax would compute e¹⁰⁰⁰ = inf.
  Tensor x = tensor({{1000., -1000., 0.}, {-1000., 1000., 500.}}).requires_grad_();
  Tensor loss = F::cross_entropy(x, longs({0, 2}), {}, -100, Reduction::None);
  EXPECT_TRUE(close(loss, {0, 500}));
  loss.sum().backward();
  // d/dx = softmax(x) - onehot(y): row 0 [0, 0, 0], row 1 [0, 1, -1].
  EXPECT_TRUE(close(x.grad(), {0, 0, 0, 0, 1, -1}));
}

TEST(Functional, CrossEntropyGradcheck) {
  Tensor y = longs({1, 3, -100, 0, 3});
  Tensor w = tensor({0.5, 1., 2., 1.5}, kFloat64);
  for (Reduction red : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    EXPECT_TRUE(gradcheck([&](const V& x) { return F::cross_entropy(x[0], y, w, -100, red, 0.1); },
                          {r({5, 4}, 83)}));
  }
  EXPECT_TRUE(gradcheck([&](const V& x) { return F::cross_entropy(x[0], y, x[1]); },
                        {r({5, 4}, 84), r({4}, 85, 0.5, 2)}));
  Tensor y3 = longs({0, 1, 2, 1, 2, 2, 0, -100}).view({2, 4});
  EXPECT_TRUE(gradcheck(
      [&](const V& x) { return F::cross_entropy(x[0], y3, {}, -100, Reduction::Mean, 0.2); },
      {r({2, 3, 4}, 86)}));
}

TEST(Functional, CrossEntropyErrors) {
  EXPECT_GLASS_ERROR(F::cross_entropy(zeros({2, 3}), zeros({2, 3})), "cross_entropy", "dtype Long",
                     "class probabilities");
  EXPECT_GLASS_ERROR(F::cross_entropy(zeros({2, 3}), longs({0, 3})), "cross_entropy",
                     "target 3 is out of bounds", "[0, 3)");
  EXPECT_GLASS_ERROR(F::cross_entropy(zeros({2, 3}), longs({0})), "[2, 3]", "[2]", "[1]");
  EXPECT_GLASS_ERROR(F::cross_entropy(zeros({2, 3}), longs({0, 1}), {}, -100, Reduction::Mean, 1.5),
                     "label_smoothing", "1.5");
}

// ---- binary_cross_entropy_with_logits --------------------------------------------------------

TEST(Functional, BceWithLogitsMatchesFormula) {
  Tensor x = tensor({{0.5, -1.}, {2., -3.}}, kFloat64);
  Tensor y = tensor({{1., 0.}, {0.5, 1.}}, kFloat64);
  std::vector<double> xs = values(x), ys = values(y);
  // x=0.5, y=1: softplus(-0.5) = log(1 + e^-0.5) = 0.474077; x=-1, y=0: softplus(-1) = 0.313262.
  std::vector<double> plain, weighted;
  double sum = 0;
  const double w[] = {2, 1}, pw[] = {3, 0.5};  // per column
  for (size_t i = 0; i < 4; ++i) {
    plain.push_back(ref_bce(xs[i], ys[i]));
    weighted.push_back(ref_bce(xs[i], ys[i], w[i % 2], pw[i % 2]));
    sum += plain.back();
  }
  EXPECT_NEAR(plain[0], 0.474077, 1e-6);
  EXPECT_NEAR(plain[1], 0.313262, 1e-6);
  EXPECT_TRUE(close(F::binary_cross_entropy_with_logits(x, y, {}, {}, Reduction::None), plain));
  EXPECT_TRUE(close(F::binary_cross_entropy_with_logits(x, y, {}, {}, Reduction::Sum), {sum}));
  EXPECT_TRUE(close(F::binary_cross_entropy_with_logits(x, y), {sum / 4}));
  Tensor wt = tensor({2., 1.}, kFloat64), pwt = tensor({3., 0.5}, kFloat64);
  EXPECT_TRUE(close(F::binary_cross_entropy_with_logits(x, y, wt, pwt, Reduction::None), weighted));
}

TEST(Functional, BceWithLogitsIsExactAtHugeLogits) {
  // softplus(±100): log(1 + e^-100) = 3.7e-44 (0 in any float), and 100 + that = 100.
  for (ScalarType dtype : {kFloat, kFloat64}) {
    Tensor x = tensor({100., -100., 100., -100.}, dtype).requires_grad_();
    Tensor y = tensor({1., 1., 0., 0.}, dtype);
    Tensor loss = F::binary_cross_entropy_with_logits(x, y, {}, {}, Reduction::None);
    std::vector<double> v = values(loss);
    EXPECT_LE(std::abs(v[0]), 1e-40);
    EXPECT_EQ(v[1], 100.0);
    EXPECT_EQ(v[2], 100.0);
    EXPECT_LE(std::abs(v[3]), 1e-40);
    loss.sum().backward();
    // d/dx = σ(x) - y = [-σ(-100), -1, 1, σ(-100)], σ(-100) = 3.7e-44.
    std::vector<double> g = values(x.grad());
    EXPECT_LE(std::abs(g[0]), 1e-40);
    EXPECT_EQ(g[1], -1.0);
    EXPECT_EQ(g[2], 1.0);
    EXPECT_LE(std::abs(g[3]), 1e-40);
  }
  // At x = 0 the gradient is σ(0) - y = 0.5 - y, with no kink from max(-x, 0).
  Tensor x0 = tensor({0., 0.}, kFloat64).requires_grad_();
  F::binary_cross_entropy_with_logits(x0, tensor({1., 0.}, kFloat64), {}, {}, Reduction::Sum)
      .backward();
  EXPECT_TRUE(close(x0.grad(), {-0.5, 0.5}));
}

TEST(Functional, BceWithLogitsGradcheck) {
  for (Reduction red : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    EXPECT_TRUE(gradcheck(
        [&](const V& x) {
          return F::binary_cross_entropy_with_logits(x[0], x[1], x[2], x[3], red);
        },
        {r({3, 2}, 90, -4, 4), r({3, 2}, 91, 0, 1), r({3, 2}, 92, 0.5, 2), r({2}, 93, 0.5, 3)}));
  }
  EXPECT_TRUE(gradcheck([](const V& x) { return F::binary_cross_entropy_with_logits(x[0], x[1]); },
                        {r({5}, 94, -30, 30), r({5}, 95, 0, 1)}));
}

TEST(Functional, BceWithLogitsErrors) {
  EXPECT_GLASS_ERROR(F::binary_cross_entropy_with_logits(zeros({3, 1}), zeros({3})), "[3]",
                     "[3, 1]");
  EXPECT_GLASS_ERROR(
      F::binary_cross_entropy_with_logits(zeros({3, 2}), zeros({3, 2}), {}, zeros({3})),
      "pos_weight of shape [3]", "[3, 2]");
  EXPECT_GLASS_ERROR(F::binary_cross_entropy_with_logits(zeros({3, 2}), zeros({3, 2}), zeros({4})),
                     "weight of shape [4]");
  EXPECT_GLASS_ERROR(F::binary_cross_entropy_with_logits(zeros({2}), zeros({2}, kLong)),
                     "floating-point", "Long");
}

}  // namespace
}  // namespace glass::nn
