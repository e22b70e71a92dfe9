// autograd/inplace_functions.cpp — in-place ops on tensors that take part in a graph.
//
// Note [In-place ops in a graph]
// An in-place op changes a tensor that may already be in a graph. The graph stays right if
// the op becomes the tensor's new grad_fn, with an edge to the tensor's old history
// ("rebasing"): a gradient reaching the tensor after the op flows through the op's formula
// into what the tensor was before. Formulas that need the old value get a copy taken before
// the write (PyTorch's "original self"); anything else that saved the tensor fails the
// version check at backward time, as it must, since that value is gone.
// Three writes are refused, each with an error that says what to do instead:
//  - into a leaf that requires grad (its .grad() would no longer match its value);
//  - through a view of a tensor in a graph: the base's history would have to change too
//    (PyTorch's CopySlices), which glasstorch does not implement;
//  - into a tensor that does not require grad but shares its storage with another tensor
//    (a view of it, or its base), when the written value requires grad: the other tensor
//    would silently miss the gradient.
// Core's checks (shapes, dtypes, overlap) run first, in the op itself, before any
// bookkeeping here changes state.
//
// [SECTION] the checks   [SECTION] in-place-only ops   [SECTION] registration
#include "autograd/formula.h"
#include "autograd/functions.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/indexing.h"
#include "core/ops/pointwise.h"
#include "core/ops/random.h"
#include "core/print.h"

namespace glass::autograd {

// [SECTION] the checks ------------------------------------------------------------------------

Tensor prepare_inplace(const Tensor& self, const std::string& op, bool keep_old_value) {
  AutogradMeta* m = get_meta(self);
  const bool tracked = GradMode::is_enabled();  // forward mode alone needs no graph checks
  if (tracked && self.requires_grad()) {
    GLASS_CHECK(m && m->grad_fn, op,
                "(): a leaf tensor that requires grad is being used in an in-place operation. "
                "Wrap the update in glass::NoGradGuard (as optimizers do), or clone() it.");
    if (m->view_base.defined()) {
      const Tensor& base = m->view_base;
      GLASS_CHECK(!(base.requires_grad() && base.is_leaf()), op,
                  "(): a view of a leaf tensor that requires grad is being used in an in-place "
                  "operation (the view has shape ",
                  self.sizes(), ", the leaf ", base.sizes(),
                  "). Modify the leaf under glass::NoGradGuard, or clone() the view first.");
      detail::throw_error(detail::str_cat(
          op, "(): in-place write through a view (shape ", self.sizes(),
          ") of a tensor that takes part in an autograd graph (shape ", base.sizes(), ", grad_fn ",
          base.grad_fn() ? base.grad_fn()->name() : std::string("none"),
          "). glasstorch's autograd does not rewrite the base's history for this "
          "(PyTorch's CopySlices); clone() the view first, or build the result out of place "
          "(cat, stack, where)."));
    }
    for (const auto& view : m->views) {
      GLASS_CHECK(view.expired(), op, "(): the tensor (shape ", self.sizes(),
                  ") has live views that are part of the autograd graph; writing it in place "
                  "would leave their history stale. Use the out-of-place op, or clone() first.");
    }
  } else if (tracked && self.unsafeGetTensorImpl()->storage().use_count() > 1) {
    detail::throw_error(detail::str_cat(
        op, "(): writing a value that requires grad into a tensor (shape ", self.sizes(),
        ") that shares its storage with another tensor (a view of it, or its base), which "
        "does not track gradients: that tensor would silently miss the gradient. Build the "
        "result out of place (cat, stack, where), or clone() the target first."));
  }

  Tensor old;
  {
    NoGradGuard no_grad;
    old = keep_old_value ? self.detach().clone() : self.detach();
  }
  if (m && m->grad_fn) set_history(old, m->grad_fn, m->output_nr);
  Tensor tangent = tangent_of(self);
  if (tangent.defined()) set_tangent(old, tangent);
  return old;
}

namespace {

using F = FormulaNode;
constexpr DispatchKey K = DispatchKey::Autograd;
Tensor zeros_tangent(const F&, const JvpArgs& j) { return zeros_like(j.out); }

// [SECTION] in-place-only ops ---------------------------------------------------------------

Tensor& masked_fill_autograd(Tensor& self, const Tensor& mask, const Scalar& value) {
  Tensor old = prepare_inplace(self, "masked_fill_", false);
  ops::masked_fill_.redispatch(K, self, mask, value);
  record(
      "MaskedFillBackward0", {old, mask}, self, {{mask}},
      [](const F& n, const Tensor& g) -> tensor_list { return {where(n.get(0), 0.0, g)}; },
      [](const F& n, const JvpArgs& j) { return where(n.get(0), 0.0, j.tangent_or_zeros(0)); });
  return self;
}

// The old value is overwritten entirely: it gets no gradient, the source gets all of it
// (on the source's own device and in its dtype: FormulaNode puts it back there).
Tensor& copy_autograd(Tensor& self, const Tensor& src, bool non_blocking) {
  Tensor old = prepare_inplace(self, "copy_", false);
  ops::copy_.redispatch(K, self, src, non_blocking);
  record(
      "CopyBackwards", {old, src}, self, {},
      [](const F&, const Tensor& g) -> tensor_list {
        return {zeros_like(g), g};
      },
      [](const F&, const JvpArgs& j) { return j.tangent_or_zeros(1); });
  return self;
}

Tensor& fill_autograd(Tensor& self, const Scalar& value) {
  Tensor old = prepare_inplace(self, "fill_", false);
  ops::fill_.redispatch(K, self, value);
  record(
      "FillBackward0", {old}, self, {},
      [](const F&, const Tensor& g) -> tensor_list { return {zeros_like(g)}; }, zeros_tangent);
  return self;
}

// self[indices] = values (or += with accumulate): the written places pass no gradient to
// the old value unless accumulating; values get the gradient of the places they went to
// (summed back to their shape where they were broadcast, Note [sum_to]).
// ints = {accumulate}; saved = the index tensors.
Tensor& index_put_autograd(Tensor& self, TensorList indices, const Tensor& values,
                           bool accumulate) {
  Tensor old = prepare_inplace(self, "index_put_", false);
  ops::index_put_.redispatch(K, self, indices, values, accumulate);
  record(
      "IndexPutBackward0", {old, values}, self, saves_of(indices),
      [](const F& n, const Tensor& g) -> tensor_list {
        std::vector<Tensor> idx = n.get_all();
        Tensor g_self;
        if (n.needs(0)) {
          g_self = n.ints[0] ? g : g.clone();
          if (!n.ints[0]) g_self.index_put_(idx, zeros({}, g.options()));
        }
        return {g_self, n.needs(1) ? g.index(idx) : Tensor()};
      },
      [](const F& n, const JvpArgs& j) {
        Tensor t = j.tangent_or_zeros(0).clone();
        t.index_put_(n.get_all(), j.tangent_or_zeros(1), n.ints[0] != 0);
        return t;
      },
      [&](F& n) { n.ints = {accumulate}; });
  return self;
}

// self.scatter_add_(dim, index, src): self passes its gradient through; src[i] went to the
// place index names, so it gets that place's gradient (a gather).
Tensor& scatter_add_autograd(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor old = prepare_inplace(self, "scatter_add_", false);
  ops::scatter_add_.redispatch(K, self, dim, index, src);
  record(
      "ScatterAddBackward0", {old, src}, self, {{index}},
      [](const F& n, const Tensor& g) -> tensor_list {
        return {g, n.needs(1) ? g.gather(n.ints[0], n.get(0)) : Tensor()};
      },
      [](const F& n, const JvpArgs& j) {
        return j.tangent_or_zeros(0).scatter_add(n.ints[0], n.get(0), j.tangent_or_zeros(1));
      },
      [&](F& n) { n.ints = {dim < 0 ? dim + self.dim() : dim}; });
  return self;
}

// Random fills replace the value with one that does not depend on the old value.
template <Op<ops::RandomFillSig>& Fill>
Tensor& random_fill_autograd(Tensor& self, double a, double b, std::optional<Generator> gen) {
  const char* name = &Fill == &ops::uniform_ ? "UniformBackward0" : "NormalBackward0";
  Tensor old = prepare_inplace(self, Fill.name(), false);
  Fill.redispatch(K, self, a, b, std::move(gen));
  record(
      name, {old}, self, {},
      [](const F&, const Tensor& g) -> tensor_list { return {zeros_like(g)}; }, zeros_tangent);
  return self;
}

}  // namespace

// [SECTION] registration --------------------------------------------------------------------

void register_inplace_handlers() {
  ops::masked_fill_.register_handler(K, &masked_fill_autograd);
  ops::copy_.register_handler(K, &copy_autograd);
  ops::fill_.register_handler(K, &fill_autograd);
  ops::index_put_.register_handler(K, &index_put_autograd);
  ops::scatter_add_.register_handler(K, &scatter_add_autograd);
  ops::uniform_.register_handler(K, &random_fill_autograd<ops::uniform_>);
  ops::normal_.register_handler(K, &random_fill_autograd<ops::normal_>);
}

}  // namespace glass::autograd
