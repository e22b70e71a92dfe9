// autograd/formula.h — FormulaNode and record(): how an op's handler joins the graph.
//
// Internal to autograd/ (not installed for users to build on). A handler runs the op
// below the Autograd key, then record()s a FormulaNode: its name (PyTorch's), the inputs'
// edges, shapes and dtypes, what it saves, its backward formula (grad_output -> one
// gradient per input, written with differentiable ops) and its forward-mode rule (input
// tangents -> the output's tangent). FormulaNode::apply reduces each gradient to its
// input's shape (broadcasting in forward is summing in backward, Note [sum_to]), casts it
// to the input's dtype and moves it to the input's device (a 0-dim CPU input of a CUDA op
// gets a CPU gradient), so the formulas stay one line each.
//
// record() does the reverse-mode part only when grad mode is on and an input requires
// grad, and the forward-mode part only when an input carries a tangent (forward_ad.h);
// the dispatcher calls the handler when either holds.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "autograd/saved_variable.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace glass::autograd {

// Note [sum_to]: the gradient of an input that was broadcast from `shape`.
Tensor sum_to(const Tensor& g, IntArrayRef shape);

class FormulaNode;

// Forward-mode rule: the output's tangent from the inputs' tangents (undefined = zero),
// given the primal inputs and output. Linear in the tangents.
struct JvpArgs {
  TensorList inputs;
  const Tensor& out;
  const std::vector<Tensor>& tangents;
  // Input i's tangent, or zeros of its shape when it has none (for rules that need a
  // tensor either way, such as cat's or an in-place write's).
  Tensor tangent_or_zeros(size_t i) const;
};
using Jvp = Tensor (*)(const FormulaNode& n, const JvpArgs& a);

// For elementwise unary ops the Jacobian is diagonal, so the backward formula applied to
// the tangent is the forward-mode rule (J v = Jᵀ v). record() treats this marker so.
Tensor unary_jvp(const FormulaNode& n, const JvpArgs& a);

class FormulaNode : public Node {
 public:
  using Formula = tensor_list (*)(const FormulaNode& n, const Tensor& grad);
  FormulaNode(const char* name, Formula f) : name_(name), formula_(f) {}

  std::string name() const override { return name_; }
  tensor_list apply(tensor_list&& grads) override;
  void release_variables() override {
    for (SavedVariable& s : saved) s.reset();
  }
  std::vector<SavedTensorInfo> saved_tensors() const override {
    std::vector<SavedTensorInfo> out;
    for (const SavedVariable& s : saved) out.push_back(s.info());
    return out;
  }
  tensor_list formula(const Tensor& grad) const { return formula_(*this, grad); }

  // Saved tensor i, checked against in-place modification (saved_variable.h).
  Tensor get(size_t i) const;
  // Every saved tensor, in save order (the index list of index / index_put_).
  std::vector<Tensor> get_all() const;
  bool needs(size_t i) const { return next_edges()[i].is_valid(); }

  std::vector<SavedVariable> saved;
  std::vector<DimVector> shapes;   // each input's shape
  std::vector<ScalarType> dtypes;  // each input's dtype
  std::vector<Device> devices;     // each input's device
  std::vector<int64_t> ints;       // dims, sizes, ... the formula needs
  std::vector<Scalar> scalars;     // alpha, bounds, ...

 private:
  const char* name_;
  Formula formula_;
};

// A tensor a formula needs later; outputs of the op itself are saved without their
// grad_fn (saved_variable.h).
struct Save {
  Tensor tensor;
  bool is_output = false;
};
constexpr bool kOutput = true;
// One Save per tensor of a runtime list (the indices of index / index_put_).
std::vector<Save> saves_of(TensorList tensors);

// Fills a node's ints/scalars; runs before the forward-mode rule, which may read them.
using Configure = std::function<void(FormulaNode&)>;

// Creates the node for `out` = op(inputs), wires its edges, saves what the formula needs
// and makes the node out's grad_fn (reverse mode); sets out's tangent with `jvp` when an
// input has one (forward mode). An op with no forward-mode rule (jvp null) refuses dual
// inputs with a clear error.
FormulaNode& record(const char* name, TensorList inputs, const Tensor& out,
                    const std::vector<Save>& saved, FormulaNode::Formula f, Jvp jvp = nullptr,
                    const Configure& configure = nullptr);

// The tangent of t, or an undefined tensor; attaching one (forward_ad.cpp).
Tensor tangent_of(const Tensor& t);
void set_tangent(const Tensor& t, const Tensor& tangent);

// In-place ops, Note [In-place ops in a graph] (inplace_functions.cpp). Checks that `self`
// may be written in place by `op` with autograd on, then returns the tensor that stands for
// self's value before the write in the graph: a copy when the op's formula reads that value
// (keep_old_value), else an alias; either carries self's history and tangent. After the
// write, the handler records its node with this stand-in as input and self as output,
// which moves self onto the new node.
Tensor prepare_inplace(const Tensor& self, const std::string& op, bool keep_old_value);

// Registration, one function per file of formulas.
void register_elementwise_handlers();
void register_reduction_handlers();
void register_view_handlers();
void register_inplace_handlers();

}  // namespace glass::autograd
