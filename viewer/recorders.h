// viewer/recorders.h — watching a graph while it runs: gradients in backward, ops in forward.
//
// A snapshot (snapshot.h) reads a graph that already exists. Two things exist only while
// code runs, so they are recorded then:
//
//   GradientRecorder  hooks every node of a graph; during backward each hook measures the
//                     gradient arriving at its node (norm, max |g|, NaN/Inf counts) and
//                     leaves it unchanged.
//   ForwardRecorder   listens on core's events (core/events.h) while a forward runs: every
//                     op dispatched, and every graph node as it is created — including the
//                     nodes the result will not depend on, which no backward graph holds —
//                     with the module whose forward was running then (nn's module scopes).
//
//   viz::ForwardRecorder rec;                 // listens from here...
//   Tensor loss = F::cross_entropy(model(x), y);
//   rec.stop();                               // ...to here
//   viz::Snapshot fwd = rec.snapshot(loss, {.module = model.get()});
//   viz::GradientRecorder grads(loss);
//   loss.backward();
//   grads.apply_to(fwd);                      // per-node gradient statistics
//
// Both record on the thread that created them and are cheap when idle: the hooks do
// nothing once the recorder is gone, and events cost nothing when nobody listens.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "core/tensor.h"
#include "viewer/snapshot.h"

namespace glass::viz {

class GradientRecorder {
 public:
  // Adds a pre-hook to every node of root's graph (grad_fns and the leaves' accumulators).
  explicit GradientRecorder(const Tensor& root);
  // Autograd cannot remove hooks; they stay on the nodes (which die with the graph) but
  // record nothing once the recorder is destroyed.
  ~GradientRecorder();
  GradientRecorder(const GradientRecorder&) = delete;
  GradientRecorder& operator=(const GradientRecorder&) = delete;

  // What the node with this sequence number received in the last backward: the gradients
  // of all its outputs taken together (norms combine as sqrt of the sum of squares).
  std::optional<GradStats> find(uint64_t sequence_nr) const;
  // Sets GraphNode::grad on every node of `s` that received a gradient.
  void apply_to(Snapshot& s) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// snapshot(root, options) with gradients: takes the snapshot (saved tensors are still
// there), then runs root.backward() under a GradientRecorder and fills in the statistics.
// root must have one element (a loss), as for root.backward().
Snapshot snapshot_with_gradients(const Tensor& root, const SnapshotOptions& options = {},
                                 bool retain_graph = false);

class ForwardRecorder {
 public:
  ForwardRecorder();  // subscribes to core's events; records this thread only
  ~ForwardRecorder();
  ForwardRecorder(const ForwardRecorder&) = delete;
  ForwardRecorder& operator=(const ForwardRecorder&) = delete;

  // Stops listening (also done by the destructor). Idempotent.
  void stop();

  // The forward graph recorded so far (GraphKind::Forward): the nodes in creation order,
  // each op dispatched (Snapshot::ops), and the leaves they read. `output`, when given,
  // becomes the root, and nodes it does not depend on are marked unreachable. The
  // snapshot shows each node as it was created (saved tensors' versions then). With
  // options.module, a node created inside a module's forward scope belongs to that module
  // exactly (the innermost one in options.module's tree); the rest are inferred
  // (assign_modules, modules.h).
  Snapshot snapshot(const Tensor& output = Tensor(), const SnapshotOptions& options = {}) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  int subscription_ = -1;
};

}  // namespace glass::viz
