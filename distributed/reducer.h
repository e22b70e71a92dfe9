// distributed/reducer.h — DDP's engine room: gradient buckets all-reduced while backward runs.
//
// PyTorch's Reducer in miniature. Parameters are grouped into buckets (reverse registration
// order at first — roughly the order backward produces gradients — with a small first
// bucket so communication starts early, then rebuilt once in the order gradients really
// arrived). A post-accumulate-grad hook on each parameter copies its gradient, divided by
// the world size, into its bucket; when a bucket is full its all-reduce starts on the
// group's communication thread while backward goes on computing earlier layers' gradients.
// An end-of-backward callback waits for every bucket and writes the averaged gradients back
// to .grad() — or, with gradient_as_bucket_view, makes each .grad() a view of its slot in the
// bucket, so the next backward accumulates straight into the bucket and nothing is copied
// back (PyTorch's option of the same name).
//
// Invariants: buckets start their all-reduce in bucket order on every rank (a bucket that
// fills early waits for the ones before it), so all ranks issue the same collectives in
// the same order; every parameter is marked ready exactly once per synced backward; when
// backward() returns, every parameter's .grad() holds the average over ranks.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "distributed/process_group.h"
#include "distributed/work.h"

namespace glass::distributed {

// Splits parameters into buckets. order: the parameter indices in the order to fill
// buckets; limits: byte caps, the i-th bucket gets limits[min(i, size - 1)] (PyTorch: 1 MB,
// then 25 MB). Parameters of different dtype or device never share a bucket; a parameter
// larger than the cap gets a bucket of its own. Returns parameter indices per bucket.
std::vector<std::vector<size_t>> compute_bucket_assignment_by_size(
    const std::vector<Tensor>& params, const std::vector<size_t>& limits,
    const std::vector<size_t>& order);

// When each bucket's all-reduce started and finished in the last synced backward (seconds
// since that backward's first gradient), and when backward's last node finished.
struct ReducerTimeline {
  struct Bucket {
    double ready = 0;     // its all-reduce was started
    double finished = 0;  // its all-reduce completed (on the communication thread)
    size_t bytes = 0;
  };
  std::vector<Bucket> buckets;
  double backward_done = 0;  // every node had run (the end-of-backward callback began)
  double all_done = 0;       // gradients written back
};

class Reducer {
 public:
  struct Options {
    size_t bucket_cap_bytes = 25u << 20;
    size_t first_bucket_cap_bytes = 1u << 20;
    bool find_unused_parameters = false;
    bool gradient_as_bucket_view = false;
  };

  // params: (name, tensor) pairs, those that require grad. Registers the hooks.
  Reducer(std::vector<std::pair<std::string, Tensor>> params, std::shared_ptr<ProcessGroup> group,
          Options options);
  ~Reducer();  // removes the hooks
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Before forward: rebuilds the buckets once, after the first synced iteration, in the
  // order gradients became ready there (rank 0's order, broadcast, so all ranks agree).
  void prepare_for_forward();
  // After forward, when the coming backward must synchronise: arms the hooks. With
  // find_unused_parameters, `outputs`' graph is searched for the parameters it does not
  // reach; backward's first gradient marks them ready, with what their .grad() then holds
  // (zero after zero_grad()) as this rank's part.
  void prepare_for_backward(const std::vector<Tensor>& outputs);
  // After a forward whose backward must not synchronise (no_sync): the hooks stay idle.
  void disarm() { armed_ = false; }

  const std::vector<std::vector<size_t>>& buckets() const { return bucket_indices_; }
  const std::vector<std::pair<std::string, Tensor>>& parameters() const { return params_; }
  // Parameter indices in the order their gradients arrived in the first synced backward.
  const std::vector<size_t>& ready_order() const { return ready_order_; }
  bool buckets_rebuilt() const { return rebuilt_; }
  ReducerTimeline last_timeline() const;

 private:
  struct Bucket {
    std::vector<size_t> params;  // indices into params_
    std::vector<int64_t> offsets;
    Tensor flat;         // the gradients, side by side; what is all-reduced
    Tensor divisor;      // the world size, a 0-dim tensor of flat's dtype
    size_t pending = 0;  // parameters not yet ready in this backward
    std::shared_ptr<Work> work;
  };

  void build_buckets(const std::vector<std::vector<size_t>>& assignment);
  void mark_ready(size_t index);
  // Puts parameter `index`'s gradient (zero if it has none), divided by the world size, into
  // its slot; with gradient_as_bucket_view and `rebind`, its .grad() is that slot from then on.
  void fill_slot(size_t index, bool rebind = true);
  Tensor slot_of(size_t index) const;
  void launch_ready_buckets();
  void finalize_backward();
  double seconds_since_start() const;

  std::vector<std::pair<std::string, Tensor>> params_;
  std::shared_ptr<ProcessGroup> group_;
  Options options_;
  std::vector<unsigned> hook_ids_;

  std::vector<std::vector<size_t>> bucket_indices_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // parameter -> bucket
  std::vector<size_t> slot_of_;    // parameter -> position in its bucket
  std::vector<bool> ready_;
  std::vector<size_t> unused_;  // found unused after forward, marked ready at the first gradient
  Tensor local_used_;       // find_unused_parameters: int32, 1 = got a gradient since the last sync
  size_t next_bucket_ = 0;  // the first bucket whose all-reduce has not started
  bool armed_ = false;      // hooks act (a synced backward is expected)
  bool callback_queued_ = false;
  size_t iterations_ = 0;            // synced backward passes finished
  std::vector<size_t> ready_order_;  // recorded in the first synced backward
  bool rebuilt_ = false;

  std::chrono::steady_clock::time_point start_;
  mutable std::mutex timeline_mutex_;  // the communication thread stamps `finished`
  ReducerTimeline timeline_;
};

}  // namespace glass::distributed
