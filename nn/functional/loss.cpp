// nn/functional/loss.cpp — the losses of loss.h.
//
// The class losses (nll_loss, cross_entropy) share one preparation step: check shapes
// and dtypes, and the targets. On the CPU, two cheap reductions (amin, amax) check every
// target against [0, C) and tell whether any can equal ignore_index; only then is an
// ignore mask built, so the common case (no weights, nothing ignored) is one gather. On a
// device, reading them would make the loss a sync point, so the ignore mask is always
// built and the gather kernel finds a bad target (reported at the next sync point, in
// the same words: Note [Index errors are found by the kernel], core/device_kernels.h).
#include "nn/functional/loss.h"

#include <string>

#include "core/error.h"
#include "core/ops/indexing.h"
#include "core/ops/pointwise.h"
#include "core/ops/reduce.h"
#include "core/shape.h"

namespace glass::nn::functional {

namespace {

Tensor reduce(const Tensor& losses, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return losses;
    case Reduction::Mean: return losses.mean();
    case Reduction::Sum: return losses.sum();
  }
  return losses;
}

void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  GLASS_CHECK(input.defined() && target.defined(), op, "(): got an undefined input or target");
  GLASS_CHECK(input.sizes() == target.sizes(), op, "(): target of shape ", target.sizes(),
              " must have the input's shape ", input.sizes(),
              " (broadcasting them would silently pair the wrong elements; reshape one to match)");
  GLASS_CHECK(input.is_floating_point() && target.is_floating_point(), op,
              "(): expected floating-point input and target, got dtypes ", input.dtype(), " and ",
              target.dtype());
}

void check_broadcastable(const char* op, const char* what, const Tensor& t, const Tensor& input) {
  if (!t.defined()) return;
  GLASS_CHECK(is_expandable_to(t.sizes(), input.sizes()), op, "(): ", what, " of shape ", t.sizes(),
              " cannot be broadcast to the input's shape ", input.sizes());
}

// ---- class losses -------------------------------------------------------------------------

int64_t class_count(const Tensor& input) {
  return input.dim() == 1 ? input.size(0) : input.size(1);
}

void check_class_inputs(const char* op, const Tensor& input, const Tensor& target,
                        const Tensor& weight) {
  GLASS_CHECK(input.defined() && target.defined(), op, "(): got an undefined input or target");
  GLASS_CHECK(input.is_floating_point(), op, "(): expected a floating-point input, got dtype ",
              input.dtype());
  GLASS_CHECK(input.dim() >= 1, op,
              "(): expected an input of shape (C), (N, C) or (N, C, d...), got a 0-dim tensor");
  GLASS_CHECK(target.dtype() == kLong, op,
              "(): expected a target of class indices with dtype Long, got ", target.dtype(),
              target.is_floating_point()
                  ? " (class probabilities as targets are not supported; pass the class indices)"
                  : "; convert with target.to(glass::kLong)");
  // The target has the input's shape without the class dim (dim 1, or dim 0 for (C)).
  Shape expected;
  if (input.dim() >= 2) expected.push_back(input.size(0));
  for (int64_t d = 2; d < input.dim(); ++d) expected.push_back(input.size(d));
  const char* layout = input.dim() == 1   ? "a 0-dim class index for a (C) input"
                       : input.dim() == 2 ? "(N) for an (N, C) input"
                                          : "(N, d...) for an (N, C, d...) input";
  GLASS_CHECK(target.sizes() == IntArrayRef(expected), op, "(): input of shape ", input.sizes(),
              " needs a target of shape ", IntArrayRef(expected), " (", layout,
              "), but the target has shape ", target.sizes());
  if (!weight.defined()) return;
  const int64_t c = class_count(input);
  GLASS_CHECK(weight.dim() == 1 && weight.size(0) == c, op, "(): expected a weight of shape [", c,
              "] (one per class), got shape ", weight.sizes());
  GLASS_CHECK(weight.dtype() == input.dtype(), op, "(): weight has dtype ", weight.dtype(),
              " but the input has dtype ", input.dtype());
}

// Throws naming the first target outside [0, C) that is not ignore_index. Returns
// whether some target may equal ignore_index (false when none can).
bool check_target_range(const char* op, const Tensor& target, int64_t c, int64_t ignore_index) {
  if (target.numel() == 0) return false;
  const int64_t lo = target.amin().item<int64_t>(), hi = target.amax().item<int64_t>();
  const bool may_ignore = lo <= ignore_index && ignore_index <= hi;
  if (lo >= 0 && hi < c) return may_ignore;
  Tensor bad = target.masked_select(((target < 0) | (target >= c)) & (target != ignore_index));
  if (bad.numel() > 0) {
    GLASS_CHECK(false, op, "(): target ", bad.narrow(0, 0, 1).item<int64_t>(),
                " is out of bounds: class indices must lie in [0, ", c, ") for an input with ", c,
                " classes, or equal ignore_index (", ignore_index, ")");
  }
  return may_ignore;
}

// The kernel's words for a bad target of a device tensor (the CPU check above also
// names ignore_index, which the kernel does not know).
std::string target_out_of_bounds(const char* op, int64_t target, int64_t c) {
  return detail::str_cat(op, "(): target ", target,
                         " is out of bounds: class indices must lie in [0, ", c,
                         ") for an input with ", c, " classes, or equal ignore_index");
}
[[maybe_unused]] const bool registered = [] {
  register_index_error_format("nll_loss", [](int64_t target, int64_t, int64_t c) {
    return target_out_of_bounds("nll_loss", target, c);
  });
  register_index_error_format("cross_entropy", [](int64_t target, int64_t, int64_t c) {
    return target_out_of_bounds("cross_entropy", target, c);
  });
  return true;
}();

// The validated inputs of a class loss, in the batched layout.
struct ClassTargets {
  const char* op = "";
  Tensor input;    // (N, C, d...): a (C) input becomes (1, C)
  Tensor target;   // Long (N, d...), ignored entries replaced by 0 (a valid gather index)
  Tensor ignored;  // Bool (N, d...); undefined when (on the CPU) no target is ignore_index
  Tensor weight;   // (N, d...) = weight[target], or undefined when no class weights
  bool unbatched = false;
};

ClassTargets prepare(const char* op, const Tensor& input, const Tensor& target,
                     const Tensor& weight, int64_t ignore_index) {
  ClassTargets t;
  t.op = op;
  t.unbatched = input.dim() == 1;
  t.input = t.unbatched ? input.unsqueeze(0) : input;
  t.target = t.unbatched ? target.unsqueeze(0) : target;
  const bool on_cpu = t.target.is_cpu();
  if (!on_cpu || check_target_range(op, t.target, t.input.size(1), ignore_index)) {
    t.ignored = t.target == ignore_index;
    t.target = t.target.masked_fill(t.ignored, 0);
  }
  if (weight.defined()) {
    IndexOpScope scope(op, false);
    t.weight = weight.index_select(0, t.target.reshape({-1})).view(t.target.sizes());
  }
  return t;
}

// Mean divides by the total weight of the targets that count: Σ weight[target] over the
// non-ignored ones, or their number when there are no class weights.
Tensor reduce_class_losses(const Tensor& losses, const ClassTargets& t, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return t.unbatched ? losses.squeeze(0) : losses;
    case Reduction::Sum: return losses.sum();
    case Reduction::Mean:
      if (t.weight.defined()) {
        Tensor counted = t.ignored.defined() ? where(t.ignored, 0.0, t.weight) : t.weight;
        return losses.sum() / counted.sum();
      }
      if (t.ignored.defined()) return losses.sum() / logical_not(t.ignored).sum();
      return losses.mean();
  }
  return losses;
}

// -log_probs[n, target[n], d...] · weight[target[n, d...]]: (N, d...).
Tensor nll_losses(const ClassTargets& t) {
  Tensor picked;
  {
    IndexOpScope scope(t.op, false);
    picked = t.input.gather(1, t.target.unsqueeze(1)).squeeze(1);
  }
  Tensor losses = -picked;
  if (t.weight.defined()) losses = losses * t.weight;
  // where(), not a product with a 0/1 mask: a -inf log-probability of an ignored
  // target must give 0, and -inf · 0 is nan.
  if (t.ignored.defined()) losses = where(t.ignored, 0.0, losses);
  return losses;
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape("mse_loss", input, target);
  Tensor diff = input - target;
  return reduce(diff * diff, reduction);
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight,
                int64_t ignore_index, Reduction reduction) {
  check_class_inputs("nll_loss", log_probs, target, weight);
  ClassTargets t = prepare("nll_loss", log_probs, target, weight, ignore_index);
  return reduce_class_losses(nll_losses(t), t, reduction);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight,
                     int64_t ignore_index, Reduction reduction, double label_smoothing) {
  check_class_inputs("cross_entropy", logits, target, weight);
  GLASS_CHECK(label_smoothing >= 0 && label_smoothing <= 1,
              "cross_entropy(): label_smoothing must be between 0.0 and 1.0, got ",
              label_smoothing);
  Tensor log_probs = glass::log_softmax(logits, logits.dim() == 1 ? 0 : 1);
  ClassTargets t = prepare("cross_entropy", log_probs, target, weight, ignore_index);
  Tensor nll = reduce_class_losses(nll_losses(t), t, reduction);
  if (label_smoothing == 0) return nll;

  // The cross-entropy against the uniform target, up to the 1/C folded in below:
  // -Σ_c weight[c] · log p[n, c, d...].
  const int64_t c = t.input.size(1);
  Tensor weighted = t.input;  // (N, C, d...)
  if (weight.defined()) {
    Shape along_classes(t.input.dim(), 1);
    along_classes[1] = c;
    weighted = weighted * weight.view(along_classes);
  }
  Tensor smooth = -weighted.sum({1});  // (N, d...)
  if (t.ignored.defined()) smooth = where(t.ignored, 0.0, smooth);
  Tensor uniform = reduce_class_losses(smooth, t, reduction);
  return nll * (1 - label_smoothing) + uniform * (label_smoothing / static_cast<double>(c));
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, const Tensor& pos_weight,
                                        Reduction reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  check_same_shape(op, input, target);
  check_broadcastable(op, "weight", weight, input);
  check_broadcastable(op, "pos_weight", pos_weight, input);
  // log(1 + exp(-x)) = m + log(exp(-m) + exp(-x - m)) for any m; with m = max(-x, 0)
  // both exponents are <= 0, so nothing overflows. The value does not depend on m, so m
  // is computed off the graph (from x.detach()): the gradient is then exactly -σ(-x),
  // with no spurious terms from max()'s kink at 0.
  Tensor m = (-input.detach()).clamp_min(0);
  Tensor softplus_neg = m + ((-m).exp() + (-input - m).exp()).log();
  Tensor log_weight =
      pos_weight.defined() ? (1 + (pos_weight - 1) * target) * softplus_neg : softplus_neg;
  Tensor losses = (1 - target) * input + log_weight;
  if (weight.defined()) losses = losses * weight;
  return reduce(losses, reduction);
}

}  // namespace glass::nn::functional
