// autograd/formula.cpp — FormulaNode::apply and record(): the part every formula shares.
#include "autograd/formula.h"

#include <string>

#include "autograd/anomaly_mode.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/events.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/reduce.h"
#include "core/print.h"

namespace glass::autograd {

using detail::str_cat;

// Note [sum_to]
// If x was broadcast from shape S to the output's shape, every copy of an element of x
// contributed to the output, so its gradient is the sum over the copies: sum over the
// leading dims that broadcasting added, and over the dims where S has size 1.
Tensor sum_to(const Tensor& g, IntArrayRef shape) {
  int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  Shape dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  Tensor r = dims.empty() ? g : g.sum(dims);
  Shape keep;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] == 1 && r.size(static_cast<int64_t>(d)) != 1)
      keep.push_back(static_cast<int64_t>(d));
  if (!keep.empty()) r = r.sum(keep, true);
  return r.sizes() == shape ? r : r.reshape(shape);
}

tensor_list FormulaNode::apply(tensor_list&& grads) {
  tensor_list out(next_edges().size());
  if (grads.empty() || !grads[0].defined()) return out;
  tensor_list g = formula_(*this, grads[0]);
  for (size_t i = 0; i < out.size() && i < g.size(); ++i) {
    if (!g[i].defined() || !needs(i)) continue;
    Tensor gi = g[i].sizes() == IntArrayRef(shapes[i]) ? g[i] : sum_to(g[i], shapes[i]);
    bool in_place = gi.dtype() == dtypes[i] && gi.device() == devices[i];
    out[i] = in_place ? gi : gi.to(devices[i], dtypes[i]);
  }
  return out;
}

Tensor FormulaNode::get(size_t i) const {
  auto self = std::const_pointer_cast<Node>(shared_from_this());
  return saved[i].unpack(self);
}

std::vector<Tensor> FormulaNode::get_all() const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < saved.size(); ++i) out.push_back(get(i));
  return out;
}

std::vector<Save> saves_of(TensorList tensors) {
  std::vector<Save> out;
  for (const Tensor& t : tensors) out.push_back({t});
  return out;
}

Tensor JvpArgs::tangent_or_zeros(size_t i) const {
  return tangents[i].defined() ? tangents[i] : zeros_like(inputs[i]);
}

Tensor unary_jvp(const FormulaNode& n, const JvpArgs& a) { return n.formula(a.tangents[0])[0]; }

namespace {

// The forward-mode rule's result, shaped, typed and placed like the output it belongs to.
Tensor fit_tangent(Tensor t, const Tensor& out) {
  if (t.sizes() != out.sizes()) t = t.expand(out.sizes());
  if (t.dtype() != out.dtype() || t.device() != out.device()) t = t.to(out.device(), out.dtype());
  return t;
}

// While a forward-mode rule runs, its own ops (on primals that are duals) must not
// compute tangents of tangents: forward mode here is first order.
thread_local bool computing_tangent = false;

}  // namespace

FormulaNode& record(const char* name, TensorList inputs, const Tensor& out,
                    const std::vector<Save>& saved, FormulaNode::Formula f, Jvp jvp,
                    const Configure& configure) {
  bool reverse = GradMode::is_enabled(), forward = false;
  bool any_requires_grad = false;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    any_requires_grad |= t.requires_grad();
    forward |= t.unsafeGetTensorImpl()->has_forward_grad();
  }
  reverse &= any_requires_grad;
  forward &= !computing_tangent;

  auto node = std::make_shared<FormulaNode>(name, f);
  for (const Tensor& t : inputs) {
    node->add_next_edge(reverse ? gradient_edge(t) : Edge{});
    node->shapes.emplace_back(t.defined() ? t.sizes() : IntArrayRef());
    node->dtypes.push_back(t.defined() ? t.dtype() : ScalarType::Undefined);
    node->devices.push_back(t.defined() ? t.device() : Device(kCPU));
  }
  for (const Save& sv : saved) node->saved.emplace_back(sv.tensor, sv.is_output, reverse);
  if (configure) configure(*node);

  if (forward) {
    GLASS_CHECK(jvp != nullptr, "forward-mode AD: ", name,
                " has no forward-mode (JVP) rule yet, and an input is a dual tensor. "
                "Compute this part with reverse mode (backward / autograd::grad).");
    std::vector<Tensor> tangents;
    for (const Tensor& t : inputs) tangents.push_back(tangent_of(t));
    computing_tangent = true;
    Tensor t;
    try {
      t = jvp(*node, {inputs, out, tangents});
    } catch (...) {
      computing_tangent = false;
      throw;
    }
    computing_tangent = false;
    // The output of an in-place op keeps its identity but its tangent is new.
    if (t.defined()) set_tangent(out, fit_tangent(t, out));
  }
  if (!reverse) return *node;

  if (AnomalyMode::is_enabled()) {
    std::string trace = std::string("the forward op that created ") + name + " ran on inputs";
    for (const Tensor& t : inputs)
      if (t.defined()) trace += str_cat(" [", to_string(t.dtype()), " ", t.sizes(), "]");
    node->set_forward_trace(
        trace + str_cat(" and returned [", to_string(out.dtype()), " ", out.sizes(), "]"));
  }
  set_history(out, node);
  if (events::enabled())
    events::publish({.kind = events::Kind::GraphNodeCreated, .name = name, .ptr = node.get()});
  return *node;
}

}  // namespace glass::autograd
