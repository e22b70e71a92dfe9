// lessons/07_seeing_it/exercises/wrong_answers.cpp — the deliberately wrong answers of
// wrong_answers.h: each breaks one rule of exercise 3, or reads the gradients where the
// exercise bans it, and exercises_test.cpp asserts the grader rejects it.
#include "wrong_answers.h"

#include <functional>
#include <string>

namespace glass::lesson07::wrong {
namespace {

// The path of the weight whose score is best by `better`, scoring each weight with its
// recorded gradient's norm `g` and its own norm `w`.
std::string pick(nn::Module& model, const Tensor& loss,
                 const std::function<double(double g, double w)>& score,
                 const std::function<bool(double, double)>& better) {
  const viz::Snapshot s = viz::snapshot_with_gradients(loss, {.module = &model});
  std::string layer;
  double best = 0;
  for (const auto& [name, w] : model.named_parameters()) {
    if (!name.ends_with(".weight")) continue;
    const viz::GraphNode* leaf = s.find(name);
    GLASS_CHECK(leaf != nullptr && leaf->grad, name, " received no gradient");
    const double value = score(leaf->grad->norm, viz::grad_stats(w).norm);
    if (layer.empty() || better(value, best)) {
      layer = name.substr(0, name.size() - 7);
      best = value;
    }
  }
  return layer;
}

}  // namespace

std::string vanishing_layer_by_backward(nn::Module& model, const Tensor& loss) {
  loss.backward();
  std::string layer;
  double smallest = 0;
  for (const auto& [name, w] : model.named_parameters()) {
    if (!name.ends_with(".weight")) continue;
    const double ratio = viz::grad_stats(w.grad()).norm / viz::grad_stats(w).norm;
    if (layer.empty() || ratio < smallest) {
      layer = name.substr(0, name.size() - 7);
      smallest = ratio;
    }
  }
  return layer;
}

std::string vanishing_layer_absolute(nn::Module& model, const Tensor& loss) {
  return pick(
      model, loss, [](double g, double) { return g; }, std::less<double>());
}

std::string vanishing_layer_largest(nn::Module& model, const Tensor& loss) {
  return pick(
      model, loss, [](double g, double w) { return g / w; }, std::greater<double>());
}

std::string vanishing_layer_first(nn::Module& model, [[maybe_unused]] const Tensor& loss) {
  for (const auto& [name, w] : model.named_parameters())
    if (name.ends_with(".weight")) return name.substr(0, name.size() - 7);
  return "";
}

}  // namespace glass::lesson07::wrong
