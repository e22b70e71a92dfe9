// distributed/fsdp.h — FSDP, the third rung of issue 12's ladder: the parameters are sharded
// too, and gathered only while a unit runs (FSDP2's per-parameter design, fully_shard).
//
//   for (auto& layer : model->layers) fully_shard(layer);  // one unit per layer...
//   fully_shard(model);                                   // ...then the root (the rest)
//   optim::Adam adam(model->parameters(), ...);           // the local shards: state 1/N
//   for (...) {
//     adam.zero_grad();
//     loss_fn(model(x_local), y_local).backward();        // gathers, frees, reduce-scatters
//     adam.step();                                        // steps the local shards
//   }
//
// A unit is the module fully_shard was called on, owning its parameters that no unit below
// it owns. Each of them is cut along dim 0 into N blocks of ceil(d0 / N) rows; rank r keeps
// block r, whose rows past d0 are zero padding that never reaches the user. The module's
// parameter tensors stay the same objects (the model, the optimizer and autograd hold them):
// between uses each one is (Tensor::set_data) this rank's real rows — what parameters()
// gives the optimizer. Before the unit's forward, its parameters are all-gathered into a
// storage of the whole (padded) parameter and the tensors re-pointed at it; after forward
// they return to their rows and that storage drops its bytes (Storage::drop_bytes: the
// storage stays, so the tensors autograd saved in forward are valid again once it is
// refilled). When the gradients of the unit's outputs arrive in backward (a full backward
// pre-hook), the parameters are gathered again; when backward has produced all their
// gradients (post-accumulate-grad hooks), each is reduce-scattered (averaged) into the
// gradient of this rank's rows, and the whole gradients and parameters are freed.
//
// Model state per rank in float32, Ψ parameters: 16Ψ/N (rows, their gradients, Adam's
// moments), plus one gathered unit at a time (and its gradients, during its backward).
//
// Prefetch (each switchable per unit): a unit's forward can start the all-gather of the unit
// that ran after it in the first forward, and its backward that of the unit that ran before
// it, so the gather overlaps this unit's compute (two units gathered at once, at most).
//
// A parameter that does not require grad is sharded and gathered like the others, and never
// reduced. Every rank must produce gradients for the same parameters in each backward (a
// unit reduces when its last gradient arrives, or at the end of backward for one that got
// none — zeros then; ranks that disagree would issue collectives in different orders).
//
// Invariants: outside a unit's forward and backward its parameters are this rank's rows
// (a prefetched unit holds its gathered bytes, not yet its tensors' data, until it runs);
// every rank issues the same collectives in the same order (units run — and prefetch — in
// the order the model's forward and backward run them, the same on every rank); each unit
// runs its forward once per backward.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"
#include "nn/module.h"

namespace glass::distributed {

struct FullyShardOptions {
  // Copy rank 0's parameters to every rank before sharding (the ranks then agree however
  // each initialised its model), as FSDP1's sync_module_states.
  bool sync_module_states = true;
  // Start the next unit's all-gather when this unit's forward starts (FSDP1's
  // forward_prefetch; off by default there too: forward rarely waits long).
  bool forward_prefetch = false;
  // Start the all-gather of the unit backward reaches next (the one before this one in
  // forward order) when this unit's backward starts (FSDP's BACKWARD_PRE, the default).
  bool backward_prefetch = true;
};

// One unit's state; fully_shard returns it, and the module's hooks keep it alive.
class FSDPUnit {
 public:
  struct Param {
    std::string name;  // dotted, from the unit's module
    Tensor param;      // the module's tensor: its rows, or the whole while gathered
    DimVector full_sizes;
    int64_t rows = 0;        // per rank, padded: ceil(d0 / N)
    int64_t local_rows = 0;  // this rank's real rows (fewer, even 0, at the end of dim 0)
    Tensor shard;            // [rows, ...]: this rank's block, padding included
    Tensor padded_full;      // [N * rows, ...]: gathered into; bytes only while in use
    Tensor full;             // padded_full's first d0 rows: what forward and backward see
    Tensor stashed_grad;     // the rows' gradient from earlier backwards (accumulation)
    bool got_grad = false;   // this backward has produced its gradient
  };

  // The units of one thread (one rank) in the order their forwards first ran; prefetch
  // reads its neighbours from here.
  struct Order {
    std::vector<FSDPUnit*> units;
  };

  FSDPUnit(nn::Module& module, std::vector<Param> params, std::shared_ptr<ProcessGroup> group,
           FullyShardOptions options, std::shared_ptr<Order> order);
  ~FSDPUnit();

  const std::vector<Param>& params() const { return params_; }
  bool is_gathered() const { return gathered_; }
  // A prefetch has started this unit's all-gather, which its next use will wait for.
  bool is_prefetched() const { return !inflight_.empty(); }
  const std::string& module_name() const { return module_name_; }

  // The hooks' work (public so the hooks can be plain lambdas; not for users).
  void before_forward();
  void gather();   // all-gathers every parameter and points the tensors at the wholes
  void release();  // points the tensors at their rows and frees the wholes
  void before_backward();
  void on_gradient(size_t index);
  void after_backward();  // end of backward: reduces what is still waiting (unused ones)

 private:
  void reduce_gradients();
  void start_gather();                  // restores the wholes' bytes and issues the all-gathers
  FSDPUnit* neighbour(int step) const;  // in forward order: +1 next, -1 previous

  const nn::Module* module_;  // for the registry only: the module owns this unit
  std::string module_name_;
  std::vector<Param> params_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<unsigned> grad_hooks_;
  std::vector<size_t> hooks_of_;  // the parameter each grad hook is on (those requiring grad)
  FullyShardOptions options_;
  std::shared_ptr<Order> order_;
  std::vector<std::shared_ptr<Work>> inflight_;  // a started all-gather not yet waited for
  bool gathered_ = false;
  bool in_backward_ = false;    // gathered for backward, gradients not yet reduced
  bool backward_done_ = false;  // reduced since its last forward: not to be prefetched
  size_t pending_ = 0;          // gradients this backward still has to produce
};

// How an FSDP parameter is cut: its whole shape, and the rows [row_begin, row_begin + rows)
// this rank holds (rows may be 0). Sharded checkpoints read it.
struct RowShard {
  DimVector full_sizes;
  int64_t row_begin = 0;
  int64_t rows = 0;
  int64_t rows_per_rank = 0;  // ceil(d0 / N): rank q holds [q · this, …) up to d0
};
// The cut of `param` if a live unit owns it (the tensor a module holds), else nothing.
std::optional<RowShard> fsdp_row_shard(const Tensor& param);

// Makes `module` a unit: shards the parameters it owns (not those of units below it) and
// hooks its forward and backward. Collective: every rank calls it for the same modules in
// the same order. A parameter whose shape differs across ranks is an error naming it and
// the ranks; so is a 0-dimensional parameter (there is no dim 0 to cut) and a module that is
// a unit already.
std::shared_ptr<FSDPUnit> fully_shard(const std::shared_ptr<nn::Module>& module,
                                      FullyShardOptions options = {},
                                      std::shared_ptr<ProcessGroup> group = nullptr);
template <class Holder>
requires requires(const Holder& h) { h.ptr(); }
std::shared_ptr<FSDPUnit> fully_shard(const Holder& holder, FullyShardOptions options = {},
                                      std::shared_ptr<ProcessGroup> group = nullptr) {
  return fully_shard(std::shared_ptr<nn::Module>(holder.ptr()), options, std::move(group));
}

}  // namespace glass::distributed
