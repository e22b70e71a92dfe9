// compiler/joint_graph.h — a compiled function's backward, traced and fused: AOTAutograd's
// joint graph, small.
//
// A variant that runs as one autograd node (autograd_node.h) saves its inputs (and the
// matrix products below), so its backward first recomputes the forward, then runs each op's
// backward formula. Traced
// together — the forward replayed with grad on from the saved inputs, then autograd::grad,
// all with the trace on — they are one graph from (saved inputs, output gradients) to input
// gradients: the joint graph. Its forward ops and the formulas' ops are mostly elementwise,
// so fusion turns the pair into a few kernels, and the recomputed forward costs no memory
// traffic beyond reading the saved inputs again (Inductor's partitioner recomputes pointwise
// ops for the same reason).
//
// A matrix product is not worth recomputing: it costs as much as its gradient. So the
// forward keeps what each mm/bmm/addmm made that another op reads (saved_values():
// AOTAutograd's partitioner saves the same), the joint graph reads it as an input in place of
// the product replayed while tracing, and dead-code elimination drops that replay
// (BackwardInfo::saved counts the products a backward reads). A product written in place
// after the forward is not read: a call whose kind reads it replays instead (never an error
// eager mode would not raise, since eager may not have needed it); a kind first met on such
// a call is traced all the same. Products are kept until the backward whether a kind reads
// them or not (memory eager mode might not spend), so that a later kind (another set of
// wanted gradients, say) never has to multiply again.
//
// Invariant: a traced backward runs only for a call like the one it was traced on — the same
// wanted inputs, output gradients with the same metadata and aliasing (the saved products'
// layouts the variant's guards fix, and run() checks them anyway) — and only when every
// tensor the joint graph reads is a saved input, a saved product, an output gradient, a
// tensor the forward graph itself reads live, or a number. Anything else (a formula that built a
// tensor outside the ops, which a trace would freeze) makes that backward replay the graph instead.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/graph.h"

namespace glass::compiler {

// Why `joint` reads a tensor that is no input (saved input, saved product, output gradient), no
// tensor the forward graph reads live, and no number: one a backward formula built outside the ops,
// which the graph would read as it was at the trace. "" when there is none.
std::string unexplained_tensor(const Graph& joint, const Graph& forward);

// mm, bmm, addmm: a node whose result the partitioner keeps rather than recomputes.
bool is_matrix_product(const Node& n);

class BackwardCache {
 public:
  // `forward`: the variant's optimised graph. `limit`: kinds of backward traced before
  // further kinds replay (the function's recompile limit).
  BackwardCache(std::shared_ptr<const Graph> forward, int limit, std::string name);
  ~BackwardCache();

  // The forward values the backward may read from the forward, which the forward keeps:
  // each matrix product's result that another op reads.
  const std::vector<int>& saved_values() const { return saved_values_; }

  // The gradients of `leaves` (the saved inputs; `leaf_values[i]` is the forward graph's
  // value leaf i stands for) that `needs` asks for, given the output gradients `grads`
  // (undefined where an output got none) and `saved`, this call's tensor of each
  // saved_values() (undefined where it was written since the forward). The first call of a
  // kind traces the joint graph and compiles it; later ones run it. nullopt: replay the graph
  // instead — inside another trace, in anomaly mode, past the limit, for a product the kind
  // reads missing, or for a kind that could not be traced or built (BackwardInfo::replayed
  // says why).
  std::optional<std::vector<Tensor>> run(const std::vector<Tensor>& leaves,
                                         const std::vector<int>& leaf_values,
                                         const std::vector<bool>& needs,
                                         const std::vector<Tensor>& grads,
                                         const std::vector<Tensor>& saved);

  std::vector<BackwardInfo> info() const;

 private:
  struct Entry;
  std::shared_ptr<const Entry> find_locked(const std::vector<bool>& needs,
                                           const std::vector<Tensor>& grads,
                                           const std::vector<int>& aliases) const;
  // Traces, checks, optimises and compiles one kind; also this call's gradients (computed by
  // the trace as it ran), or nullopt when the trace itself failed.
  std::pair<std::shared_ptr<Entry>, std::optional<std::vector<Tensor>>> trace_entry(
      const std::vector<Tensor>& leaves, const std::vector<int>& leaf_values,
      const std::vector<bool>& needs, const std::vector<Tensor>& grads,
      const std::vector<Tensor>& saved) const;

  std::shared_ptr<const Graph> forward_;
  std::vector<int> saved_values_;
  int limit_;
  std::string name_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const Entry>> entries_;
};

}  // namespace glass::compiler
